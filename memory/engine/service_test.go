package engine

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/mnemo-mcp/mnemo/memory"
)

func TestAddAndRetrieve(t *testing.T) {
	s := newTestService(t, newMemStore(), memory.DefaultConfig())
	ctx := t.Context()
	res, err := s.Add(ctx, memory.AddRequest{
		ThreadID:      "trip",
		UserInput:     "I'm planning a trip to Kyoto in April",
		AgentResponse: "Cherry blossom season! Book early.",
		Timestamp:     "2024-03-01 10:00:00",
		MetaData:      json.RawMessage(`{"dia_ids": ["D1:1", "D1:2"], "n": 1}`),
	})
	if err != nil {
		t.Fatalf("Add() = %v", err)
	}
	if len(res.TurnIDs) != 1 || res.Pending.Turns != 1 || res.Filter.Kept != 2 {
		t.Errorf("Add() = %+v, want one turn, one pending, two kept", res)
	}
	addPair(t, s, "other", "My cat is called Miso", "Cute name")
	got, err := s.Retrieve(ctx, memory.RetrieveRequest{ThreadID: "trip", Query: "When is the Kyoto trip?"})
	if err != nil {
		t.Fatalf("Retrieve() = %v", err)
	}
	if len(got.Pages) == 0 || !strings.Contains(got.Pages[0].User, "Kyoto") {
		t.Fatalf("Retrieve() pages = %+v, want the Kyoto exchange first", got.Pages)
	}
	if string(got.Pages[0].MetaData) != `{"dia_ids":["D1:1","D1:2"],"n":1}` {
		t.Errorf("meta_data = %s, want it back verbatim", got.Pages[0].MetaData)
	}
	if got.Pages[0].Time.Format("2006-01-02") != "2024-03-01" {
		t.Errorf("timestamp = %v", got.Pages[0].Time)
	}
	if len(got.Recent) != 1 || got.Recent[0].User != "I'm planning a trip to Kyoto in April" {
		t.Errorf("recent = %+v, want the trip thread's exchange", got.Recent)
	}
	if !strings.Contains(got.Injection, "Kyoto") || got.InjectionTokens > s.cfg.MaxInjectionTokens {
		t.Errorf("injection = %q (%d tokens)", got.Injection, got.InjectionTokens)
	}
}

func TestAddMessagesForm(t *testing.T) {
	s := newTestService(t, newMemStore(), memory.DefaultConfig())
	res, err := s.Add(t.Context(), memory.AddRequest{Messages: []memory.Message{
		{Role: memory.RoleSystem, Content: "You are helpful."},
		{Role: memory.RoleUser, Content: "What's the weather?"},
		{Role: memory.RoleAssistant, ToolCalls: []memory.ToolCall{{ID: "1"}}},
		{Role: memory.RoleTool, Content: "sunny", ToolCallID: "1"},
		{Role: memory.RoleAssistant, Content: "Sunny today."},
		{Role: memory.RoleUser, Content: "That's wrong, it is raining."},
		{Role: memory.RoleAssistant, Content: "Sorry, raining then."},
	}})
	if err != nil {
		t.Fatalf("Add() = %v", err)
	}
	if len(res.TurnIDs) != 2 || !res.Signals.Correction || res.Filter.Dropped() != 3 {
		t.Errorf("Add() = %+v, want 2 turns, a correction, 3 dropped", res)
	}
}

func TestAddNothingKept(t *testing.T) {
	s := newTestService(t, newMemStore(), memory.DefaultConfig())
	res, err := s.Add(t.Context(), memory.AddRequest{Messages: []memory.Message{{Role: memory.RoleTool, Content: "x"}}})
	if err != nil {
		t.Fatalf("Add() = %v", err)
	}
	if len(res.TurnIDs) != 0 || res.Note == "" {
		t.Errorf("Add() = %+v, want no turns and a note", res)
	}
}

func TestAddRejectsBadInput(t *testing.T) {
	big := strings.Repeat("x", 70<<10)
	tests := []struct {
		name  string
		req   memory.AddRequest
		field string
	}{
		{"nothing", memory.AddRequest{}, "user_input"},
		{"both forms", memory.AddRequest{UserInput: "a", Messages: []memory.Message{{Role: memory.RoleUser, Content: "b"}}}, "messages"},
		{"bad user", memory.AddRequest{UserID: "../etc", UserInput: "a"}, "user_id"},
		{"bad agent", memory.AddRequest{AgentName: "a/b", UserInput: "a"}, "agent_name"},
		{"bad thread", memory.AddRequest{ThreadID: "..", UserInput: "a"}, "thread_id"},
		{"bad role", memory.AddRequest{Messages: []memory.Message{{Role: "wizard", Content: "b"}}}, "messages[0].role"},
		{"control char", memory.AddRequest{UserInput: "a\x00b"}, "user_input"},
		{"invalid utf8", memory.AddRequest{UserInput: "a\xffb"}, "user_input"},
		{"too big", memory.AddRequest{UserInput: big}, "user_input"},
		{"timestamp", memory.AddRequest{UserInput: "a", Timestamp: "soon"}, "timestamp"},
		{"meta array", memory.AddRequest{UserInput: "a", MetaData: json.RawMessage(`[1]`)}, "meta_data"},
		{"meta invalid", memory.AddRequest{UserInput: "a", MetaData: json.RawMessage(`{"a":`)}, "meta_data"},
		{"meta deep", memory.AddRequest{UserInput: "a", MetaData: json.RawMessage(`{"a":` + strings.Repeat("[", 40) + strings.Repeat("]", 40) + `}`)}, "meta_data"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			store := newMemStore()
			s := newTestService(t, store, memory.DefaultConfig())
			_, err := s.Add(t.Context(), tt.req)
			if !errors.Is(err, memory.ErrInvalidInput) || !strings.HasPrefix(err.Error(), tt.field) {
				t.Errorf("Add() = %v, want an input error naming %s", err, tt.field)
			}
			if len(store.turns) != 0 {
				t.Errorf("Add() stored turns despite the error")
			}
		})
	}
}

func TestRetrieveRejectsBadInput(t *testing.T) {
	s := newTestService(t, newMemStore(), memory.DefaultConfig())
	tests := []struct {
		req   memory.RetrieveRequest
		field string
	}{
		{memory.RetrieveRequest{}, "query"},
		{memory.RetrieveRequest{Query: "x", MaxResults: -1}, "max_results"},
		{memory.RetrieveRequest{Query: "x", MaxResults: 101}, "max_results"},
		{memory.RetrieveRequest{Query: "x", MaxTokens: 5}, "max_tokens"},
		{memory.RetrieveRequest{Query: "x", UserID: "a b"}, "user_id"},
	}
	for _, tt := range tests {
		if _, err := s.Retrieve(t.Context(), tt.req); !errors.Is(err, memory.ErrInvalidInput) || !strings.HasPrefix(err.Error(), tt.field) {
			t.Errorf("Retrieve(%+v) = %v, want an input error naming %s", tt.req, err, tt.field)
		}
	}
}

func TestRetrieveSeesOtherProcessWrites(t *testing.T) {
	store := newMemStore()
	a := newTestService(t, store, memory.DefaultConfig())
	b := newTestService(t, store, memory.DefaultConfig())
	addPair(t, a, "t", "my favourite colour is teal", "noted")
	got, err := b.Retrieve(t.Context(), memory.RetrieveRequest{Query: "favourite colour"})
	if err != nil {
		t.Fatal(err)
	}
	if len(got.Pages) != 1 {
		t.Errorf("second service found %d pages, want the first one's turn", len(got.Pages))
	}
}

func TestRecentIsShortTermWindow(t *testing.T) {
	s := newTestService(t, newMemStore(), memory.DefaultConfig())
	for i := range 15 {
		addPair(t, s, "t", fmt.Sprintf("message %d", i), "ok")
	}
	got, err := s.Retrieve(t.Context(), memory.RetrieveRequest{ThreadID: "t", Query: "message"})
	if err != nil {
		t.Fatal(err)
	}
	if len(got.Recent) != 10 || got.Recent[0].User != "message 5" || got.Recent[9].User != "message 14" {
		t.Errorf("recent = %+v, want messages 5..14", got.Recent)
	}
}

func TestPendingInfoStaysSmall(t *testing.T) {
	s := newTestService(t, newMemStore(), memory.DefaultConfig())
	for i := range 30 {
		addPair(t, s, fmt.Sprintf("t%02d", i), "hello", "hi")
	}
	res, err := s.Add(t.Context(), memory.AddRequest{ThreadID: "t00", UserInput: "again", AgentResponse: "ok"})
	if err != nil {
		t.Fatal(err)
	}
	p := res.Pending
	if p.Turns != 31 || len(p.Threads) > maxPendingThreads+1 || p.Threads["t00"] != 2 || len(p.Threads)+p.OtherThreads != 30 {
		t.Errorf("Pending = %+v, want 31 turns, t00 listed with 2, at most %d threads listed, the rest counted", p, maxPendingThreads+1)
	}
}
