package cli

import (
	"encoding/json"
	"strings"
	"testing"
)

// TestE2EHTTPForgetTopicAsksTheUser (issue 40): forgetting the chosen
// items of a topic's preview, asked of a 2026-07-28 client that can put a
// question to the user, asks the user as forget-all does, whatever
// confirm the model typed; the yes is bound to the items chosen (replayed
// on a choice with one more fact it is asked anew and deletes nothing),
// and the answer to the question asked forgets exactly what was chosen.
func TestE2EHTTPForgetTopicAsksTheUser(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	alice := httpToken(t, dir, "alice")
	srv := startHTTP(t, dir, nil)
	ac := mcpClient(t, srv.url, map[string]string{"Authorization": "Bearer " + alice})
	for _, content := range []string{"Sister Marguerite lives in Lisbon", "Flew to Lisbon in May for the tiles museum", "Prefers green tea"} {
		if res := callHTTPTool(t, ac, "save_memory", map[string]any{"content": content}); res.IsError {
			t.Fatalf("save_memory = %s", resultText(res))
		}
	}
	preview := modernCall(t, srv.url, alice, "forget_memory", map[string]any{"arguments": map[string]any{"topic": "Lisbon"}})
	sc, _ := preview["structuredContent"].(map[string]any)
	pre, _ := sc["preview"].(map[string]any)
	mentions, _ := pre["mentions"].([]any)
	var facts, texts []string
	for _, m := range mentions {
		if m, _ := m.(map[string]any); m["kind"] == "fact" {
			facts = append(facts, m["id"].(string))
			texts = append(texts, m["text"].(string))
		}
	}
	if len(facts) != 2 {
		t.Fatalf("the preview of Lisbon lists facts %v, want the two about Lisbon: %v", facts, preview)
	}
	listed := func() string {
		t.Helper()
		return resultText(callHTTPTool(t, ac, "list_memories", map[string]any{"kind": "facts"}))
	}
	yes := map[string]any{"confirm_forget": map[string]any{"action": "accept", "content": map[string]any{"confirm": true}}}
	one := map[string]any{"topic": "Lisbon", "fact_ids": facts[:1], "confirm": "forget everything about Lisbon"}

	first := modernCall(t, srv.url, alice, "forget_memory", map[string]any{"arguments": one})
	if first["resultType"] != "input_required" {
		t.Fatalf("forgetting a chosen fact about Lisbon = %v, want the user asked first", first)
	}
	state, _ := first["requestState"].(string)
	if asked, _ := json.Marshal(first); !strings.Contains(string(asked), "Lisbon") {
		t.Errorf("the question does not name the topic: %v", first)
	}
	if got := listed(); !strings.Contains(got, "Sister Marguerite") || !strings.Contains(got, "tiles museum") {
		t.Errorf("asking deleted something: %s", got)
	}

	both := map[string]any{"topic": "Lisbon", "fact_ids": facts, "confirm": "forget everything about Lisbon"}
	replayed := modernCall(t, srv.url, alice, "forget_memory", map[string]any{"arguments": both, "inputResponses": yes, "requestState": state})
	if replayed["resultType"] != "input_required" {
		t.Errorf("the yes to one fact replayed on two = %v, want asked anew", replayed)
	}
	if got := listed(); !strings.Contains(got, "Sister Marguerite") || !strings.Contains(got, "tiles museum") {
		t.Errorf("the replayed answer deleted something: %s", got)
	}

	answered := modernCall(t, srv.url, alice, "forget_memory", map[string]any{"arguments": one, "inputResponses": yes, "requestState": state})
	if answered["isError"] == true {
		t.Fatalf("the answer to the question asked = %v", answered)
	}
	got := listed()
	if strings.Contains(got, texts[0]) || !strings.Contains(got, texts[1]) || !strings.Contains(got, "green tea") {
		t.Errorf("after the yes, facts = %s, want only the chosen fact about Lisbon gone", got)
	}
	if code := srv.stop(t); code != 0 {
		t.Errorf("exit code %d", code)
	}
}
