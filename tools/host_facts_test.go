package tools

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/mnemo-mcp/mnemo/memory"
)

// TestAddMemoryFacts passes the host model's facts with an exchange, with
// no extraction model configured: kept facts come from the thread and show
// in list_memories, memory_history and the injection; a known fact is
// merged; a fact below the threshold, oversized, of an unknown category or
// with a control character is refused with the reason while the exchange
// is still stored; a correction keeps what went wrong.
func TestAddMemoryFacts(t *testing.T) {
	e := newEnv(t)
	facts := []map[string]any{
		{"content": "Sails a Contessa 32 called Marlin", "category": "context", "confidence": 0.95},
		{"content": "Prefers metric units", "category": "preference"},
		{"content": "Might like racing", "category": "goal", "confidence": 0.4},
		{"content": strings.Repeat("Long fact ", 80), "category": "context"},
		{"content": "Keeps a logbook", "category": "hobby"},
		{"content": "Moors in Cascais\x1b[2J", "category": "context"},
		{"content": "Use nautical miles for distances at sea", "category": "correction", "source_error": "Gave the distance in kilometres"},
	}
	args, _ := json.Marshal(map[string]any{
		"user_input":     "No, use nautical miles. I sail Marlin, my Contessa 32, and I prefer metric otherwise.",
		"agent_response": "Understood: nautical miles at sea.",
		"thread_id":      "sail",
		"facts":          facts,
	})
	var res memory.AddResult
	text := e.mustOK(t, "add_memory", string(args), &res)
	if len(res.TurnIDs) != 1 {
		t.Fatalf("turn_ids = %q, want the exchange stored", res.TurnIDs)
	}
	want := []struct{ status, reason string }{
		{memory.HostFactKept, ""},
		{memory.HostFactKept, ""},
		{memory.HostFactRefused, "below the threshold"},
		{memory.HostFactRefused, "characters long"},
		{memory.HostFactRefused, "is not a category"},
		{memory.HostFactRefused, "control character"},
		{memory.HostFactKept, ""},
	}
	if len(res.Facts) != len(want) {
		t.Fatalf("facts = %+v, want %d results", res.Facts, len(want))
	}
	kept := map[string]string{} // content → id
	for i, w := range want {
		got := res.Facts[i]
		if got.Status != w.status || !strings.Contains(got.Reason, w.reason) || (w.status == memory.HostFactKept) != (got.FactID != "") {
			t.Errorf("facts[%d] = %+v, want %s with reason containing %q", i, got, w.status, w.reason)
		}
		if got.Status == memory.HostFactKept {
			kept[got.Content] = got.FactID
		}
	}
	if !strings.Contains(text, "facts: 3 kept") || !strings.Contains(text, "4 refused") || !strings.Contains(text, "below the threshold") {
		t.Errorf("text = %q, want the facts' outcome with reasons", text)
	}
	if res.Ask != "" {
		t.Errorf("ask = %q, want none: facts and a correction fact were passed", res.Ask)
	}

	var list memory.ListResult
	e.mustOK(t, "list_memories", `{"kind": "facts"}`, &list)
	if len(list.Facts) != 3 {
		t.Fatalf("list_memories facts = %+v, want the 3 kept", list.Facts)
	}
	for _, f := range list.Facts {
		if f.Source != "sail" || kept[f.Content] != f.ID {
			t.Errorf("fact %+v, want one of the kept facts with source sail", f)
		}
		if f.Category == memory.CategoryCorrection && f.SourceError != "Gave the distance in kilometres" {
			t.Errorf("correction fact = %+v, want its source_error kept", f)
		}
	}
	var hist memory.HistoryResult
	e.mustOK(t, "memory_history", `{"fact_id": "`+kept["Prefers metric units"]+`"}`, &hist)
	if len(hist.Events) != 1 || hist.Events[0].Event != memory.FactCreated || hist.Events[0].Source != "sail" ||
		!strings.Contains(hist.Events[0].Reason, "thread sail") {
		t.Errorf("history = %+v, want one created event from thread sail", hist.Events)
	}
	var ret memory.RetrieveResult
	e.mustOK(t, "retrieve_memory", `{"query": "what units should I use for the boat trip?"}`, &ret)
	if !strings.Contains(ret.Injection, "nautical miles") || !strings.Contains(ret.Injection, "Prefers metric units") {
		t.Errorf("injection lacks the kept facts:\n%s", ret.Injection)
	}

	// The same facts again, with a new exchange: merged, nothing added.
	again, _ := json.Marshal(map[string]any{
		"user_input": "Plan a sail to Sesimbra.", "agent_response": "Twelve nautical miles south.", "thread_id": "sail",
		"facts": []map[string]any{{"content": "prefers metric units.", "category": "preference"}},
	})
	var res2 memory.AddResult
	e.mustOK(t, "add_memory", string(again), &res2)
	if len(res2.Facts) != 1 || res2.Facts[0].Status != memory.HostFactMerged || res2.Facts[0].FactID != kept["Prefers metric units"] {
		t.Errorf("facts = %+v, want merged with %s", res2.Facts, kept["Prefers metric units"])
	}
	e.mustOK(t, "list_memories", `{"kind": "facts"}`, &list)
	if len(list.Facts) != 3 {
		t.Errorf("list_memories facts = %d after a merge, want 3", len(list.Facts))
	}
}

// TestAddMemoryAsksForFacts checks what add_memory asks of the host's
// model with no extraction model: the facts of an exchange stored without
// any, and a correction fact after the user corrected it; a retry with
// the facts is not stored twice.
func TestAddMemoryAsksForFacts(t *testing.T) {
	e := newEnv(t)
	var res memory.AddResult
	text := e.mustOK(t, "add_memory", `{"user_input": "I live in Lisbon.", "agent_response": "Noted.", "thread_id": "t1"}`, &res)
	if !strings.Contains(res.Ask, "pass its lasting facts") || !strings.Contains(text, "Memory asks: you are the extraction model") {
		t.Errorf("ask = %q, text = %q; want a request for the exchange's facts", res.Ask, text)
	}
	var retry memory.AddResult
	e.mustOK(t, "add_memory", `{"user_input": "I live in Lisbon.", "agent_response": "Noted.", "thread_id": "t1", "facts": [{"content": "Lives in Lisbon"}]}`, &retry)
	if !retry.Duplicate || len(retry.Facts) != 1 || retry.Facts[0].Status != memory.HostFactKept || retry.Ask != "" {
		t.Errorf("retry with facts = %+v, want the stored turn, the fact kept and nothing asked", retry)
	}
	e.mustOK(t, "add_memory", `{"user_input": "No, I use Go not Python.", "agent_response": "Sorry, Go it is.", "thread_id": "t1", "facts": [{"content": "Uses Go", "category": "knowledge"}]}`, &res)
	if !res.Signals.Correction || !strings.Contains(res.Ask, "category correction") {
		t.Errorf("ask = %q (signals %+v), want a request for a correction fact", res.Ask, res.Signals)
	}
}
