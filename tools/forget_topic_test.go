package tools

import (
	"strings"
	"testing"

	"github.com/mnemo-mcp/mnemo/memory"
)

// forget_memory with a topic: alone it previews and deletes nothing; with
// its confirmation it forgets exactly the chosen items of the preview; a
// forget of a fact lists the exchange that still says it.
func TestForgetMemoryTopic(t *testing.T) {
	e := newEnv(t)
	var lis, other memory.SaveFactResult
	e.mustOK(t, "save_memory", `{"content": "Visits Lisbon every spring"}`, &lis)
	e.mustOK(t, "save_memory", `{"content": "Alice is vegetarian."}`, &other)
	e.mustOK(t, "add_memory", `{"user_input": "Book a table in Lisbon for Friday.", "agent_response": "Booked.", "thread_id": "trip"}`, &memory.AddResult{})
	e.mustOK(t, "add_memory", `{"user_input": "I'm vegetarian, what can I cook?", "agent_response": "A dal.", "thread_id": "food"}`, &memory.AddResult{})
	e.mustOK(t, "update_profile", `{"section": "personal_context", "text": "Sister Marguerite lives in Alfama, Lisbon."}`, &memory.UpdateProfileResult{})

	var h memory.HistoryResult
	text := e.mustOK(t, "memory_history", `{"section": "personal_context"}`, &h)
	if len(h.SectionEvents) != 1 || h.SectionEvents[0].Actor != memory.ActorAssistant || h.SectionEvents[0].New != "Sister Marguerite lives in Alfama, Lisbon." ||
		!strings.Contains(text, "personal_context by assistant") {
		t.Errorf("memory_history(section) = %+v, %q; want the assistant's edit with its text", h.SectionEvents, text)
	}

	before := snapshot(t, e.dir)
	var pre memory.ForgetResult
	text = e.mustOK(t, "forget_memory", `{"topic": "Lisbon"}`, &pre)
	if d := diffSnapshots(before, snapshot(t, e.dir)); d != "" {
		t.Errorf("a preview changed files:\n%s", d)
	}
	if pre.Preview == nil || len(pre.Preview.Mentions) != 3 || !strings.Contains(text, "nothing deleted") || !strings.Contains(text, "forget everything about Lisbon") {
		t.Fatalf("preview = %+v, %q; want the section, the fact and the exchange", pre.Preview, text)
	}
	var turn string
	for _, m := range pre.Preview.Mentions {
		if m.Kind == memory.MentionTurn {
			turn = m.ID
		}
	}
	e.mustErr(t, "forget_memory", `{"topic": "Lisbon", "fact_ids": ["`+lis.Fact.ID+`"]}`, "confirm", "forget everything about Lisbon")
	e.mustErr(t, "forget_memory", `{"topic": "Lisbon", "confirm": "forget everything about Lisbon"}`, "nothing chosen")
	e.mustErr(t, "forget_memory", `{"topic": "Lisbon", "confirm": "forget everything about Lisbon", "fact_ids": ["`+other.Fact.ID+`"]}`, "not among")
	e.mustErr(t, "forget_memory", `{"sections": ["personal_context"]}`, "topic")
	if d := diffSnapshots(before, snapshot(t, e.dir)); d != "" {
		t.Errorf("a refused forget changed files:\n%s", d)
	}
	var res memory.ForgetResult
	e.mustOK(t, "forget_memory", `{"topic": "Lisbon", "confirm": "forget everything about Lisbon", "fact_ids": ["`+lis.Fact.ID+`"], "turn_ids": ["`+turn+`"], "sections": ["personal_context"]}`, &res)
	if len(res.FactsRemoved) != 1 || len(res.TurnsRemoved) != 1 || len(res.SectionsCleared) != 1 || len(res.MayMention) != 0 {
		t.Errorf("topic forget = %+v", res)
	}
	var got memory.RetrieveResult
	e.mustOK(t, "retrieve_memory", `{"query": "Lisbon"}`, &got)
	if strings.Contains(got.Injection, "Lisbon") {
		t.Errorf("after the topic forget retrieve_memory still says Lisbon:\n%s", got.Injection)
	}

	text = e.mustOK(t, "forget_memory", `{"fact_ids": ["`+other.Fact.ID+`"]}`, &res)
	if len(res.MayMention) != 1 || res.MayMention[0].Kind != memory.MentionTurn || !strings.Contains(text, "I'm vegetarian") || !strings.Contains(text, "turn_ids") {
		t.Errorf("forget of a fact = %+v, %q; want the exchange that says it", res.MayMention, text)
	}
}
