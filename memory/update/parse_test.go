package update

import (
	"errors"
	"math"
	"reflect"
	"strings"
	"testing"

	"github.com/mnemo-mcp/mnemo/memory"
)

const cleanReply = `{"user":{"workContext":{"summary":"Backend engineer at Acme.","shouldUpdate":true},"personalContext":{"summary":"","shouldUpdate":false},"topOfMind":{"summary":"Migrating to PostgreSQL 17.","shouldUpdate":true}},"history":{"recentMonths":{"summary":"Moved billing to Go 1.26.","shouldUpdate":true},"earlierContext":{"summary":"","shouldUpdate":false},"longTermBackground":{"summary":"","shouldUpdate":false}},"newFacts":[{"content":"Prefers table-driven tests","category":"preference","confidence":0.95,"sourceError":""},{"content":"Errors are returned, never panicked","category":"correction","confidence":0.97,"sourceError":"Used panic for errors"}],"factsToRemove":["fact_0a1b2c3d"]}`

var cleanUpdate = Update{
	Sections: []SectionUpdate{
		{"workContext", "Backend engineer at Acme."},
		{"topOfMind", "Migrating to PostgreSQL 17."},
		{"recentMonths", "Moved billing to Go 1.26."},
	},
	NewFacts: []NewFact{
		{Content: "Prefers table-driven tests", Category: "preference", Confidence: 0.95},
		{Content: "Errors are returned, never panicked", Category: "correction", Confidence: 0.97, SourceError: "Used panic for errors"},
	},
	FactsToRemove: []string{"fact_0a1b2c3d"},
}

// factsReply wraps newFacts items in an update object.
func factsReply(items string) string { return `{"newFacts":[` + items + `]}` }

func TestParseUpdate(t *testing.T) {
	one := func(content, cat string, conf float64) Update {
		return Update{NewFacts: []NewFact{{Content: content, Category: cat, Confidence: conf}}}
	}
	tests := []struct {
		name      string
		reply     string
		want      Update
		wantNotes []string // substrings, one per expected note, in order
	}{
		{name: "clean", reply: cleanReply, want: cleanUpdate},
		{name: "prose around", reply: "Here is the update:\n" + cleanReply + "\nLet me know if you need more.", want: cleanUpdate},
		{name: "fenced", reply: "```json\n" + cleanReply + "\n```", want: cleanUpdate},
		{name: "indented", reply: "  \n{\n  \"factsToRemove\" : [ \"fact_0a1b2c3d\" ]\n}\n", want: Update{FactsToRemove: []string{"fact_0a1b2c3d"}}},
		{
			name:  "think trace with a draft object",
			reply: `<think>Draft: {"factsToRemove":["fact_11111111"]} and {"a":{</think>` + cleanReply,
			want:  cleanUpdate,
		},
		{
			name:  "thinking trace, upper case",
			reply: "<THINKING>{\"newFacts\":[]}</THINKING>\n```json\n" + cleanReply + "\n```",
			want:  cleanUpdate,
		},
		{
			name:  "trace without an opening tag",
			reply: `The user wants {"factsToRemove":["fact_11111111"]} maybe.</think>` + cleanReply,
			want:  cleanUpdate,
		},
		{
			name:  "first of two objects wins",
			reply: `{"factsToRemove":["fact_22222222"]} and then ` + cleanReply,
			want:  Update{FactsToRemove: []string{"fact_22222222"}},
		},
		{
			name:  "objects without update keys are passed over",
			reply: `Example: {"id": 1, "user": "alice"} {"nested": {"inner": true}} ` + cleanReply,
			want:  cleanUpdate,
		},
		{
			name:  "wrong kind of top-level value is passed over",
			reply: `{"newFacts": "none", "user": {}} ` + `{"factsToRemove":["fact_33333333"]}`,
			want:  Update{FactsToRemove: []string{"fact_33333333"}},
		},
		{
			name:  "wrapped in another object",
			reply: `{"result": ` + cleanReply + `}`,
			want:  cleanUpdate,
		},
		{name: "inside an array", reply: `[` + cleanReply + `]`, want: cleanUpdate},
		{name: "nulls count as absent", reply: `{"user":null,"history":null,"newFacts":null,"factsToRemove":["x"]}`, want: Update{FactsToRemove: []string{"x"}}},
		{name: "empty update", reply: `{"newFacts":[],"factsToRemove":[]}`, want: Update{}},
		{
			name:      "section types",
			reply:     `{"user":{"workContext":{"summary":42,"shouldUpdate":true},"personalContext":{"summary":"Speaks German.","shouldUpdate":"yes"},"topOfMind":"busy"},"history":{"recentMonths":{"summary":"  ","shouldUpdate":true},"earlierContext":{"summary":"Old.","shouldUpdate":false},"longTermBackground":{"summary":"Kept."}}}`,
			wantNotes: []string{"user.workContext: summary is not a string", "user.personalContext: shouldUpdate is not a boolean", "user.topOfMind: not an object", "history.recentMonths: shouldUpdate is true but the summary is empty", "history.longTermBackground: has a summary but no shouldUpdate"},
		},
		{
			name:      "unknown and misplaced sections",
			reply:     `{"user":{"mood":{"summary":"Happy.","shouldUpdate":true},"recentMonths":{"summary":"X.","shouldUpdate":true}},"history":{"longTermBackground":{"summary":"Since 2010.","shouldUpdate":true}}}`,
			want:      Update{Sections: []SectionUpdate{{"longTermBackground", "Since 2010."}}},
			wantNotes: []string{`user."mood": unknown section`, `user."recentMonths": unknown section`},
		},
		{name: "summary trimmed", reply: `{"user":{"topOfMind":{"summary":"  Go.\n","shouldUpdate":true}}}`, want: Update{Sections: []SectionUpdate{{"topOfMind", "Go."}}}},
		{
			name:      "summary too long",
			reply:     `{"user":{"topOfMind":{"summary":"` + strings.Repeat("a", memory.UpdateMaxSummaryRunes+1) + `","shouldUpdate":true}}}`,
			wantNotes: []string{"summary is over"},
		},
		{
			name:      "fact content",
			reply:     factsReply(`{"content":"  Uses Go  ","category":"knowledge","confidence":0.9},{"content":"","category":"goal","confidence":0.9},{"content":7,"category":"goal","confidence":0.9},{"category":"goal","confidence":0.9},"just text",{"content":"` + strings.Repeat("x", memory.UpdateMaxContentRunes+1) + `","category":"goal","confidence":0.9}`),
			want:      one("Uses Go", "knowledge", 0.9),
			wantNotes: []string{"newFacts[1]: content is empty", "newFacts[2]: content is missing or not a string", "newFacts[3]: content is missing", "newFacts[4]: not an object", "newFacts[5]: content is over 2000"},
		},
		{
			name:      "content limit counts characters, not bytes",
			reply:     factsReply(`{"content":"` + strings.Repeat("语", memory.UpdateMaxContentRunes) + `","category":"context","confidence":0.9}`),
			want:      one(strings.Repeat("语", memory.UpdateMaxContentRunes), "context", 0.9),
			wantNotes: nil,
		},
		{
			name: "confidence",
			reply: factsReply(`{"content":"a","category":"goal","confidence":"0.9"},{"content":"b","category":"goal","confidence":1.5},` +
				`{"content":"c","category":"goal","confidence":-0.1},{"content":"d","category":"goal","confidence":1e999},{"content":"e","category":"goal"},` +
				`{"content":"f","category":"goal","confidence":null},{"content":"g","category":"goal","confidence":"NaN"},{"content":"h","category":"goal","confidence":true},` +
				`{"content":"i","category":"goal","confidence":1},{"content":"j","category":"goal","confidence":0},{"content":"k","category":"goal","confidence":-0}`),
			want: Update{NewFacts: []NewFact{{Content: "i", Category: "goal", Confidence: 1}, {Content: "j", Category: "goal"}, {Content: "k", Category: "goal"}}},
			wantNotes: []string{"[0]: confidence is not a number", "[1]: confidence \"1.5\" is not between", "[2]: confidence \"-0.1\" is not between", "[3]: confidence \"1e999\" is not between",
				"[4]: confidence is missing", "[5]: confidence is missing", "[6]: confidence is not a number", "[7]: confidence is not a number"},
		},
		{
			name: "categories",
			reply: factsReply(`{"content":"a","category":"Preference","confidence":0.9},{"content":"b","category":" SKILLS ","confidence":0.9},` +
				`{"content":"c","category":"habit","confidence":0.9},{"content":"d","category":"mood","confidence":0.9},{"content":"e","category":"","confidence":0.9},` +
				`{"content":"f","confidence":0.9},{"content":"g","category":["goal"],"confidence":0.9},{"content":"h","category":"preference|knowledge","confidence":0.9}`),
			want: Update{NewFacts: []NewFact{{Content: "a", Category: "preference", Confidence: 0.9}, {Content: "b", Category: "knowledge", Confidence: 0.9}, {Content: "c", Category: "behavior", Confidence: 0.9}}},
			wantNotes: []string{`[1]: category " SKILLS " taken as knowledge`, `[2]: category "habit" taken as behavior`, `[3]: unknown category "mood"`, `[4]: unknown category ""`,
				"[5]: category is missing", "[6]: category is missing or not a string", `[7]: unknown category "preference|knowledge"`},
		},
		{
			name: "sourceError only on corrections",
			reply: factsReply(`{"content":"a","category":"preference","confidence":0.9,"sourceError":"oops"},{"content":"b","category":"mistake","confidence":0.96,"sourceError":" wrong tool "},` +
				`{"content":"c","category":"correction","confidence":0.96,"sourceError":5},{"content":"d","category":"correction","confidence":0.96,"sourceError":null},{"content":"e","category":"goal","confidence":0.9,"sourceError":""}`),
			want: Update{NewFacts: []NewFact{{Content: "a", Category: "preference", Confidence: 0.9}, {Content: "b", Category: "correction", Confidence: 0.96, SourceError: "wrong tool"},
				{Content: "c", Category: "correction", Confidence: 0.96}, {Content: "d", Category: "correction", Confidence: 0.96}, {Content: "e", Category: "goal", Confidence: 0.9}}},
			wantNotes: []string{"[0]: sourceError dropped: the category is preference", `[1]: category "mistake" taken as correction`, "[2]: sourceError is not a string"},
		},
		{
			name:      "factsToRemove",
			reply:     `{"factsToRemove":["fact_1", 2, " fact_2 ", "fact_1", "", null, {"id":"fact_3"}]}`,
			want:      Update{FactsToRemove: []string{"fact_1", "fact_2"}},
			wantNotes: []string{"factsToRemove[1]: not a string", "factsToRemove[4]: empty id", "factsToRemove[5]: not a string", "factsToRemove[6]: not a string"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ParseUpdate(tt.reply)
			if err != nil {
				t.Fatalf("ParseUpdate() error = %v", err)
			}
			notes := got.Notes
			got.Notes = nil
			if !reflect.DeepEqual(*got, tt.want) {
				t.Errorf("ParseUpdate() = %+v, want %+v", *got, tt.want)
			}
			if len(notes) != len(tt.wantNotes) {
				t.Fatalf("ParseUpdate() notes = %q, want %d notes like %q", notes, len(tt.wantNotes), tt.wantNotes)
			}
			for i, want := range tt.wantNotes {
				if !strings.Contains(notes[i], want) {
					t.Errorf("note %d = %q, want it to contain %q", i, notes[i], want)
				}
			}
			checkUpdateInvariants(t, got)
		})
	}
}

func TestParseUpdateBadReply(t *testing.T) {
	tests := []struct {
		name, reply, wantMsg string
	}{
		{"empty", "", "no JSON object"},
		{"blank", " \n\t ", "no JSON object"},
		{"garbage", "I could not find anything to remember. {not json} {{]]", "no JSON object"},
		{"truncated", cleanReply[:len(cleanReply)/2], "truncated"},
		{"truncated in fence", "```json\n" + cleanReply[:len(cleanReply)-2], "truncated"},
		{"no update keys", `{"facts": [], "profile": {}}`, "no JSON object"},
		{"only nulls", `{"user": null, "newFacts": null}`, "no JSON object"},
		{"wrong kinds", `{"user": [], "history": "x"}`, "no JSON object"},
		{"only inside the trace", `<think>` + cleanReply + `</think> Nothing to update.`, "no JSON object"},
		{"unclosed trace", `<think> let me see ` + cleanReply, "no JSON object"},
		{"too big", `{"newFacts":[]}` + strings.Repeat(" ", memory.UpdateMaxReplyBytes), "limit"},
		{"too many candidates", strings.Repeat("{x", memory.UpdateMaxCandidates+1) + cleanReply, "first 256 candidates"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ParseUpdate(tt.reply)
			if !errors.Is(err, ErrBadReply) {
				t.Fatalf("ParseUpdate() = %+v, %v; want an error wrapping ErrBadReply", got, err)
			}
			if got != nil {
				t.Errorf("ParseUpdate() = %+v with an error, want nil", got)
			}
			if !strings.Contains(err.Error(), tt.wantMsg) {
				t.Errorf("ParseUpdate() error = %q, want it to contain %q", err, tt.wantMsg)
			}
		})
	}
}

func TestParseUpdateBounds(t *testing.T) {
	var b strings.Builder
	for i := range memory.UpdateMaxNewFacts + 5 {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(`{"content":"fact `)
		b.WriteString(strings.Repeat("x", i))
		b.WriteString(`","category":"mood","confidence":0.9}`)
	}
	// 205 facts with an unknown category: every one noted, notes capped.
	got, err := ParseUpdate(factsReply(b.String()))
	if err != nil {
		t.Fatalf("ParseUpdate() error = %v", err)
	}
	if len(got.Notes) != memory.UpdateMaxNotes || !strings.Contains(got.Notes[memory.UpdateMaxNotes-1], "and 106 more notes") {
		t.Errorf("ParseUpdate() has %d notes ending %q, want %d ending with the count of the rest", len(got.Notes), got.Notes[len(got.Notes)-1], memory.UpdateMaxNotes)
	}
	// 205 valid facts: the first 200 kept.
	got, err = ParseUpdate(factsReply(strings.ReplaceAll(b.String(), "mood", "goal")))
	if err != nil {
		t.Fatalf("ParseUpdate() error = %v", err)
	}
	if len(got.NewFacts) != memory.UpdateMaxNewFacts || len(got.Notes) != 1 || !strings.Contains(got.Notes[0], "the last 5 items skipped") {
		t.Errorf("ParseUpdate() = %d facts, notes %q; want %d facts and one note", len(got.NewFacts), got.Notes, memory.UpdateMaxNewFacts)
	}
}

// checkUpdateInvariants checks what every parsed Update promises.
func checkUpdateInvariants(tb testing.TB, u *Update) {
	tb.Helper()
	names := map[string]bool{}
	for _, s := range u.Sections {
		if SectionByName(memory.NewDocument(), s.Name) == nil || names[s.Name] {
			tb.Errorf("section %q is unknown or repeated", s.Name)
		}
		names[s.Name] = true
		if strings.TrimSpace(s.Summary) == "" || s.Summary != strings.TrimSpace(s.Summary) {
			tb.Errorf("section %s summary %q is empty or untrimmed", s.Name, s.Summary)
		}
	}
	for _, f := range u.NewFacts {
		if !memory.ValidCategory(f.Category) {
			tb.Errorf("fact %q has category %q", f.Content, f.Category)
		}
		if math.IsNaN(f.Confidence) || f.Confidence < 0 || f.Confidence > 1 || math.Signbit(f.Confidence) {
			tb.Errorf("fact %q has confidence %v", f.Content, f.Confidence)
		}
		if strings.TrimSpace(f.Content) == "" || f.Content != strings.TrimSpace(f.Content) {
			tb.Errorf("fact content %q is empty or untrimmed", f.Content)
		}
		if f.SourceError != "" && f.Category != memory.CategoryCorrection {
			tb.Errorf("fact %q of category %s has sourceError %q", f.Content, f.Category, f.SourceError)
		}
	}
	ids := map[string]bool{}
	for _, id := range u.FactsToRemove {
		if id == "" || ids[id] {
			tb.Errorf("factsToRemove has an empty or repeated id %q", id)
		}
		ids[id] = true
	}
	if len(u.NewFacts) > memory.UpdateMaxNewFacts || len(u.FactsToRemove) > memory.UpdateMaxRemovals || len(u.Notes) > memory.UpdateMaxNotes {
		tb.Errorf("update over its bounds: %d facts, %d removals, %d notes", len(u.NewFacts), len(u.FactsToRemove), len(u.Notes))
	}
}

func FuzzParseUpdate(f *testing.F) {
	for _, s := range []string{
		cleanReply,
		"```json\n" + cleanReply + "\n```",
		"<think>{\"newFacts\":[]}</think>" + cleanReply,
		cleanReply[:100],
		factsReply(`{"content":"a","category":"Skills","confidence":0.8,"sourceError":"x"}`),
		`{"factsToRemove":["fact_1",2,null]}`,
		"",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, reply string) {
		u, err := ParseUpdate(reply)
		if err != nil {
			if u != nil || !errors.Is(err, ErrBadReply) {
				t.Fatalf("ParseUpdate() = %v, %v; want nil and ErrBadReply", u, err)
			}
			return
		}
		checkUpdateInvariants(t, u)
	})
}
