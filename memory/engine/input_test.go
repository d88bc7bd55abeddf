package engine

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/mnemo-mcp/mnemo/memory"
	"github.com/mnemo-mcp/mnemo/memory/update"
)

const testSecret = "sk-proj-Zq8vN3kT5wX2yB7mR4pL9sD1fG6hJ0cA"

// hasControl reports whether s holds a character the text rule refuses.
func hasControl(s string) bool {
	for _, r := range s {
		if memory.ControlRune(r) || r == 0xfffd {
			return true
		}
	}
	return false
}

// TestApplyUpdateCleansModelText: what a language model writes into
// sections, facts, sourceErrors and knowledge loses its control
// characters and, with RedactSecrets, its secrets; each change is noted
// without the secret.
func TestApplyUpdateCleansModelText(t *testing.T) {
	d := testDoc(0)
	upd := &update.Update{
		Sections: []update.SectionUpdate{{Name: "workContext", Summary: "Works on mnemo \x1b]52;c;ZXZpbA==\x07 with key " + testSecret}},
		NewFacts: []update.NewFact{
			{Content: "Prefers tea\x1b[31m\u009b2J", Category: memory.CategoryPreference, Confidence: 0.9},
			{Content: "API key is " + testSecret, Category: memory.CategoryKnowledge, Confidence: 0.9},
			{Content: "Wrong\x00 language", Category: memory.CategoryCorrection, Confidence: 0.9, SourceError: "said Rust\x07 " + testSecret},
		},
		UserKnowledge:      []update.NewFact{{Content: "Knows Go\x7f " + testSecret, Category: memory.CategoryKnowledge, Confidence: 1}},
		AssistantKnowledge: []update.NewFact{{Content: "Promised\u0085 a review", Category: memory.CategoryKnowledge, Confidence: 1}},
	}
	rep := update.ApplyUpdate(d, upd, update.ApplyOptions{Now: applyNow, RedactSecrets: true})
	var texts []string
	for _, ns := range d.Sections() {
		texts = append(texts, ns.Section.Summary)
	}
	for _, f := range append(append(d.Facts, d.Knowledge...), d.AssistantKnowledge...) {
		texts = append(texts, f.Content, f.SourceError)
	}
	for _, e := range d.FactEvents {
		texts = append(texts, e.Content)
	}
	if len(d.Facts) != 3 || len(d.Knowledge) != 1 || len(d.AssistantKnowledge) != 1 {
		t.Fatalf("facts %d, knowledge %d/%d; want 3, 1, 1 (cleaned, not dropped)", len(d.Facts), len(d.Knowledge), len(d.AssistantKnowledge))
	}
	for _, s := range texts {
		if hasControl(s) || strings.Contains(s, testSecret) {
			t.Errorf("stored text %q keeps a control character or the secret", s)
		}
	}
	if got := d.Facts[1].Content; got != "API key is [redacted: openai api key]" {
		t.Errorf("fact = %q, want the key redacted", got)
	}
	notes := strings.Join(rep.Ignored, "\n")
	if strings.Contains(notes, testSecret) || !strings.Contains(notes, "control characters removed") || !strings.Contains(notes, "secrets redacted: 1 openai api key") {
		t.Errorf("notes = %s\nwant control characters and redactions noted, never the secret", notes)
	}

	d = testDoc(0)
	update.ApplyUpdate(d, &update.Update{NewFacts: []update.NewFact{{Content: "API key is " + testSecret, Category: memory.CategoryKnowledge, Confidence: 0.9}}}, update.ApplyOptions{Now: applyNow})
	if d.Facts[0].Content != "API key is "+testSecret {
		t.Errorf("without RedactSecrets fact = %q, want it as written", d.Facts[0].Content)
	}
}

// TestUpdaterRedactsModelOutput: the updater applies a model reply that
// plants a terminal escape and a key: neither reaches memory.json.
func TestUpdaterRedactsModelOutput(t *testing.T) {
	llm := &fakeLLM{reply: func(string) (string, error) {
		content, _ := json.Marshal("User's key is " + testSecret + "\x1b]52;c;ZXZpbA==\x07")
		return `{"user":{"workContext":{"summary":"Works on mnemo.\u001b[2J","shouldUpdate":true}},"history":{},"newFacts":[{"content":` + string(content) + `,"category":"context","confidence":0.9}],"factsToRemove":[]}`, nil
	}}
	store := newMemStore()
	s := newTestService(t, store, memory.DefaultConfig(), WithLLM(llm))
	defer s.Close(context.Background())
	addPair(t, s, "t1", "remember my project", "ok")
	if _, err := s.Flush(t.Context(), memory.FlushRequest{}); err != nil {
		t.Fatalf("Flush() = %v", err)
	}
	d, err := store.LoadDocument(t.Context(), memory.Scope{UserID: memory.DefaultUserID})
	if err != nil {
		t.Fatal(err)
	}
	raw, _ := json.Marshal(d)
	if len(d.Facts) != 1 {
		t.Fatalf("facts = %+v, want the one the model sent", d.Facts)
	}
	if strings.Contains(string(raw), testSecret) || strings.Contains(string(raw), `\u001b`) || strings.Contains(string(raw), "\x1b") {
		t.Errorf("memory document keeps the key or the escape: %s", raw)
	}
}

// TestCheckImport: imported memory follows the tools' rules; the record
// that breaks one is named by scope, list, index and field; secrets are
// redacted in place.
func TestCheckImport(t *testing.T) {
	cfg := memory.DefaultConfig()
	scope := memory.Scope{UserID: "bob"}
	turn := func(user string) memory.Turn {
		return memory.Turn{ID: "turn_1", Seq: 1, ThreadID: "t1", Time: applyNow, Stored: applyNow, User: user, Reply: "ok"}
	}
	fact := func(content string) memory.Fact {
		return memory.Fact{ID: "fact_00000001", Content: content, Category: memory.CategoryContext, Confidence: 0.9, CreatedAt: applyNow, Source: "t1"}
	}
	manyFacts := make([]memory.Fact, cfg.MaxFacts+1)
	for i := range manyFacts {
		manyFacts[i] = fact("fact")
	}
	deep := strings.Repeat(`{"a":`, 500) + "1" + strings.Repeat("}", 500)
	tests := []struct {
		name  string
		doc   func(d *memory.Document)
		turns []memory.Turn
		want  string // in the error; "" means accepted
	}{
		{"plain", func(d *memory.Document) { d.Facts = []memory.Fact{fact("Likes tea")} }, []memory.Turn{turn("hi")}, ""},
		{"fact of 5 MB", func(d *memory.Document) { d.Facts = []memory.Fact{fact(strings.Repeat("x", 5<<20))} }, nil, "bob: facts[0].content: is 5242880 characters long"},
		{"more facts than max_facts", func(d *memory.Document) { d.Facts = manyFacts }, nil, "bob: facts: holds 101 entries; max_facts is 100"},
		{"ESC in a fact", func(d *memory.Document) { d.Facts = []memory.Fact{fact("ok"), fact("red\x1b[31m")} }, nil, "bob: facts[1].content: contains control character U+001B"},
		{"C1 in knowledge", func(d *memory.Document) {
			d.Knowledge = []memory.Fact{{Content: "a\u009bb", Category: memory.CategoryKnowledge, Confidence: 1}}
		}, nil, "bob: knowledge[0].content: contains control character U+009B"},
		{"BEL in a section", func(d *memory.Document) { d.User.TopOfMind.Summary = "ding\x07" }, nil, "bob: section topOfMind: contains control character U+0007"},
		{"U+FFFD in a turn", nil, []memory.Turn{turn("ok"), {ID: "turn_2", Seq: 2, ThreadID: "t1", User: "caf\ufffd"}}, "bob: turns[1] (turn_2).user: contains U+FFFD"},
		{"turn over max_message_bytes", nil, []memory.Turn{turn(strings.Repeat("x", cfg.MaxMessageBytes+1))}, "bob: turns[0] (turn_1).user: is 65537 bytes"},
		{"meta_data 500 levels deep", nil, []memory.Turn{{ID: "turn_1", Seq: 1, ThreadID: "t1", User: "hi", MetaData: json.RawMessage(`{"a":` + deep + `}`)}}, "bob: turns[0] (turn_1).meta_data: is nested more than 32 levels deep"},
		{"bad category", func(d *memory.Document) { f := fact("x"); f.Category = "secret"; d.Facts = []memory.Fact{f} }, nil, "bob: facts[0].category"},
		{"NUL in fact history", func(d *memory.Document) {
			d.FactEvents = []memory.FactEvent{{FactID: "fact_00000001", Event: memory.FactCreated, Content: "a\x00"}}
		}, nil, "bob: factEvents[0].content"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := memory.NewDocument()
			if tt.doc != nil {
				tt.doc(d)
			}
			_, err := CheckImport(cfg, scope, d, tt.turns)
			switch {
			case tt.want == "" && err != nil:
				t.Fatalf("CheckImport() = %v, want it accepted", err)
			case tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want) || !errors.Is(err, memory.ErrInvalidInput)):
				t.Fatalf("CheckImport() = %v, want an invalid-input error containing %q", err, tt.want)
			}
		})
	}

	d := memory.NewDocument()
	d.Facts = []memory.Fact{fact("Key " + testSecret)}
	d.FactEvents = []memory.FactEvent{{FactID: "fact_00000001", Event: memory.FactCreated, Content: "Key " + testSecret}}
	turns := []memory.Turn{turn("my key is " + testSecret)}
	turns[0].MetaData = json.RawMessage(`{"k":"` + testSecret + `","n":[1,"x"]}`)
	found, err := CheckImport(cfg, scope, d, turns)
	if err != nil {
		t.Fatal(err)
	}
	if len(found) != 1 || found[0] != (memory.Redaction{Kind: "openai api key", Count: 4}) {
		t.Errorf("redactions = %+v, want 4 openai api keys", found)
	}
	all, _ := json.Marshal([]any{d, turns})
	if strings.Contains(string(all), testSecret) {
		t.Errorf("imported memory keeps the key: %s", all)
	}
	if got := string(turns[0].MetaData); got != `{"k":"[redacted: openai api key]","n":[1,"x"]}` {
		t.Errorf("meta_data = %s, want the key redacted and the rest kept", got)
	}
}

// TestCleanText: cleanText drops exactly what textProblem refuses.
func TestCleanText(t *testing.T) {
	for _, in := range []string{"plain", "tab\tnew\nline\r", "esc\x1b[1m", "c1\u0085\u009b", "bad\xff\xfeutf8", "nul\x00", "repl\ufffd", "é ünïcödé ✓"} {
		out, changed := memory.CleanText(in)
		if memory.TextProblem(out) != "" {
			t.Errorf("cleanText(%q) = %q, still %s", in, out, memory.TextProblem(out))
		}
		if changed != (memory.TextProblem(in) != "") {
			t.Errorf("cleanText(%q) changed = %v, but textProblem = %q", in, changed, memory.TextProblem(in))
		}
	}
}

var applyNow = time.Date(2026, 7, 1, 12, 0, 0, 0, time.UTC)

// testDoc returns a document with n facts fact_00000000, fact_00000001, …
// with contents "known fact i", confidence 0.8 and increasing CreatedAt.
func testDoc(n int) *memory.Document {
	d := memory.NewDocument()
	for i := range n {
		d.Facts = append(d.Facts, memory.Fact{
			ID: fmt.Sprintf("fact_%08x", i), Content: fmt.Sprintf("known fact %d", i), Category: memory.CategoryContext,
			Confidence: 0.8, CreatedAt: applyNow.Add(time.Duration(i-n) * time.Hour), Source: "t0",
		})
	}
	return d
}
