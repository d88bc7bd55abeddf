package engine

import (
	"testing"

	"github.com/mnemo-mcp/mnemo/memory"
	"github.com/mnemo-mcp/mnemo/memory/recall"
)

func TestSpeakerOf(t *testing.T) {
	tests := []struct {
		side, want string
	}{
		{"Caroline: I went hiking", "carolin"},
		{"Jean-Luc: two terms are no name", ""},
		{"Émile: accents folded, stemmed", "emil"},
		{"caroline: lower case is no name", ""},
		{"No colon here", ""},
		{": empty name", ""},
		{"Fahim Khan: a given name and a family name", "fahim"},
		{"Mary Ann Lee: three words", "mari"},
		{"Anna Maria Lee Smith: four words are no name", ""},
		{"Fahim khan: every word capitalised", ""},
		{"Fahim  Khan: one space between words", ""},
		{"Note 3: digits are no name", ""},
		{"The: a stop word analyses to nothing", ""},
		{"Averyveryveryveryveryveryveryveryverylongname: too long", ""},
		{"", ""},
	}
	for _, tc := range tests {
		if got := recall.SpeakerOf(tc.side); got != tc.want {
			t.Errorf("speakerOf(%q) = %q, want %q", tc.side, got, tc.want)
		}
	}
}

func TestRankNamedSpeaker(t *testing.T) {
	tests := []struct {
		name  string
		pairs [][2]string
		query string
		first string // user text of the best page
	}{
		{
			name: "the named speaker's words come first",
			pairs: [][2]string{
				{"John: How was your weekend?", "Maria: I went surfing and hiking at the coast"},
				{"John: I went surfing this weekend", "Maria: Nice"},
			},
			query: "What did John do, surfing?",
			first: "John: I went surfing this weekend",
		},
		{
			name: "the other speaker named, the other page",
			pairs: [][2]string{
				{"John: How was your weekend?", "Maria: I went surfing at the coast"},
				{"John: I went surfing this weekend and loved it", "Maria: Nice"},
			},
			query: "Did Maria go surfing?",
			first: "John: How was your weekend?",
		},
		{
			name: "a speaker of two words named by the given name",
			pairs: [][2]string{
				{"Fahim Khan: How was your weekend?", "Maria: I went surfing and hiking at the coast"},
				{"Fahim Khan: I went surfing this weekend", "Maria: Nice"},
			},
			query: "What did Fahim do, surfing?",
			first: "Fahim Khan: I went surfing this weekend",
		},
		{
			name: "no speaker named, plain ranking",
			pairs: [][2]string{
				{"How was your weekend?", "I went surfing at the coast"},
				{"I went surfing this weekend, surfing all day", "Nice"},
			},
			query: "Who went surfing at the coast?",
			first: "How was your weekend?",
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := newTestService(t, newMemStore(), memory.DefaultConfig())
			for i, p := range tc.pairs {
				// Separate threads: no sitting neighbours.
				addPair(t, s, string(rune('a'+i)), p[0], p[1])
			}
			res, err := s.Retrieve(t.Context(), memory.RetrieveRequest{Query: tc.query, MaxResults: 10})
			if err != nil {
				t.Fatalf("Retrieve() = %v", err)
			}
			if len(res.Pages) == 0 || res.Pages[0].User != tc.first {
				t.Errorf("Retrieve(%q) pages = %+v, want %q first", tc.query, res.Pages, tc.first)
			}
		})
	}
}
