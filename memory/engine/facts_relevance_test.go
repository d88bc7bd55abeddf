package engine

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/mnemo-mcp/mnemo/memory"
	"github.com/mnemo-mcp/mnemo/memory/recall"
)

// factTopics are ten subjects, each with ten facts a host's model could
// pass with add_memory; no two subjects share a content word.
var factTopics = []struct {
	name  string
	facts []string
}{
	{"cooking", []string{"Cooks risotto with saffron on Sundays", "Bakes sourdough bread every weekend", "Owns a cast iron skillet for searing steak",
		"Dislikes coriander in curries", "Makes pasta dough by hand", "Keeps a jar of homemade pesto", "Roasts vegetables with rosemary",
		"Learned to cook paella in Valencia", "Prefers cooking dinner with olive oil over butter", "Grows basil for cooking on the balcony"}},
	{"database", []string{"Runs PostgreSQL 15 in production", "Replicates the PostgreSQL primary to two standbys", "Vacuums the orders table nightly",
		"Migrated from MySQL to PostgreSQL in 2023", "Uses pgbouncer for connection pooling", "Keeps database backups in object storage",
		"Indexes the invoices table by customer", "Tunes shared_buffers to a quarter of memory", "Tests schema migrations on a staging database",
		"Monitors replication lag with Prometheus"}},
	{"slo", []string{"The checkout SLO is 99.9 percent availability", "Pages the on-call engineer when the error budget burns fast",
		"Reviews SLO dashboards every Monday", "Latency SLO for search is 300 milliseconds at p99", "Error budget policy freezes releases",
		"Alerting uses multiwindow burn rates", "Writes postmortems for every SLO breach", "Tracks availability per region",
		"The login service has a stricter SLO", "Publishes an SLO report to leadership monthly"}},
	{"running", []string{"Runs a marathon every autumn", "Trains with intervals on Tuesdays", "Wears carbon plated racing shoes",
		"Finished the Berlin marathon in 3 hours 20", "Does a long run on Saturday mornings", "Tracks heart rate zones on a watch",
		"Stretches hamstrings after every run", "Had a calf strain from running last spring", "Joins a trail running club", "Eats gels during long runs"}},
	{"family", []string{"Has two daughters named Mia and Lena", "Mia plays the violin", "Lena starts school in September",
		"Married to Jonas since 2015", "Visits grandparents in Graz at Christmas", "Mia is allergic to peanuts", "Lena loves dinosaurs",
		"Jonas works as an architect", "Celebrates Mia's birthday in March", "The daughters share a bedroom"}},
	{"travel", []string{"Flies to Lisbon for the conference in June", "Prefers window seats on flights", "Has a Lufthansa frequent flyer card",
		"Visited Japan on a rail pass", "Books hotels near train stations", "Packs only carry on luggage", "Renewed the passport last year",
		"Wants to visit Patagonia", "Gets jet lag flying east", "Collects postcards from every trip"}},
	{"garden", []string{"Grows tomatoes in raised beds", "Composts kitchen scraps", "Planted an apple tree in the garden",
		"Fights slugs on the lettuce", "Waters the garden with a rain barrel", "Prunes roses in February", "Keeps bees behind the shed",
		"Sows carrots in April", "Mows the lawn on Fridays", "Uses no pesticides in the garden"}},
	{"music", []string{"Plays jazz piano", "Takes saxophone lessons on Thursdays", "Listens to Coltrane records on vinyl",
		"Owns a Yamaha upright piano", "Sings bass in a choir", "Saw Radiohead live in 2017", "Composes ambient music at night",
		"Learns Chopin nocturnes", "Tunes the guitar to drop D", "Collects vintage synthesizers"}},
	{"finance", []string{"Invests in index funds monthly", "Pays the mortgage on the first of the month", "Keeps an emergency fund of six months",
		"Files taxes with an accountant", "Saves for the daughters' university", "Avoids credit card debt", "Tracks spending in a spreadsheet",
		"Holds a pension plan through the employer", "Rebalances the portfolio yearly", "Donates to charity every December"}},
	{"car", []string{"Drives a blue Volvo estate", "Services the car at the dealer in Munich", "Switched to winter tyres in November",
		"Plans to buy an electric car", "Charges nothing at work yet", "Had the windscreen replaced", "Parks in the garage under the office",
		"The Volvo needs new brakes", "Uses the car only at weekends", "Renewed the car insurance in May"}},
}

// addHostFacts stores n facts, cycling through the topics, with one
// exchange per call as a host would pass them.
func addHostFacts(t *testing.T, s *Service, n int) {
	t.Helper()
	var facts []memory.HostFact
	for i := range n {
		topic := factTopics[i%len(factTopics)]
		facts = append(facts, memory.HostFact{Content: topic.facts[(i/len(factTopics))%len(topic.facts)], Category: memory.CategoryContext})
	}
	for start := 0; start < len(facts); start += memory.MaxHostFacts {
		batch := facts[start:min(start+memory.MaxHostFacts, len(facts))]
		res, err := s.Add(t.Context(), memory.AddRequest{ThreadID: "life", UserInput: fmt.Sprintf("Some things about me, part %d.", start), AgentResponse: "Noted.", Facts: batch})
		if err != nil {
			t.Fatalf("Add() = %v", err)
		}
		for _, f := range res.Facts {
			if f.Status != memory.HostFactKept {
				t.Fatalf("fact %q: %s %s, want kept", f.Content, f.Status, f.Reason)
			}
		}
	}
}

// injectedFacts returns the fact lines of an injection text.
func injectedFacts(text string) []string {
	var out []string
	in := false
	for _, l := range strings.Split(text, "\n") {
		switch {
		case l == "## Facts":
			in = true
		case strings.HasPrefix(l, "## "), l == "</memory>":
			in = false
		case in:
			out = append(out, l)
		}
	}
	return out
}

// TestFactsEnterByRelevance stores 40 and 100 host facts across ten
// subjects: a focused question injects the facts of its subject and at
// most a handful of others; an off-topic question injects none.
func TestFactsEnterByRelevance(t *testing.T) {
	tests := []struct {
		n         int
		query     string
		topic     string // "" for an off-topic question
		wantFacts []string
	}{
		{40, "What should I cook for dinner tonight?", "cooking", []string{"Cooks risotto with saffron on Sundays"}},
		{40, "How is our PostgreSQL replication set up?", "database", []string{"Replicates the PostgreSQL primary to two standbys", "Runs PostgreSQL 15 in production"}},
		{40, "What time does the ferry to Tangier leave?", "", nil},
		{100, "When is Mia's violin recital?", "family", []string{"Mia plays the violin"}},
		{100, "Which marathon did I run?", "running", []string{"Runs a marathon every autumn", "Finished the Berlin marathon in 3 hours 20"}},
		{100, "What should I cook for dinner tonight?", "cooking", []string{"Prefers cooking dinner with olive oil over butter", "Grows basil for cooking on the balcony"}},
		{100, "Recommend a good podcast about astronomy", "", nil},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprintf("%d facts/%s", tt.n, tt.query), func(t *testing.T) {
			s := newTestService(t, newMemStore(), memory.DefaultConfig(), WithClock(func() time.Time { return time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC) }))
			addHostFacts(t, s, tt.n)
			res, err := s.Retrieve(t.Context(), memory.RetrieveRequest{Query: tt.query})
			if err != nil {
				t.Fatalf("Retrieve() = %v", err)
			}
			lines := injectedFacts(res.Injection)
			topicOf := make(map[string]string)
			for _, tp := range factTopics {
				for _, f := range tp.facts {
					topicOf[f] = tp.name
				}
			}
			others, found := 0, 0
			for _, l := range lines {
				content := l[strings.Index(l, ") ")+2:]
				if recall.StandingText(content) {
					// A standing fact (an allergy) enters every
					// retrieval, whatever is asked.
					continue
				}
				found++
				if topicOf[content] != tt.topic {
					others++
				}
			}
			if tt.topic == "" && found > 0 {
				t.Errorf("off-topic question injected %d facts that are not standing:\n%s", found, res.Injection)
			}
			if others > 3 {
				t.Errorf("%d facts of other subjects injected, want at most 3:\n%s", others, res.Injection)
			}
			for _, want := range tt.wantFacts {
				if !strings.Contains(res.Injection, ") "+want+"\n") {
					t.Errorf("injection lacks the fact %q:\n%s", want, res.Injection)
				}
			}
		})
	}
}

// TestCoreFactsAlwaysIn checks the always-on core: a correction and a
// behavior fact are injected with an off-topic question, other facts are
// not.
func TestCoreFactsAlwaysIn(t *testing.T) {
	s := newTestService(t, newMemStore(), memory.DefaultConfig())
	addHostFacts(t, s, 20)
	if _, err := s.Add(t.Context(), memory.AddRequest{ThreadID: "life", UserInput: "Keep it short, and it's Lena, not Lina.", AgentResponse: "Noted.", Facts: []memory.HostFact{
		{Content: "Wants answers in three sentences at most", Category: memory.CategoryBehavior},
		{Content: "The younger daughter is Lena", Category: memory.CategoryCorrection, SourceError: "Called her Lina"},
	}}); err != nil {
		t.Fatalf("Add() = %v", err)
	}
	res, err := s.Retrieve(t.Context(), memory.RetrieveRequest{Query: "Recommend a good podcast about astronomy"})
	if err != nil {
		t.Fatalf("Retrieve() = %v", err)
	}
	lines := injectedFacts(res.Injection)
	if len(lines) != 2 || !strings.Contains(res.Injection, "Wants answers in three sentences at most") || !strings.Contains(res.Injection, "The younger daughter is Lena") {
		t.Errorf("injection =\n%s\nwant exactly the behavior fact and the correction", res.Injection)
	}
}

// TestHostFactsDatedAtTheirExchange checks that a fact passed with a dated
// exchange is dated at the exchange (as the injection shows it), and that
// of two facts on one subject the one said earlier is marked earlier even
// when it was stored later.
func TestHostFactsDatedAtTheirExchange(t *testing.T) {
	s := newTestService(t, newMemStore(), memory.DefaultConfig(), WithClock(func() time.Time { return time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC) }))
	add := func(when, user string, f memory.HostFact) {
		t.Helper()
		if _, err := s.Add(t.Context(), memory.AddRequest{ThreadID: "home", Timestamp: when, UserInput: user, AgentResponse: "Noted.", Facts: []memory.HostFact{f}}); err != nil {
			t.Fatalf("Add() = %v", err)
		}
	}
	// Stored in reverse order of when they were said (an import).
	add("2025-09-01T10:00:00Z", "We moved to Lisbon.", memory.HostFact{Content: "The user lives in Lisbon", Category: memory.CategoryContext})
	add("2024-01-15T10:00:00Z", "I live in Munich.", memory.HostFact{Content: "The user lives in Munich", Category: memory.CategoryContext})
	res, err := s.Retrieve(t.Context(), memory.RetrieveRequest{Query: "Where does the user live?"})
	if err != nil {
		t.Fatalf("Retrieve() = %v", err)
	}
	for _, want := range []string{"- (context, 2025-09-01) The user lives in Lisbon", "- (context, 2024-01-15, earlier) The user lives in Munich"} {
		if !strings.Contains(res.Injection, want+"\n") {
			t.Errorf("injection =\n%s\nwant the line %q", res.Injection, want)
		}
	}
}
