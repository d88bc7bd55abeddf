package memory

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
)

func TestAddAndRetrieve(t *testing.T) {
	s := newTestService(t, newMemStore())
	ctx := t.Context()
	res, err := s.Add(ctx, AddRequest{
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
	got, err := s.Retrieve(ctx, RetrieveRequest{ThreadID: "trip", Query: "When is the Kyoto trip?"})
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
	s := newTestService(t, newMemStore())
	res, err := s.Add(t.Context(), AddRequest{Messages: []Message{
		{Role: RoleSystem, Content: "You are helpful."},
		{Role: RoleUser, Content: "What's the weather?"},
		{Role: RoleAssistant, ToolCalls: []ToolCall{{ID: "1"}}},
		{Role: RoleTool, Content: "sunny", ToolCallID: "1"},
		{Role: RoleAssistant, Content: "Sunny today."},
		{Role: RoleUser, Content: "That's wrong, it is raining."},
		{Role: RoleAssistant, Content: "Sorry, raining then."},
	}})
	if err != nil {
		t.Fatalf("Add() = %v", err)
	}
	if len(res.TurnIDs) != 2 || !res.Signals.Correction || res.Filter.Dropped() != 3 {
		t.Errorf("Add() = %+v, want 2 turns, a correction, 3 dropped", res)
	}
}

func TestAddNothingKept(t *testing.T) {
	s := newTestService(t, newMemStore())
	res, err := s.Add(t.Context(), AddRequest{Messages: []Message{{Role: RoleTool, Content: "x"}}})
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
		req   AddRequest
		field string
	}{
		{"nothing", AddRequest{}, "user_input"},
		{"both forms", AddRequest{UserInput: "a", Messages: []Message{{Role: RoleUser, Content: "b"}}}, "messages"},
		{"bad user", AddRequest{UserID: "../etc", UserInput: "a"}, "user_id"},
		{"bad agent", AddRequest{AgentName: "a/b", UserInput: "a"}, "agent_name"},
		{"bad thread", AddRequest{ThreadID: "..", UserInput: "a"}, "thread_id"},
		{"bad role", AddRequest{Messages: []Message{{Role: "wizard", Content: "b"}}}, "messages[0].role"},
		{"control char", AddRequest{UserInput: "a\x00b"}, "user_input"},
		{"invalid utf8", AddRequest{UserInput: "a\xffb"}, "user_input"},
		{"too big", AddRequest{UserInput: big}, "user_input"},
		{"timestamp", AddRequest{UserInput: "a", Timestamp: "soon"}, "timestamp"},
		{"meta array", AddRequest{UserInput: "a", MetaData: json.RawMessage(`[1]`)}, "meta_data"},
		{"meta invalid", AddRequest{UserInput: "a", MetaData: json.RawMessage(`{"a":`)}, "meta_data"},
		{"meta deep", AddRequest{UserInput: "a", MetaData: json.RawMessage(`{"a":` + strings.Repeat("[", 40) + strings.Repeat("]", 40) + `}`)}, "meta_data"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			store := newMemStore()
			s := newTestService(t, store)
			_, err := s.Add(t.Context(), tt.req)
			if !errors.Is(err, ErrInvalidInput) || !strings.HasPrefix(err.Error(), tt.field) {
				t.Errorf("Add() = %v, want an input error naming %s", err, tt.field)
			}
			if len(store.turns) != 0 {
				t.Errorf("Add() stored turns despite the error")
			}
		})
	}
}

func TestRetrieveRejectsBadInput(t *testing.T) {
	s := newTestService(t, newMemStore())
	tests := []struct {
		req   RetrieveRequest
		field string
	}{
		{RetrieveRequest{}, "query"},
		{RetrieveRequest{Query: "x", MaxResults: -1}, "max_results"},
		{RetrieveRequest{Query: "x", MaxResults: 101}, "max_results"},
		{RetrieveRequest{Query: "x", MaxTokens: 5}, "max_tokens"},
		{RetrieveRequest{Query: "x", UserID: "a b"}, "user_id"},
	}
	for _, tt := range tests {
		if _, err := s.Retrieve(t.Context(), tt.req); !errors.Is(err, ErrInvalidInput) || !strings.HasPrefix(err.Error(), tt.field) {
			t.Errorf("Retrieve(%+v) = %v, want an input error naming %s", tt.req, err, tt.field)
		}
	}
}

func TestRetrieveSeesOtherProcessWrites(t *testing.T) {
	store := newMemStore()
	a := newTestService(t, store)
	b := newTestService(t, store)
	addPair(t, a, "t", "my favourite colour is teal", "noted")
	got, err := b.Retrieve(t.Context(), RetrieveRequest{Query: "favourite colour"})
	if err != nil {
		t.Fatal(err)
	}
	if len(got.Pages) != 1 {
		t.Errorf("second service found %d pages, want the first one's turn", len(got.Pages))
	}
}

func TestRecentIsShortTermWindow(t *testing.T) {
	s := newTestService(t, newMemStore())
	for i := range 15 {
		addPair(t, s, "t", fmt.Sprintf("message %d", i), "ok")
	}
	got, err := s.Retrieve(t.Context(), RetrieveRequest{ThreadID: "t", Query: "message"})
	if err != nil {
		t.Fatal(err)
	}
	if len(got.Recent) != 10 || got.Recent[0].User != "message 5" || got.Recent[9].User != "message 14" {
		t.Errorf("recent = %+v, want messages 5..14", got.Recent)
	}
}

func TestPendingInfoStaysSmall(t *testing.T) {
	s := newTestService(t, newMemStore())
	for i := range 30 {
		addPair(t, s, fmt.Sprintf("t%02d", i), "hello", "hi")
	}
	res, err := s.Add(t.Context(), AddRequest{ThreadID: "t00", UserInput: "again", AgentResponse: "ok"})
	if err != nil {
		t.Fatal(err)
	}
	p := res.Pending
	if p.Turns != 31 || len(p.Threads) > maxPendingThreads+1 || p.Threads["t00"] != 2 || len(p.Threads)+p.OtherThreads != 30 {
		t.Errorf("Pending = %+v, want 31 turns, t00 listed with 2, at most %d threads listed, the rest counted", p, maxPendingThreads+1)
	}
}
