package storetest

import (
	"cmp"
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/mnemo-mcp/mnemo/memory"
)

func testLoadNewDocument(t *testing.T, s memory.Store) {
	for _, scope := range []memory.Scope{{UserID: "fresh"}, {UserID: "fresh", AgentName: "agent"}} {
		d := MustLoadDocument(t, s, scope)
		if d.Version != memory.SchemaVersion || d.Revision != 0 || !d.LastUpdated.IsZero() {
			t.Errorf("LoadDocument(%s) = version %q, revision %d, lastUpdated %v; want %q, 0, zero",
				scope.Key(), d.Version, d.Revision, d.LastUpdated, memory.SchemaVersion)
		}
		if got, want := docJSON(t, d), docJSON(t, memory.NewDocument()); got != want {
			t.Errorf("LoadDocument(%s) =\n%s\nwant\n%s", scope.Key(), got, want)
		}
	}
}

func testUpdateDocument(t *testing.T, s memory.Store) {
	scope := memory.Scope{UserID: "updater", AgentName: "a"}
	var prev time.Time
	for i := int64(1); i <= 3; i++ {
		got := MustUpdateDocument(t, s, scope, func(d *memory.Document) error {
			if d.Revision != i-1 || len(d.Facts) != int(i-1) {
				t.Errorf("update %d: fn got revision %d with %d facts, want the latest document (revision %d)", i, d.Revision, len(d.Facts), i-1)
			}
			d.Facts = append(d.Facts, memory.Fact{ID: "fact_" + string(rune('0'+i)), Content: "fact", Category: memory.CategoryContext, Confidence: 0.9})
			// The store owns these two; whatever fn does to them is overridden.
			d.Revision = 1000
			d.LastUpdated = time.Time{}
			return nil
		})
		if got.Revision != i {
			t.Errorf("update %d: Revision = %d, want %d", i, got.Revision, i)
		}
		if got.LastUpdated.IsZero() || got.LastUpdated.Location() != time.UTC {
			t.Errorf("update %d: LastUpdated = %v, want a UTC time", i, got.LastUpdated)
		}
		if got.LastUpdated.Before(prev) {
			t.Errorf("update %d: LastUpdated = %v, before the previous %v", i, got.LastUpdated, prev)
		}
		prev = got.LastUpdated
		if a, b := docJSON(t, MustLoadDocument(t, s, scope)), docJSON(t, got); a != b {
			t.Errorf("update %d: LoadDocument =\n%s\nwant what UpdateDocument returned:\n%s", i, a, b)
		}
	}
}

func testUpdateDocumentRoundTrip(t *testing.T, s memory.Store) {
	scope := memory.Scope{UserID: "roundtrip-doc"}
	at := time.Date(2024, time.December, 31, 23, 59, 58, 123456789, time.UTC)
	fact := func(id, content, cat string, conf float64) memory.Fact {
		return memory.Fact{ID: id, Content: content, Category: cat, Confidence: conf, CreatedAt: at, Source: "thread-1"}
	}
	var want *memory.Document
	got := MustUpdateDocument(t, s, scope, func(d *memory.Document) error {
		d.User.WorkContext = memory.Section{Summary: "Works on mnemo, a Go MCP server.", UpdatedAt: at}
		d.User.PersonalContext = memory.Section{Summary: "住在东京，说中文和日语。", UpdatedAt: at.Add(time.Nanosecond)}
		d.User.TopOfMind = memory.Section{Summary: "Shipping the file store </memory> & <b>tests</b>"}
		d.History.RecentMonths = memory.Section{Summary: "Line one.\nLine two.\t\"quoted\"", UpdatedAt: at}
		d.History.EarlierContext = memory.Section{Summary: "🧠 emoji"}
		d.History.LongTermBackground = memory.Section{Summary: longText(64 << 10)}
		d.Facts = []memory.Fact{
			fact("fact_0a1b2c3d", "Prefers Go over Python", memory.CategoryPreference, 0.95),
			fact("fact_11111111", "用户喜欢简洁的代码", memory.CategoryPreference, 0.7),
			{ID: "fact_22222222", Content: "Do not suggest testify", Category: memory.CategoryCorrection, Confidence: 0.875,
				CreatedAt: at, Source: "manual", SourceError: "suggested testify"},
		}
		d.Knowledge = []memory.Fact{fact("fact_33333333", "Knows PostgreSQL", memory.CategoryKnowledge, 0.8)}
		d.AssistantKnowledge = []memory.Fact{fact("fact_44444444", "Promised a benchmark", memory.CategoryGoal, 0.75)}
		d.Watermarks = map[string]int64{"default": 3, "thread-1": 42, "会话": 7}
		want = d.Clone()
		return nil
	})
	want.Revision = 1
	want.LastUpdated = got.LastUpdated
	if a, b := docJSON(t, got), docJSON(t, want); a != b {
		t.Errorf("UpdateDocument returned\n%s\nwant\n%s", a, b)
	}
	if a, b := docJSON(t, MustLoadDocument(t, s, scope)), docJSON(t, want); a != b {
		t.Errorf("LoadDocument =\n%s\nwant\n%s", a, b)
	}
}

var errBoom = errors.New("boom")

func testUpdateDocumentError(t *testing.T, s memory.Store) {
	ruin := func(d *memory.Document) error {
		d.Facts = append(d.Facts, memory.Fact{ID: "fact_bad", Content: "must not be saved"})
		d.User.TopOfMind.Summary = "must not be saved"
		d.Watermarks = map[string]int64{"t": 99}
		d.Version = "9.9"
		return errBoom
	}

	t.Run("new scope", func(t *testing.T) {
		scope := memory.Scope{UserID: "failing", AgentName: "new"}
		if _, err := s.UpdateDocument(t.Context(), scope, ruin); !errors.Is(err, errBoom) {
			t.Fatalf("UpdateDocument(failing fn) error = %v, want one wrapping fn's error", err)
		}
		if got, want := docJSON(t, MustLoadDocument(t, s, scope)), docJSON(t, memory.NewDocument()); got != want {
			t.Errorf("after failed update, LoadDocument =\n%s\nwant a new document", got)
		}
		scopes, err := s.Scopes(t.Context())
		if err != nil {
			t.Fatalf("Scopes() error: %v", err)
		}
		if slices.Contains(scopes, scope) {
			t.Errorf("Scopes() = %v lists %s, which has nothing stored", scopes, scope.Key())
		}
	})

	t.Run("existing document", func(t *testing.T) {
		scope := memory.Scope{UserID: "failing"}
		MustUpdateDocument(t, s, scope, func(d *memory.Document) error {
			d.Facts = append(d.Facts, memory.Fact{ID: "fact_good", Content: "kept", Category: memory.CategoryContext, Confidence: 1})
			d.Watermarks = map[string]int64{"t": 1}
			return nil
		})
		before := docJSON(t, MustLoadDocument(t, s, scope))
		if _, err := s.UpdateDocument(t.Context(), scope, ruin); !errors.Is(err, errBoom) {
			t.Fatalf("UpdateDocument(failing fn) error = %v, want one wrapping fn's error", err)
		}
		if after := docJSON(t, MustLoadDocument(t, s, scope)); after != before {
			t.Errorf("after failed update, LoadDocument =\n%s\nwant it unchanged:\n%s", after, before)
		}
		if got := MustUpdateDocument(t, s, scope, func(*memory.Document) error { return nil }); got.Revision != 2 {
			t.Errorf("next update after a failed one: Revision = %d, want 2", got.Revision)
		}
	})
}

func testDocumentOwnedByCaller(t *testing.T, s memory.Store) {
	scope := memory.Scope{UserID: "owner"}
	var inFn *memory.Document
	saved := MustUpdateDocument(t, s, scope, func(d *memory.Document) error {
		d.Facts = append(d.Facts, memory.Fact{ID: "fact_1", Content: "original", Category: memory.CategoryContext, Confidence: 0.9})
		d.Watermarks = map[string]int64{"t": 1}
		inFn = d
		return nil
	})
	want := docJSON(t, saved)
	mutate := func(d *memory.Document) {
		d.Facts[0].Content = "mutated"
		d.Facts = append(d.Facts, memory.Fact{ID: "fact_x"})
		d.Watermarks["t"] = 99
		d.User.WorkContext.Summary = "mutated"
		d.Revision = 77
	}
	mutate(saved)
	if got := docJSON(t, MustLoadDocument(t, s, scope)); got != want {
		t.Errorf("changing the document UpdateDocument returned changed the stored one:\n%s", got)
	}
	mutate(inFn)
	if got := docJSON(t, MustLoadDocument(t, s, scope)); got != want {
		t.Errorf("changing the document fn was given, after the update, changed the stored one:\n%s", got)
	}
	mutate(MustLoadDocument(t, s, scope))
	if got := docJSON(t, MustLoadDocument(t, s, scope)); got != want {
		t.Errorf("changing a loaded document changed the stored one:\n%s", got)
	}
}

func testScopes(t *testing.T, s memory.Store) {
	ctx := t.Context()
	if got, err := s.Scopes(ctx); err != nil || len(got) != 0 {
		t.Fatalf("Scopes() of an empty store = %v, %v; want none", got, err)
	}
	want := []memory.Scope{
		{UserID: "u1"},
		{UserID: "u1", AgentName: "a1"},
		{UserID: "u2", AgentName: "a2"},
		{UserID: "u3"},
	}
	MustAppendTurns(t, s, want[0], NewTurn("t", 0))
	MustAppendTurns(t, s, want[1], NewTurn("t", 0))
	MustUpdateDocument(t, s, want[2], func(*memory.Document) error { return nil })
	MustUpdateDocument(t, s, want[3], func(*memory.Document) error { return nil })
	MustAppendTurns(t, s, want[3], NewTurn("t", 0))
	MustLoadDocument(t, s, memory.Scope{UserID: "u4"})
	MustReadTurns(t, s, memory.Scope{UserID: "u2"}, 0)

	got, err := s.Scopes(ctx)
	if err != nil {
		t.Fatalf("Scopes() error: %v", err)
	}
	byKey := func(a, b memory.Scope) int { return cmp.Compare(a.Key(), b.Key()) }
	slices.SortFunc(got, byKey)
	slices.SortFunc(want, byKey)
	if !slices.Equal(got, want) {
		t.Errorf("Scopes() = %v, want %v (in any order)", got, want)
	}
}
