package storetest

import (
	"errors"
	"reflect"
	"slices"
	"testing"
	"time"

	"github.com/mnemo-mcp/mnemo/memory"
)

func testDeleteTurns(t *testing.T, s memory.Store) {
	ctx := t.Context()
	scope := memory.Scope{UserID: "alice"}
	other := memory.Scope{UserID: "alice", AgentName: "coder"}
	stored := MustAppendTurns(t, s, scope, append(NewTurns("a", 0, 3), NewTurns("b", 0, 3)...)...)
	MustAppendTurns(t, s, other, NewTurns("a", 0, 2)...)
	MustUpdateDocument(t, s, scope, func(d *memory.Document) error {
		d.Watermarks = map[string]int64{"a": 3, "b": 6}
		return nil
	})
	before := MustLoadDocument(t, s, scope)

	// A reader that has read the whole log, to check it is not misled.
	MustReadTurns(t, s, scope, 0)
	removed, err := s.DeleteTurns(ctx, scope, func(tu memory.Turn) bool {
		return tu.ThreadID == "b" || tu.ID == stored[1].ID
	})
	if err != nil {
		t.Fatalf("DeleteTurns() error: %v", err)
	}
	if got, want := Seqs(removed), []int64{2, 4, 5, 6}; !slices.Equal(got, want) {
		t.Errorf("DeleteTurns() removed seqs %v, want %v", got, want)
	}
	left := MustReadTurns(t, s, scope, 0)
	if d := DiffTurns(left, []memory.Turn{stored[0], stored[2]}); d != "" {
		t.Errorf("turns left after DeleteTurns differ: %s", d)
	}
	if got := MustReadTurns(t, s, scope, 1); len(got) != 1 || got[0].Seq != 3 {
		t.Errorf("ReadTurns(after 1) = seqs %v, want [3]", Seqs(got))
	}
	doc := MustLoadDocument(t, s, scope)
	if doc.TurnLogEpoch != before.TurnLogEpoch+1 {
		t.Errorf("TurnLogEpoch = %d, want %d", doc.TurnLogEpoch, before.TurnLogEpoch+1)
	}
	if _, ok := doc.Watermarks["b"]; ok || doc.Watermarks["a"] != 3 {
		t.Errorf("watermarks = %v, want a:3 and no b (its turns are gone)", doc.Watermarks)
	}
	if got := MustReadTurns(t, s, other, 0); len(got) != 2 {
		t.Errorf("DeleteTurns touched another scope: it holds %d turns, want 2", len(got))
	}

	// New turns follow the last turn left, above every watermark.
	next := MustAppendTurns(t, s, scope, NewTurn("a", 9))
	if next[0].Seq != 4 {
		t.Errorf("append after delete got seq %d, want 4", next[0].Seq)
	}
	if got := MustReadTurns(t, s, scope, 3); len(got) != 1 || got[0].ID != next[0].ID {
		t.Errorf("ReadTurns(after 3) = %v, want the new turn", Seqs(got))
	}
	// Removing the last turn lowers the watermark, so the next turn, which
	// reuses its seq, is not taken as processed.
	MustUpdateDocument(t, s, scope, func(d *memory.Document) error { d.Watermarks["a"] = 4; return nil })
	if _, err := s.DeleteTurns(ctx, scope, func(tu memory.Turn) bool { return tu.Seq == 4 }); err != nil {
		t.Fatalf("DeleteTurns(last) error: %v", err)
	}
	if wm := MustLoadDocument(t, s, scope).Watermarks["a"]; wm != 3 {
		t.Errorf("watermark after removing the last turn = %d, want 3", wm)
	}

	// Nothing matching changes nothing.
	rev := MustLoadDocument(t, s, scope)
	removed, err = s.DeleteTurns(ctx, scope, func(memory.Turn) bool { return false })
	if err != nil || len(removed) != 0 {
		t.Errorf("DeleteTurns(nothing) = %d turns, %v; want none", len(removed), err)
	}
	if d := MustLoadDocument(t, s, scope); d.Revision != rev.Revision {
		t.Errorf("DeleteTurns(nothing) saved the document (revision %d → %d)", rev.Revision, d.Revision)
	}
	// Everything: the log reads empty and starts again.
	if _, err := s.DeleteTurns(ctx, scope, func(memory.Turn) bool { return true }); err != nil {
		t.Fatalf("DeleteTurns(all) error: %v", err)
	}
	if got := MustReadTurns(t, s, scope, 0); len(got) != 0 {
		t.Errorf("after deleting every turn, %d remain", len(got))
	}
	if wm := MustLoadDocument(t, s, scope).Watermarks; len(wm) != 0 {
		t.Errorf("watermarks after deleting every turn = %v, want none", wm)
	}
	if got := MustAppendTurns(t, s, scope, NewTurn("c", 0)); got[0].Seq != 1 {
		t.Errorf("first turn after deleting all got seq %d, want 1", got[0].Seq)
	}
	if _, err := s.DeleteTurns(ctx, memory.Scope{UserID: "../x"}, func(memory.Turn) bool { return true }); !errors.Is(err, memory.ErrInvalidInput) {
		t.Errorf("DeleteTurns(bad scope) error = %v, want ErrInvalidInput", err)
	}
}

func testImportScope(t *testing.T, s memory.Store) {
	ctx := t.Context()
	scope := memory.Scope{UserID: "imported", AgentName: "bot"}
	turns := NewTurns("x", 0, 3)
	for i := range turns {
		turns[i].Seq = int64(i*2 + 5) // gaps, as after forgotten turns
	}
	when := time.Date(2024, 5, 6, 7, 8, 9, 10, time.UTC)
	doc := memory.NewDocument()
	doc.Revision = 42
	doc.LastUpdated = when
	doc.User.WorkContext = memory.Section{Summary: "works on mnemo", UpdatedAt: when}
	doc.Facts = []memory.Fact{{ID: "fact_0000abcd", Content: "likes Go", Category: memory.CategoryPreference, Confidence: 0.9, CreatedAt: when, Source: "x"}}
	doc.Watermarks = map[string]int64{"x": 7}
	doc.FactEvents = []memory.FactEvent{{FactID: "fact_0000abcd", Event: memory.FactCreated, At: when, Source: "x", Reason: "extracted from thread x", Content: "likes Go"}}

	if err := s.ImportScope(ctx, scope, doc, turns); err != nil {
		t.Fatalf("ImportScope() error: %v", err)
	}
	if d := DiffTurns(MustReadTurns(t, s, scope, 0), turns); d != "" {
		t.Errorf("imported turns differ: %s", d)
	}
	got := MustLoadDocument(t, s, scope)
	if got.Revision != 42 || !got.LastUpdated.Equal(when) || got.Watermarks["x"] != 7 || len(got.Facts) != 1 ||
		!reflect.DeepEqual(got.Facts[0], doc.Facts[0]) || len(got.FactEvents) != 1 || got.User.WorkContext.Summary != "works on mnemo" {
		t.Errorf("imported document = %+v, want %+v", got, doc)
	}
	if next := MustAppendTurns(t, s, scope, NewTurn("x", 9)); next[0].Seq != 10 {
		t.Errorf("append after import got seq %d, want 10", next[0].Seq)
	}
	if !slices.Contains(mustScopes(t, s), scope) {
		t.Errorf("Scopes() lacks the imported scope")
	}

	if err := s.ImportScope(ctx, scope, doc, nil); !errors.Is(err, memory.ErrInvalidInput) {
		t.Errorf("ImportScope(non-empty scope) error = %v, want ErrInvalidInput", err)
	}
	onlyTurns := memory.Scope{UserID: "turns-only"}
	MustAppendTurns(t, s, onlyTurns, NewTurn("y", 0))
	if err := s.ImportScope(ctx, onlyTurns, doc, nil); !errors.Is(err, memory.ErrInvalidInput) {
		t.Errorf("ImportScope(scope with turns) error = %v, want ErrInvalidInput", err)
	}
	bad := NewTurns("z", 0, 2)
	bad[0].Seq, bad[1].Seq = 2, 2
	empty := memory.Scope{UserID: "empty"}
	if err := s.ImportScope(ctx, empty, nil, bad); !errors.Is(err, memory.ErrInvalidInput) {
		t.Errorf("ImportScope(turns out of order) error = %v, want ErrInvalidInput", err)
	}
	if len(MustReadTurns(t, s, empty, 0)) != 0 || MustLoadDocument(t, s, empty).Revision != 0 {
		t.Errorf("a refused import left data behind")
	}
}

func mustScopes(t *testing.T, s memory.Store) []memory.Scope {
	t.Helper()
	scopes, err := s.Scopes(t.Context())
	if err != nil {
		t.Fatalf("Scopes() error: %v", err)
	}
	return scopes
}
