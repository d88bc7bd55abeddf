package tools

import (
	"strings"
	"testing"

	"github.com/mnemo-mcp/mnemo/memory"
)

// TestRetrieveNowResolvesRelativeDates replays an old conversation: with
// now set to the day after one of two exchanges about the same thing,
// "yesterday" in the query picks that exchange first; a now that is not a
// time is a tool error naming the argument.
func TestRetrieveNowResolvesRelativeDates(t *testing.T) {
	e := newEnv(t)
	var added memory.AddResult
	e.mustOK(t, "add_memory", `{"user_input": "We had a picnic by the lake.", "agent_response": "Lovely.", "timestamp": "2023-05-02T18:00:00Z"}`, &added)
	e.mustOK(t, "add_memory", `{"user_input": "Another picnic, this time in the park.", "agent_response": "Nice.", "timestamp": "2023-06-20T18:00:00Z"}`, &added)
	for _, tt := range []struct {
		now, want string
	}{
		{"2023-05-03T09:00:00Z", "lake"},
		{"2023-06-21T09:00:00Z", "park"},
	} {
		var res memory.RetrieveResult
		e.mustOK(t, "retrieve_memory", `{"query": "Where was the picnic yesterday?", "now": "`+tt.now+`"}`, &res)
		if len(res.Pages) == 0 || !strings.Contains(res.Pages[0].User, tt.want) {
			t.Errorf("now %s: pages = %+v, want the %s picnic first", tt.now, res.Pages, tt.want)
		}
	}
	res := e.call(t, "retrieve_memory", `{"query": "picnic", "now": "last Tuesday"}`)
	if text := resultText(t, res); !res.IsError || !strings.Contains(text, "now") || !strings.Contains(text, "RFC 3339") {
		t.Errorf("now \"last Tuesday\": result %q (isError %v), want an error naming now and the format", text, res.IsError)
	}
}
