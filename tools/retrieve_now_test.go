package tools

import (
	"slices"
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

// TestRetrieveNowWeekdaysAndSpans: "last Tuesday" (which the now
// argument's description names) is the latest Tuesday before now, and
// "the past month" the month up to now, not the calendar month before it.
func TestRetrieveNowWeekdaysAndSpans(t *testing.T) {
	e := newEnv(t)
	var added memory.AddResult
	for _, ex := range []struct{ user, at string }{
		{"We had a picnic by the lake.", "2023-05-02T18:00:00Z"},                // a Tuesday
		{"A picnic on the beach today, sandy but fun.", "2023-06-02T12:00:00Z"}, // a Friday
		{"Another picnic, this time in the park.", "2023-06-20T18:00:00Z"},      // a Tuesday
	} {
		e.mustOK(t, "add_memory", `{"user_input": "`+ex.user+`", "agent_response": "Lovely.", "timestamp": "`+ex.at+`"}`, &added)
	}
	for _, tt := range []struct {
		query, now string
		want       []string // the first pages, in any order
	}{
		{"Where was the picnic last Tuesday?", "2023-05-05T09:00:00Z", []string{"lake"}},
		{"Where was the picnic last Tuesday?", "2023-06-23T09:00:00Z", []string{"park"}},
		{"Where did we have a picnic in the past month?", "2023-06-25T09:00:00Z", []string{"park", "beach"}},
		{"Where did we have a picnic a couple of days ago?", "2023-06-04T09:00:00Z", []string{"beach"}},
	} {
		var res memory.RetrieveResult
		e.mustOK(t, "retrieve_memory", `{"query": "`+tt.query+`", "now": "`+tt.now+`"}`, &res)
		if len(res.Pages) < len(tt.want) {
			t.Errorf("%q at %s: pages = %+v, want %q first", tt.query, tt.now, res.Pages, tt.want)
			continue
		}
		for _, p := range res.Pages[:len(tt.want)] {
			if !slices.ContainsFunc(tt.want, func(w string) bool { return strings.Contains(p.User, w) }) {
				t.Errorf("%q at %s: pages = %+v, want %q first", tt.query, tt.now, res.Pages, tt.want)
				break
			}
		}
	}
}
