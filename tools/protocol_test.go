package tools

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/mnemo-mcp/mnemo/memory"
)

// pairArgs is an add_memory call in the user_input/agent_response form.
const pairArgs = `{
	"user_input": "I prefer Go for backend services.",
	"agent_response": "Noted: Go for the backend.",
	"thread_id": "t1",
	"timestamp": "2025-02-28T10:00:00Z",
	"meta_data": {"source": "chat", "tags": ["pref"], "score": 1.5, "nested": {"x": null}}
}`

// messagesArgs is an add_memory call in the messages form: a system
// prompt, a user message with an upload, a tool round trip, the final
// answer, then an upload-only message and its reply.
const messagesArgs = `{
	"thread_id": "t2",
	"messages": [
		{"role": "system", "content": "You are a helpful analyst."},
		{"role": "user", "content": "<uploaded_files>/mnt/sales.csv</uploaded_files>Summarise my sales data, please."},
		{"role": "assistant", "content": null, "tool_calls": [
			{"id": "call_1", "type": "function", "function": {"name": "read_csv", "arguments": "{\"path\": \"/mnt/sales.csv\"}"}}
		]},
		{"role": "tool", "tool_call_id": "call_1", "name": "read_csv", "content": "region,total\nnorth,10"},
		{"role": "assistant", "content": "The north region sold 10 units.", "refusal": null, "annotations": []},
		{"role": "user", "content": "<uploaded_files>/mnt/more.csv</uploaded_files>"},
		{"role": "assistant", "content": "Got the file."}
	]
}`

func TestAddMemoryPair(t *testing.T) {
	e := newEnv(t)
	var res memory.AddResult
	text := e.mustOK(t, "add_memory", pairArgs, &res)

	if !reflect.DeepEqual(res.TurnIDs, []string{"turn_0001"}) || res.ThreadID != "t1" || res.Scope.UserID != "default" {
		t.Errorf("result = %+v, want turn_0001 in thread t1 of user default", res)
	}
	if res.Filter.Kept != 2 || res.Filter.Dropped() != 0 {
		t.Errorf("filter = %+v, want 2 kept, 0 dropped", res.Filter)
	}
	if res.Pending.Turns != 0 || res.Pending.LLM != memory.KeylessMode {
		t.Errorf("pending = %+v, want none in the keyless mode", res.Pending)
	}
	want := "Stored 1 turn (turn_0001) in thread t1 of user default; filter kept 2 messages, dropped 0. Memory asks: you are the extraction model"
	if !strings.HasPrefix(text, want) {
		t.Errorf("text = %q, want prefix %q", text, want)
	}
}

func TestAddMemoryMessages(t *testing.T) {
	e := newEnv(t)
	var res memory.AddResult
	text := e.mustOK(t, "add_memory", messagesArgs, &res)

	if len(res.TurnIDs) != 1 || res.ThreadID != "t2" {
		t.Errorf("turns = %v in %s, want 1 in t2", res.TurnIDs, res.ThreadID)
	}
	f := res.Filter
	want := memory.FilterReport{Kept: 2, DroppedSystem: 1, DroppedTool: 1, DroppedToolCalls: 1, DroppedUploadOnly: 1, DroppedUploadAnswer: 1, StrippedUploads: 2}
	if f != want {
		t.Errorf("filter = %+v, want %+v", f, want)
	}
	if !strings.Contains(text, "filter kept 2 messages, dropped 5") {
		t.Errorf("text = %q, want the filter counts", text)
	}

	var got memory.RetrieveResult
	e.mustOK(t, "retrieve_memory", `{"query": "sales data north region", "thread_id": "t2"}`, &got)
	if len(got.Pages) == 0 {
		t.Fatalf("retrieve found nothing; want the stored exchange")
	}
	p := got.Pages[0]
	if p.User != "Summarise my sales data, please." || p.Reply != "The north region sold 10 units." {
		t.Errorf("stored exchange = %q / %q, want the upload stripped and only the final answer", p.User, p.Reply)
	}
}

func TestAddMemoryNothingKept(t *testing.T) {
	e := newEnv(t)
	var res memory.AddResult
	text := e.mustOK(t, "add_memory", `{"messages": [{"role": "system", "content": "Be brief."}, {"role": "developer", "content": "Answer in French."}, {"role": "tool", "content": "42"}]}`, &res)
	if len(res.TurnIDs) != 0 || res.Note == "" {
		t.Errorf("result = %+v, want no turns and a note", res)
	}
	if res.Filter.DroppedSystem != 2 {
		t.Errorf("dropped_system = %d, want 2: the developer role is dropped like system", res.Filter.DroppedSystem)
	}
	if !strings.HasPrefix(text, "Stored nothing in thread default") {
		t.Errorf("text = %q, want it to say nothing was stored", text)
	}
}

func TestRetrieveMemory(t *testing.T) {
	e := newEnv(t)
	var added memory.AddResult
	e.mustOK(t, "add_memory", pairArgs, &added)
	e.mustOK(t, "add_memory", `{"user_input": "The weather is nice today.", "agent_response": "Enjoy the sun!", "thread_id": "t1"}`, &added)

	tests := []struct {
		name   string
		args   string
		budget int
	}{
		{"default budget", `{"query": "Which language do I prefer for backend services?", "thread_id": "t1"}`, 2000},
		{"smallest budget", `{"query": "Which language do I prefer for backend services?", "thread_id": "t1", "max_tokens": 100, "max_results": 1}`, 100},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var res memory.RetrieveResult
			text := e.mustOK(t, "retrieve_memory", tt.args, &res)
			if len(res.Pages) == 0 || res.Pages[0].ID != "turn_0001" {
				t.Fatalf("pages = %+v, want turn_0001 first", res.Pages)
			}
			if want := time.Date(2025, 2, 28, 10, 0, 0, 0, time.UTC); !res.Pages[0].Time.Equal(want) {
				t.Errorf("page time = %v, want the given timestamp %v", res.Pages[0].Time, want)
			}
			assertSameJSON(t, res.Pages[0].MetaData, `{"source": "chat", "tags": ["pref"], "score": 1.5, "nested": {"x": null}}`)
			if text != res.Injection {
				t.Errorf("text = %q, want the injection text %q", text, res.Injection)
			}
			if !strings.HasPrefix(text, "<memory>") || !strings.HasSuffix(text, "</memory>") {
				t.Errorf("text = %q, want a <memory> block", text)
			}
			if n := mustCounter(t).Count(text); n > tt.budget || n != res.InjectionTokens {
				t.Errorf("injection has %d tokens (reported %d), want at most %d", n, res.InjectionTokens, tt.budget)
			}
			if tt.budget == 2000 && !strings.Contains(text, "I prefer Go for backend services.") {
				t.Errorf("text = %q, want the stored exchange", text)
			}
		})
	}
}

// assertSameJSON fails unless got and want hold the same JSON value.
func assertSameJSON(t *testing.T, got json.RawMessage, want string) {
	t.Helper()
	var g, w any
	if err := json.Unmarshal(got, &g); err != nil {
		t.Fatalf("meta_data %s is not JSON: %v", got, err)
	}
	if err := json.Unmarshal([]byte(want), &w); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(g, w) {
		t.Errorf("meta_data = %s, want %s", got, want)
	}
}

func TestGetUserProfile(t *testing.T) {
	e := newEnv(t)
	var res memory.ProfileResult
	text := e.mustOK(t, "get_user_profile", `{}`, &res)
	if !res.Empty || res.StoredTurns != 0 || res.Version == "" || len(res.Facts) != 0 {
		t.Errorf("profile = %+v, want an empty document", res)
	}
	if want := "Nothing has been learned about user default yet: 0 exchanges stored. " +
		"No extraction model is configured, and none is needed: what memory learns is the facts you pass with add_memory (facts) or save with save_memory."; text != want {
		t.Errorf("text = %q, want %q", text, want)
	}

	var added memory.AddResult
	e.mustOK(t, "add_memory", pairArgs, &added)
	text = e.mustOK(t, "get_user_profile", `{"include_knowledge": true, "include_assistant_knowledge": true}`, &res)
	for _, want := range []string{"1 exchange stored", "none is needed", "retrieve_memory"} {
		if !strings.Contains(text, want) {
			t.Errorf("text = %q, want it to contain %q", text, want)
		}
	}
	if strings.Contains(text, "pending") {
		t.Errorf("text = %q, want no pending turns in the keyless mode", text)
	}
}

func TestFlushMemoryWithoutLLM(t *testing.T) {
	e := newEnv(t)
	var res memory.FlushResult
	text := e.mustOK(t, "flush_memory", `{}`, &res)
	if want := "Nothing was processed for user default: " + res.Reason + "."; text != want || !strings.Contains(res.Reason, "none is needed") {
		t.Errorf("text = %q, want %q saying no model is needed", text, want)
	}

	var added memory.AddResult
	e.mustOK(t, "add_memory", pairArgs, &added)
	e.mustOK(t, "add_memory", messagesArgs, &added)
	text = e.mustOK(t, "flush_memory", `{}`, &res)
	if res.TurnsProcessed != 0 || res.Pending.Turns != 0 || len(res.FactsAdded) != 0 || !strings.Contains(res.Reason, "nothing waits") {
		t.Errorf("flush = %+v, want nothing processed, nothing pending and why", res)
	}
	if want := "Nothing was processed for user default: " + res.Reason + "."; text != want {
		t.Errorf("text = %q, want %q", text, want)
	}

	text = e.mustOK(t, "flush_memory", `{"thread_id": "t2"}`, &res)
	if res.Pending.Threads["t2"] != 0 || res.Reason == "" {
		t.Errorf("flush of t2 = %+v, want nothing pending and why", res)
	}
	if want := "Nothing was processed for user default, thread t2: " + res.Reason + "."; text != want {
		t.Errorf("text = %q, want %q", text, want)
	}
}

// TestLenientArguments covers what clients commonly send that the schema
// does not describe: nulls for omitted arguments, and objects or arrays
// serialised into JSON strings.
func TestLenientArguments(t *testing.T) {
	e := newEnv(t)
	var added memory.AddResult
	e.mustOK(t, "add_memory", `{
		"user_input": "My cat is called Miso.", "agent_response": "Lovely name!",
		"thread_id": null, "timestamp": null, "user_id": null,
		"meta_data": "{\"source\": \"stringified\", \"n\": 2}"
	}`, &added)
	if added.ThreadID != "default" {
		t.Errorf("thread = %q, want default for a null thread_id", added.ThreadID)
	}
	e.mustOK(t, "add_memory", `{"messages": "[{\"role\": \"user\", \"content\": \"Miso is three years old.\"}, {\"role\": \"assistant\", \"content\": \"Noted.\", \"tool_calls\": null}]"}`, &added)
	if len(added.TurnIDs) != 1 || added.Filter.Kept != 2 {
		t.Errorf("stringified messages: %+v, want 1 turn of 2 messages", added)
	}

	var res memory.RetrieveResult
	e.mustOK(t, "retrieve_memory", `{"query": "cat called Miso", "max_results": null, "max_tokens": null, "style_hint": null}`, &res)
	if len(res.Pages) == 0 || res.Pages[0].ID != added.TurnIDs[0] && res.Pages[0].ID != "turn_0001" {
		t.Fatalf("pages = %+v, want the stored exchanges", res.Pages)
	}
	for _, p := range res.Pages {
		if p.ID == "turn_0001" {
			assertSameJSON(t, p.MetaData, `{"source": "stringified", "n": 2}`)
		}
	}
}

// TestAddMemoryRetry sends the same add_memory call twice, as a client
// retrying after a time-out: the second answers with the stored turn.
func TestAddMemoryRetry(t *testing.T) {
	e := newEnv(t)
	args := `{"user_input": "I sail a Contessa 32.", "agent_response": "Noted.", "thread_id": "t1", "idempotency_key": "0b9e-41"}`
	var first, again memory.AddResult
	e.mustOK(t, "add_memory", args, &first)
	text := e.mustOK(t, "add_memory", args, &again)
	if first.Duplicate || !again.Duplicate || !reflect.DeepEqual(again.TurnIDs, first.TurnIDs) {
		t.Errorf("retry = %+v after %+v, want a duplicate answered with the first turn", again, first)
	}
	if !strings.HasPrefix(text, "Already stored as 1 turn ("+first.TurnIDs[0]+")") {
		t.Errorf("text = %q, want it to say the exchange was already stored", text)
	}
	var list memory.ListResult
	e.mustOK(t, "list_memories", `{"kind": "turns"}`, &list)
	if len(list.Turns) != 1 {
		t.Errorf("list_memories turns = %d, want 1", len(list.Turns))
	}
}
