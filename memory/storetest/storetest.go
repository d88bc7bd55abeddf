// Package storetest is the contract test suite for memory.Store. Every
// implementation (memory/files, memory/postgres) runs it from its own tests:
//
//	func TestContract(t *testing.T) {
//		storetest.Run(t, func(t *testing.T) memory.Store {
//			s, err := files.Open(t.TempDir())
//			if err != nil {
//				t.Fatal(err)
//			}
//			t.Cleanup(func() { s.Close() })
//			return s
//		})
//	}
//
// The helpers (NewTurn, MustAppendTurns, DiffTurns, ...) are exported for
// implementation-specific tests.
package storetest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/mnemo-mcp/mnemo/memory"
)

// Run runs the contract suite as subtests of t. newStore must return an
// empty store that keeps the default 5 versions per scope, not shared with
// any other call, and arrange for it to be
// closed when the test ends (t.Cleanup).
func Run(t *testing.T, newStore func(t *testing.T) memory.Store) {
	t.Helper()
	tests := []struct {
		name string
		test func(*testing.T, memory.Store)
	}{
		{"AppendAssignsSeq", testAppendAssignsSeq},
		{"SeqPerScope", testSeqPerScope},
		{"ReadTurnsAfter", testReadTurnsAfter},
		{"ReadTurnsIncremental", testReadTurnsIncremental},
		{"TurnRoundTrip", testTurnRoundTrip},
		{"EmptyScope", testEmptyScope},
		{"InvalidScope", testInvalidScope},
		{"CanceledContext", testCanceledContext},
		{"InvalidMetaData", testInvalidMetaData},
		{"LoadNewDocument", testLoadNewDocument},
		{"UpdateDocument", testUpdateDocument},
		{"UpdateDocumentRoundTrip", testUpdateDocumentRoundTrip},
		{"UpdateDocumentError", testUpdateDocumentError},
		{"DocumentOwnedByCaller", testDocumentOwnedByCaller},
		{"Scopes", testScopes},
		{"ConcurrentAppend", testConcurrentAppend},
		{"ConcurrentUpdate", testConcurrentUpdate},
		{"DeleteScope", testDeleteScope},
		{"Versions", testVersions},
		{"DeleteTurns", testDeleteTurns},
		{"ImportScope", testImportScope},
		{"ScrubVersions", testScrubVersions},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tc.test(t, newStore(t))
		})
	}
}

// baseTime is the time of NewTurn(_, 0); it has nanoseconds on purpose.
var baseTime = time.Date(2025, time.March, 14, 15, 9, 26, 535897932, time.UTC)

// NewTurn returns a deterministic turn, the n-th of thread, with every
// field set (Seq left 0 for the store to assign) and UTC times with
// nanoseconds.
func NewTurn(thread string, n int) memory.Turn {
	return memory.Turn{
		ID:       fmt.Sprintf("turn_%s_%06d", thread, n),
		ThreadID: thread,
		Time:     baseTime.Add(time.Duration(n) * time.Second),
		Stored:   baseTime.Add(time.Duration(n)*time.Second + 1234567*time.Nanosecond),
		User:     fmt.Sprintf("question %d in %s", n, thread),
		Reply:    fmt.Sprintf("answer %d in %s", n, thread),
		Signals:  memory.Signals{Correction: n%3 == 1, Reinforcement: n%3 == 2},
		MetaData: json.RawMessage(fmt.Sprintf(`{"n":%d,"thread":%q}`, n, thread)),
	}
}

// NewTurns returns NewTurn(thread, first) ... NewTurn(thread, first+count-1).
func NewTurns(thread string, first, count int) []memory.Turn {
	out := make([]memory.Turn, count)
	for i := range out {
		out[i] = NewTurn(thread, first+i)
	}
	return out
}

// MustAppendTurns appends turns to scope and fails the test on error.
func MustAppendTurns(tb testing.TB, s memory.Store, scope memory.Scope, turns ...memory.Turn) []memory.Turn {
	tb.Helper()
	got, err := s.AppendTurns(tb.Context(), scope, turns)
	if err != nil {
		tb.Fatalf("AppendTurns(%s, %d turns) error: %v", scope.Key(), len(turns), err)
	}
	if len(got) != len(turns) {
		tb.Fatalf("AppendTurns(%s, %d turns) returned %d turns", scope.Key(), len(turns), len(got))
	}
	return got
}

// MustReadTurns reads the turns of scope after a Seq and fails the test on
// error.
func MustReadTurns(tb testing.TB, s memory.Store, scope memory.Scope, after int64) []memory.Turn {
	tb.Helper()
	got, err := s.ReadTurns(tb.Context(), scope, after)
	if err != nil {
		tb.Fatalf("ReadTurns(%s, %d) error: %v", scope.Key(), after, err)
	}
	return got
}

// MustLoadDocument loads the document of scope and fails the test on
// error.
func MustLoadDocument(tb testing.TB, s memory.Store, scope memory.Scope) *memory.Document {
	tb.Helper()
	d, err := s.LoadDocument(tb.Context(), scope)
	if err != nil {
		tb.Fatalf("LoadDocument(%s) error: %v", scope.Key(), err)
	}
	if d == nil {
		tb.Fatalf("LoadDocument(%s) = nil, want a document", scope.Key())
	}
	return d
}

// MustUpdateDocument runs fn through UpdateDocument and fails the test on
// error.
func MustUpdateDocument(tb testing.TB, s memory.Store, scope memory.Scope, fn func(*memory.Document) error) *memory.Document {
	tb.Helper()
	d, err := s.UpdateDocument(tb.Context(), scope, fn)
	if err != nil {
		tb.Fatalf("UpdateDocument(%s) error: %v", scope.Key(), err)
	}
	if d == nil {
		tb.Fatalf("UpdateDocument(%s) = nil, want the saved document", scope.Key())
	}
	return d
}

// DiffTurns describes the first difference between got and want, or
// returns "" when they are equal: same length, and each turn with equal
// strings, Seq and Signals, equal instants (time.Time.Equal) and
// byte-equal MetaData.
func DiffTurns(got, want []memory.Turn) string {
	for i := range min(len(got), len(want)) {
		if d := diffTurn(got[i], want[i]); d != "" {
			return fmt.Sprintf("turn %d (seq %d): %s", i, want[i].Seq, d)
		}
	}
	if len(got) != len(want) {
		return fmt.Sprintf("got %d turns (seqs %v), want %d (seqs %v)", len(got), Seqs(got), len(want), Seqs(want))
	}
	return ""
}

func diffTurn(got, want memory.Turn) string {
	switch {
	case got.ID != want.ID:
		return fmt.Sprintf("ID = %q, want %q", got.ID, want.ID)
	case got.Seq != want.Seq:
		return fmt.Sprintf("Seq = %d, want %d", got.Seq, want.Seq)
	case got.ThreadID != want.ThreadID:
		return fmt.Sprintf("ThreadID = %q, want %q", got.ThreadID, want.ThreadID)
	case !got.Time.Equal(want.Time):
		return fmt.Sprintf("Time = %s, want %s", got.Time.Format(time.RFC3339Nano), want.Time.Format(time.RFC3339Nano))
	case !got.Stored.Equal(want.Stored):
		return fmt.Sprintf("Stored = %s, want %s", got.Stored.Format(time.RFC3339Nano), want.Stored.Format(time.RFC3339Nano))
	case got.User != want.User:
		return fmt.Sprintf("User = %s, want %s", abbrev(got.User), abbrev(want.User))
	case got.Reply != want.Reply:
		return fmt.Sprintf("Reply = %s, want %s", abbrev(got.Reply), abbrev(want.Reply))
	case got.Signals != want.Signals:
		return fmt.Sprintf("Signals = %+v, want %+v", got.Signals, want.Signals)
	case !bytes.Equal(got.MetaData, want.MetaData):
		return fmt.Sprintf("MetaData = %s, want %s", got.MetaData, want.MetaData)
	}
	return ""
}

// abbrev quotes s, shortened in the middle when it is long.
func abbrev(s string) string {
	if len(s) <= 80 {
		return fmt.Sprintf("%q", s)
	}
	return fmt.Sprintf("%q...%q (%d bytes)", s[:40], s[len(s)-40:], len(s))
}

// Seqs returns the Seq of each turn.
func Seqs(turns []memory.Turn) []int64 {
	out := make([]int64, len(turns))
	for i, t := range turns {
		out[i] = t.Seq
	}
	return out
}

// CheckSeqs fails the test unless turns are numbered first, first+1, ...,
// last, in order.
func CheckSeqs(tb testing.TB, turns []memory.Turn, first, last int64) {
	tb.Helper()
	if want := last - first + 1; int64(len(turns)) != max(want, 0) {
		tb.Fatalf("got %d turns, want %d (seqs %d..%d)", len(turns), max(want, 0), first, last)
	}
	for i, t := range turns {
		if want := first + int64(i); t.Seq != want {
			tb.Fatalf("turn %d has seq %d, want %d", i, t.Seq, want)
		}
	}
}

// withSeqs returns copies of turns numbered from first.
func withSeqs(turns []memory.Turn, first int64) []memory.Turn {
	out := make([]memory.Turn, len(turns))
	for i, t := range turns {
		t.Seq = first + int64(i)
		out[i] = t
	}
	return out
}

// docJSON renders d for comparing documents as stored.
func docJSON(tb testing.TB, d *memory.Document) string {
	tb.Helper()
	b, err := json.MarshalIndent(d, "", " ")
	if err != nil {
		tb.Fatalf("marshal document: %v", err)
	}
	return string(b)
}

// longText is about n bytes of mixed-script text.
func longText(n int) string {
	const unit = "Large text 大规模文本 テキスト 🧠 — line\n"
	return strings.Repeat(unit, n/len(unit)+1)[:n/len(unit)*len(unit)]
}
