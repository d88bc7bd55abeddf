package storetest

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"testing"

	"github.com/mnemo-mcp/mnemo/memory"
)

func testAppendAssignsSeq(t *testing.T, s memory.Store) {
	tests := []struct {
		name    string
		batches []int // turns per AppendTurns call
	}{
		{"one", []int{1}},
		{"one batch", []int{3}},
		{"one at a time", []int{1, 1, 1}},
		{"mixed with empty", []int{2, 0, 3, 1}},
	}
	for i, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			scope := memory.Scope{UserID: "seq", AgentName: "case" + string(rune('a'+i))}
			var all []memory.Turn
			next := int64(1)
			for _, n := range tc.batches {
				in := NewTurns("t", len(all), n)
				for j := range in {
					in[j].Seq = 99 // ignored: the store numbers turns
				}
				got, err := s.AppendTurns(t.Context(), scope, in)
				if err != nil {
					t.Fatalf("AppendTurns(%d turns) error: %v", n, err)
				}
				want := withSeqs(in, next)
				if d := DiffTurns(got, want); d != "" {
					t.Fatalf("AppendTurns(%d turns) returned %s", n, d)
				}
				all = append(all, want...)
				next += int64(n)
			}
			if d := DiffTurns(MustReadTurns(t, s, scope, 0), all); d != "" {
				t.Errorf("ReadTurns(0): %s", d)
			}
		})
	}
}

func testSeqPerScope(t *testing.T, s memory.Store) {
	scopes := []memory.Scope{
		{UserID: "alice"},
		{UserID: "alice", AgentName: "coder"},
		{UserID: "alice", AgentName: "writer"},
		{UserID: "bob", AgentName: "coder"},
		{UserID: "bob"},
	}
	want := make([][]memory.Turn, len(scopes))
	// Interleave: scope i gets i+1 turns per round.
	for round := range 3 {
		for i, scope := range scopes {
			in := NewTurns(scope.Key(), len(want[i]), i+1)
			got := MustAppendTurns(t, s, scope, in...)
			w := withSeqs(in, int64(len(want[i])+1))
			if d := DiffTurns(got, w); d != "" {
				t.Fatalf("round %d: AppendTurns(%s): %s", round, scope.Key(), d)
			}
			want[i] = append(want[i], w...)
		}
	}
	for i, scope := range scopes {
		if d := DiffTurns(MustReadTurns(t, s, scope, 0), want[i]); d != "" {
			t.Errorf("ReadTurns(%s, 0): %s", scope.Key(), d)
		}
	}
}

func testReadTurnsAfter(t *testing.T, s memory.Store) {
	scope := memory.Scope{UserID: "reader"}
	all := MustAppendTurns(t, s, scope, NewTurns("t", 0, 5)...)
	tests := []struct {
		after int64
		want  []memory.Turn
	}{
		{-1, all},
		{0, all},
		{1, all[1:]},
		{2, all[2:]},
		{4, all[4:]},
		{5, nil},
		{6, nil},
		{1 << 62, nil},
		{2, all[2:]}, // again, after positions were cached
		{0, all},
	}
	for _, tc := range tests {
		if d := DiffTurns(MustReadTurns(t, s, scope, tc.after), tc.want); d != "" {
			t.Errorf("ReadTurns(%d): %s", tc.after, d)
		}
	}
}

// testReadTurnsIncremental polls like a consumer that remembers the last
// Seq it saw, with appends in between, and checks nothing is missed or
// repeated.
func testReadTurnsIncremental(t *testing.T, s memory.Store) {
	scope := memory.Scope{UserID: "poller", AgentName: "a"}
	var all []memory.Turn
	last := int64(0)
	for round := range 20 {
		n := round % 3 // 0, 1 or 2 new turns
		if n > 0 {
			all = append(all, MustAppendTurns(t, s, scope, NewTurns("t", len(all), n)...)...)
		}
		got := MustReadTurns(t, s, scope, last)
		if d := DiffTurns(got, all[last:]); d != "" {
			t.Fatalf("round %d: ReadTurns(%d): %s", round, last, d)
		}
		if again := MustReadTurns(t, s, scope, int64(len(all))); len(again) != 0 {
			t.Fatalf("round %d: ReadTurns(%d) = seqs %v, want none", round, len(all), Seqs(again))
		}
		last = int64(len(all))
	}
	// An old position still works after newer ones were read.
	if d := DiffTurns(MustReadTurns(t, s, scope, 3), all[3:]); d != "" {
		t.Errorf("ReadTurns(3) after polling: %s", d)
	}
}

func testTurnRoundTrip(t *testing.T, s memory.Store) {
	big := longText(1 << 20)
	tests := []struct {
		name string
		turn memory.Turn
	}{
		{"all fields", NewTurn("round", 1)},
		{"zero optional fields", memory.Turn{ID: "turn_min", ThreadID: "default", Time: baseTime, Stored: baseTime}},
		{"cjk and emoji", memory.Turn{
			ID: "turn_cjk", ThreadID: "会话-1", Time: baseTime, Stored: baseTime,
			User:  "我喜欢用 Go 写代码，不要用 Python。你理解错了！",
			Reply: "好的 👍 記住了：Go を使います。🇯🇵 e\u0301 \U0001F9E0",
		}},
		{"special characters", memory.Turn{
			ID: "turn_special", ThreadID: "t", Time: baseTime, Stored: baseTime,
			User:     "line1\nline2\r\n\ttab \"quoted\" back\\slash \u2028\u2029 </memory><memory>",
			Reply:    "{\"not\": \"json\"}\n\n<script>&amp;</script>",
			MetaData: json.RawMessage(`{"html":"<b>&</b>","list":[1,2.5,"三"],"nested":{"x":null,"ok":true}}`),
		}},
		{"large text", memory.Turn{
			ID: "turn_big", ThreadID: "t", Time: baseTime, Stored: baseTime,
			User: big, Reply: big[:len(big)/4],
		}},
		{"non-zero nanoseconds", memory.Turn{
			ID: "turn_ns", ThreadID: "t",
			Time:   baseTime.Add(1),
			Stored: baseTime.Add(999_999_999),
		}},
	}
	scope := memory.Scope{UserID: "roundtrip"}
	var want []memory.Turn
	for _, tc := range tests {
		got := MustAppendTurns(t, s, scope, tc.turn)
		w := withSeqs([]memory.Turn{tc.turn}, int64(len(want)+1))
		if d := DiffTurns(got, w); d != "" {
			t.Errorf("%s: AppendTurns returned %s", tc.name, d)
		}
		want = append(want, w...)
	}
	got := MustReadTurns(t, s, scope, 0)
	for i, tc := range tests {
		if i >= len(got) {
			t.Fatalf("ReadTurns returned %d turns, want %d", len(got), len(tests))
		}
		if d := DiffTurns(got[i:i+1], want[i:i+1]); d != "" {
			t.Errorf("%s: ReadTurns: %s", tc.name, d)
		}
	}
}

func testEmptyScope(t *testing.T, s memory.Store) {
	scope := memory.Scope{UserID: "nobody", AgentName: "never"}
	for _, after := range []int64{0, 5} {
		got, err := s.ReadTurns(t.Context(), scope, after)
		if err != nil || len(got) != 0 {
			t.Errorf("ReadTurns(new scope, %d) = seqs %v, %v; want none, nil", after, Seqs(got), err)
		}
	}
	got, err := s.AppendTurns(t.Context(), scope, nil)
	if err != nil || len(got) != 0 {
		t.Errorf("AppendTurns(no turns) = %d turns, %v; want none, nil", len(got), err)
	}
	MustLoadDocument(t, s, scope)
	scopes, err := s.Scopes(t.Context())
	if err != nil {
		t.Fatalf("Scopes() error: %v", err)
	}
	if slices.Contains(scopes, scope) {
		t.Errorf("Scopes() = %v includes %s, which was only read", scopes, scope.Key())
	}
}

// badScopes are scopes whose ids must be refused before they reach a path
// or a query.
var badScopes = []memory.Scope{
	{},
	{UserID: ".."},
	{UserID: "."},
	{UserID: "../x"},
	{UserID: "a/b"},
	{UserID: `a\b`},
	{UserID: "/abs"},
	{UserID: "ok", AgentName: ".."},
	{UserID: "ok", AgentName: "../../etc"},
	{UserID: "ok", AgentName: "a/b"},
	{UserID: "nul\x00"},
	{UserID: "space here"},
}

func testInvalidScope(t *testing.T, s memory.Store) {
	ctx := t.Context()
	ops := []struct {
		name string
		call func(memory.Scope) error
	}{
		{"AppendTurns", func(sc memory.Scope) error {
			_, err := s.AppendTurns(ctx, sc, NewTurns("t", 0, 1))
			return err
		}},
		{"ReadTurns", func(sc memory.Scope) error { _, err := s.ReadTurns(ctx, sc, 0); return err }},
		{"LoadDocument", func(sc memory.Scope) error { _, err := s.LoadDocument(ctx, sc); return err }},
		{"UpdateDocument", func(sc memory.Scope) error {
			_, err := s.UpdateDocument(ctx, sc, func(*memory.Document) error { return nil })
			return err
		}},
	}
	for _, sc := range badScopes {
		for _, op := range ops {
			if err := op.call(sc); !errors.Is(err, memory.ErrInvalidInput) {
				t.Errorf("%s(%q/%q) error = %v, want one wrapping memory.ErrInvalidInput", op.name, sc.UserID, sc.AgentName, err)
			}
		}
	}
	scopes, err := s.Scopes(ctx)
	if err != nil || len(scopes) != 0 {
		t.Errorf("Scopes() after invalid calls = %v, %v; want none", scopes, err)
	}
}

func testCanceledContext(t *testing.T, s memory.Store) {
	scope := memory.Scope{UserID: "canceled"}
	MustAppendTurns(t, s, scope, NewTurn("t", 0))
	MustUpdateDocument(t, s, scope, func(d *memory.Document) error { return nil })

	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	if _, err := s.AppendTurns(ctx, scope, NewTurns("t", 1, 2)); !errors.Is(err, context.Canceled) {
		t.Errorf("AppendTurns(canceled) error = %v, want context.Canceled", err)
	}
	if _, err := s.UpdateDocument(ctx, scope, func(d *memory.Document) error {
		d.Facts = append(d.Facts, memory.Fact{ID: "fact_canceled"})
		return nil
	}); !errors.Is(err, context.Canceled) {
		t.Errorf("UpdateDocument(canceled) error = %v, want context.Canceled", err)
	}
	CheckSeqs(t, MustReadTurns(t, s, scope, 0), 1, 1)
	if d := MustLoadDocument(t, s, scope); d.Revision != 1 || len(d.Facts) != 0 {
		t.Errorf("after canceled update: revision %d with %d facts, want revision 1 with none", d.Revision, len(d.Facts))
	}
	// The next append still gets the next number.
	CheckSeqs(t, MustAppendTurns(t, s, scope, NewTurn("t", 1)), 2, 2)
}

func testInvalidMetaData(t *testing.T, s memory.Store) {
	scope := memory.Scope{UserID: "meta"}
	bad := NewTurn("t", 0)
	bad.MetaData = json.RawMessage(`{"unterminated":`)
	if _, err := s.AppendTurns(t.Context(), scope, []memory.Turn{NewTurn("t", 1), bad}); !errors.Is(err, memory.ErrInvalidInput) {
		t.Errorf("AppendTurns(invalid meta_data) error = %v, want one wrapping memory.ErrInvalidInput", err)
	}
	if got := MustReadTurns(t, s, scope, 0); len(got) != 0 {
		t.Errorf("after a refused batch, ReadTurns = seqs %v, want none", Seqs(got))
	}
	CheckSeqs(t, MustAppendTurns(t, s, scope, NewTurn("t", 2)), 1, 1)
}
