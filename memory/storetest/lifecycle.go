package storetest

import (
	"errors"
	"fmt"
	"slices"
	"testing"

	"github.com/mnemo-mcp/mnemo/memory"
)

// seedScope stores two turns and a document with one fact in scope.
func seedScope(t *testing.T, s memory.Store, scope memory.Scope) {
	t.Helper()
	MustAppendTurns(t, s, scope, NewTurns("t", 0, 2)...)
	MustUpdateDocument(t, s, scope, func(d *memory.Document) error {
		d.Facts = append(d.Facts, memory.Fact{ID: "fact_00000001", Content: "secret of " + scope.Key(), Category: "context", Confidence: 0.9})
		return nil
	})
}

// scopeHolds reports whether scope has turns or a saved document.
func scopeHolds(t *testing.T, s memory.Store, scope memory.Scope) bool {
	t.Helper()
	return len(MustReadTurns(t, s, scope, 0)) > 0 || MustLoadDocument(t, s, scope).Revision > 0
}

func testDeleteScope(t *testing.T, s memory.Store) {
	ctx := t.Context()
	alice := memory.Scope{UserID: "alice"}
	aliceCoder := memory.Scope{UserID: "alice", AgentName: "coder"}
	aliceWriter := memory.Scope{UserID: "alice", AgentName: "writer"}
	// Neighbours whose names share a prefix with alice's, or name her.
	others := []memory.Scope{{UserID: "alice2"}, {UserID: "alic"}, {UserID: "bob"}, {UserID: "bob", AgentName: "alice"}, {UserID: "alice.x", AgentName: "coder"}}
	for _, sc := range append([]memory.Scope{alice, aliceCoder, aliceWriter}, others...) {
		seedScope(t, s, sc)
	}

	if err := s.DeleteScope(ctx, aliceCoder); err != nil {
		t.Fatalf("DeleteScope(%s) error: %v", aliceCoder.Key(), err)
	}
	if scopeHolds(t, s, aliceCoder) {
		t.Errorf("%s still holds data after DeleteScope", aliceCoder.Key())
	}
	for _, sc := range []memory.Scope{alice, aliceWriter} {
		if !scopeHolds(t, s, sc) {
			t.Errorf("deleting %s also deleted %s", aliceCoder.Key(), sc.Key())
		}
	}

	if err := s.DeleteScope(ctx, alice); err != nil {
		t.Fatalf("DeleteScope(%s) error: %v", alice.Key(), err)
	}
	for _, sc := range []memory.Scope{alice, aliceCoder, aliceWriter} {
		if scopeHolds(t, s, sc) {
			t.Errorf("%s still holds data after deleting user alice", sc.Key())
		}
		if v, err := s.ListVersions(ctx, sc); err != nil || len(v) > 0 {
			t.Errorf("ListVersions(%s) after delete = %v, %v; want none", sc.Key(), v, err)
		}
	}
	for _, sc := range others {
		if !scopeHolds(t, s, sc) {
			t.Errorf("deleting user alice deleted %s", sc.Key())
		}
		if d := MustLoadDocument(t, s, sc); len(d.Facts) != 1 || d.Facts[0].Content != "secret of "+sc.Key() {
			t.Errorf("document of %s after deleting alice = %+v", sc.Key(), d.Facts)
		}
	}
	scopes, err := s.Scopes(ctx)
	if err != nil {
		t.Fatalf("Scopes() error: %v", err)
	}
	for _, sc := range scopes {
		if sc.UserID == "alice" {
			t.Errorf("Scopes() lists %s after delete", sc.Key())
		}
	}

	// The scope starts afresh.
	got := MustAppendTurns(t, s, alice, NewTurn("t", 9))
	if got[0].Seq != 1 {
		t.Errorf("first turn after delete has Seq %d, want 1", got[0].Seq)
	}
	if turns := MustReadTurns(t, s, alice, 0); len(turns) != 1 || turns[0].ID != NewTurn("t", 9).ID {
		t.Errorf("turns after delete and append = %v, want only the new one", Seqs(turns))
	}

	// Nothing stored, nothing to delete: not an error.
	if err := s.DeleteScope(ctx, memory.Scope{UserID: "nobody"}); err != nil {
		t.Errorf("DeleteScope(empty scope) error: %v", err)
	}
	if err := s.DeleteScope(ctx, memory.Scope{UserID: "../bob"}); !errors.Is(err, memory.ErrInvalidInput) {
		t.Errorf("DeleteScope(../bob) error = %v, want ErrInvalidInput", err)
	}
	if !scopeHolds(t, s, memory.Scope{UserID: "bob"}) {
		t.Errorf("DeleteScope(../bob) touched bob")
	}
}

// testVersions needs a store that keeps the default 5 versions.
func testVersions(t *testing.T, s memory.Store) {
	ctx := t.Context()
	scope := memory.Scope{UserID: "undo", AgentName: "a"}
	if v, err := s.ListVersions(ctx, scope); err != nil || len(v) != 0 {
		t.Fatalf("ListVersions(new scope) = %v, %v; want none", v, err)
	}
	for i := 1; i <= 8; i++ {
		MustUpdateDocument(t, s, scope, func(d *memory.Document) error {
			d.User.TopOfMind.Summary = fmt.Sprintf("summary %d", i)
			if d.Watermarks == nil {
				d.Watermarks = map[string]int64{}
			}
			d.Watermarks["t"] = int64(10 * i)
			return nil
		})
	}
	vs, err := s.ListVersions(ctx, scope)
	if err != nil {
		t.Fatalf("ListVersions() error: %v", err)
	}
	revs := make([]int64, len(vs))
	for i, v := range vs {
		revs[i] = v.Revision
		if v.Saved.IsZero() {
			t.Errorf("version %d has no save time", v.Revision)
		}
	}
	if want := []int64{7, 6, 5, 4, 3}; !slices.Equal(revs, want) {
		t.Fatalf("ListVersions() revisions = %v, want %v (the 5 newest replaced documents, newest first)", revs, want)
	}

	doc, err := s.RestoreVersion(ctx, scope, 4)
	if err != nil {
		t.Fatalf("RestoreVersion(4) error: %v", err)
	}
	if doc.User.TopOfMind.Summary != "summary 4" || doc.Revision != 9 {
		t.Errorf("RestoreVersion(4) = summary %q revision %d, want \"summary 4\" revision 9", doc.User.TopOfMind.Summary, doc.Revision)
	}
	if doc.Watermarks["t"] != 80 {
		t.Errorf("restored watermark = %d, want 80 (processed turns stay processed)", doc.Watermarks["t"])
	}
	if cur := MustLoadDocument(t, s, scope); docJSON(t, cur) != docJSON(t, doc) {
		t.Errorf("LoadDocument after restore differs from what RestoreVersion returned")
	}
	vs, _ = s.ListVersions(ctx, scope)
	if len(vs) == 0 || vs[0].Revision != 8 {
		t.Fatalf("after restore, newest version = %v, want revision 8 (the document the restore replaced)", vs)
	}
	// The restore itself can be undone.
	if doc, err := s.RestoreVersion(ctx, scope, 8); err != nil || doc.User.TopOfMind.Summary != "summary 8" {
		t.Errorf("undo of restore = %v, %v; want summary 8", doc, err)
	}

	before := docJSON(t, MustLoadDocument(t, s, scope))
	for _, rev := range []int64{1, 0, -1, 99} {
		if _, err := s.RestoreVersion(ctx, scope, rev); !errors.Is(err, memory.ErrNotFound) {
			t.Errorf("RestoreVersion(%d) error = %v, want ErrNotFound", rev, err)
		}
	}
	if after := docJSON(t, MustLoadDocument(t, s, scope)); after != before {
		t.Errorf("a failed restore changed the document")
	}
	if _, err := s.RestoreVersion(ctx, memory.Scope{UserID: ".."}, 1); !errors.Is(err, memory.ErrInvalidInput) {
		t.Errorf("RestoreVersion(..) error = %v, want ErrInvalidInput", err)
	}
}

// testScrubVersions runs when the store is a memory.VersionScrubber: kept
// versions holding a forgotten text are removed, the others and the
// current document stay.
func testScrubVersions(t *testing.T, s memory.Store) {
	vs, ok := s.(memory.VersionScrubber)
	if !ok {
		t.Skip("the store keeps no scrubbable versions (not a memory.VersionScrubber)")
	}
	ctx := t.Context()
	scope := memory.Scope{UserID: "scrub"}
	if n, err := vs.ScrubVersions(ctx, scope, []string{"x"}); err != nil || n != 0 {
		t.Fatalf("ScrubVersions(empty scope) = %d, %v; want 0, nil", n, err)
	}
	secret := `my "secret" <pin> 4321`
	contents := []string{"likes tea", secret, "lives in Oslo", "plays chess"}
	for _, c := range contents {
		MustUpdateDocument(t, s, scope, func(d *memory.Document) error {
			d.Facts = append(d.Facts, memory.Fact{ID: fmt.Sprintf("f%d", len(d.Facts)), Content: c})
			return nil
		})
	}
	// Kept versions: revisions 1 (tea) to 4; 2, 3 and 4 hold the secret.
	MustUpdateDocument(t, s, scope, func(d *memory.Document) error {
		d.Facts = slices.DeleteFunc(d.Facts, func(f memory.Fact) bool { return f.Content == secret })
		return nil
	})
	n, err := vs.ScrubVersions(ctx, scope, []string{"", secret})
	if err != nil || n != 3 {
		t.Fatalf("ScrubVersions() = %d, %v; want 3 (revisions 2 to 4 held the text)", n, err)
	}
	list, err := s.ListVersions(ctx, scope)
	if err != nil {
		t.Fatal(err)
	}
	var revs []int64
	for _, v := range list {
		revs = append(revs, v.Revision)
	}
	if want := []int64{1}; !slices.Equal(revs, want) {
		t.Errorf("ListVersions() after scrub = %v, want %v", revs, want)
	}
	if doc := MustLoadDocument(t, s, scope); len(doc.Facts) != 3 || doc.Revision != 5 {
		t.Errorf("current document has %d facts, revision %d; want 3 facts, revision 5 (not touched)", len(doc.Facts), doc.Revision)
	}
	if _, err := s.RestoreVersion(ctx, scope, 2); !errors.Is(err, memory.ErrNotFound) {
		t.Errorf("RestoreVersion(scrubbed 2) error = %v, want memory.ErrNotFound", err)
	}
}
