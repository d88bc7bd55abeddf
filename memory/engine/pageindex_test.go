package engine

import (
	"bytes"
	"context"
	"fmt"
	"hash/fnv"
	"io"
	"log/slog"
	"math/rand/v2"
	"reflect"
	"strings"
	"sync"
	"testing"

	"github.com/mnemo-mcp/mnemo/internal/testutil"
	"github.com/mnemo-mcp/mnemo/memory"
)

// memPageIndex is an in-memory PageIndexStore.
type memPageIndex struct {
	mu    sync.Mutex
	saved map[string][]byte
	saves int
}

func (m *memPageIndex) OpenPageIndex(_ context.Context, sc memory.Scope) (io.ReadCloser, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	b, ok := m.saved[sc.Key()]
	if !ok {
		return nil, nil
	}
	return io.NopCloser(bytes.NewReader(b)), nil
}

func (m *memPageIndex) SavePageIndex(_ context.Context, sc memory.Scope, data []byte) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.saved == nil {
		m.saved = map[string][]byte{}
	}
	m.saved[sc.Key()] = bytes.Clone(data)
	m.saves++
	return nil
}

func (m *memPageIndex) damage(sc memory.Scope) {
	m.mu.Lock()
	defer m.mu.Unlock()
	b := m.saved[sc.Key()]
	b[len(b)/2] ^= 0x55
}

// TestPageIndexSnapshot checks that a restart reads the page index from
// its snapshot when the snapshot matches the turn log, indexes only the
// turns added after it, refuses a snapshot that does not match (turns
// forgotten) or is damaged, and in every case retrieves exactly what a
// service that indexed the whole log from text retrieves.
func TestPageIndexSnapshot(t *testing.T) {
	tests := []struct {
		name    string
		change  func(t *testing.T, s *Service, snaps *memPageIndex, ids []string)
		wantUse bool
	}{
		{"snapshot as saved", func(*testing.T, *Service, *memPageIndex, []string) {}, true},
		{"turns added after it", func(t *testing.T, s *Service, _ *memPageIndex, _ []string) {
			for i := range 40 {
				addPair(t, s, "late", fmt.Sprintf("late question %d about kyoto temples", i), "late answer")
			}
		}, true},
		{"turns forgotten after it", func(t *testing.T, s *Service, _ *memPageIndex, ids []string) {
			if _, err := s.Forget(t.Context(), memory.ForgetRequest{TurnIDs: ids[10:20]}); err != nil {
				t.Fatal(err)
			}
		}, false},
		{"damaged", func(_ *testing.T, _ *Service, snaps *memPageIndex, _ []string) {
			snaps.damage(memory.Scope{UserID: memory.DefaultUserID})
		}, false},
	}
	queries := []string{"kyoto temple", "postgres vacuum replica", "marathon pace", "sourdough loaf hydration", "late question"}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			store, snaps := newMemStore(), &memPageIndex{}
			quiet := slog.New(slog.DiscardHandler)
			s, err := NewService(memory.DefaultConfig(), storeWithPageIndex{store, snaps}, mustCounter(t), WithLogger(quiet))
			if err != nil {
				t.Fatal(err)
			}
			r := rand.New(rand.NewPCG(7, 7))
			var ids []string
			for i := range snapshotAtClose + 100 {
				res, err := s.Add(t.Context(), memory.AddRequest{ThreadID: fmt.Sprint("t", i%5), UserInput: topicText(r, i, 10), AgentResponse: topicText(r, i+1, 8)})
				if err != nil {
					t.Fatal(err)
				}
				ids = append(ids, res.TurnIDs...)
			}
			s.Close(context.Background())
			if snaps.saves != 1 {
				t.Fatalf("%d snapshots saved at close, want 1", snaps.saves)
			}

			s, err = NewService(memory.DefaultConfig(), storeWithPageIndex{store, snaps}, mustCounter(t), WithLogger(quiet))
			if err != nil {
				t.Fatal(err)
			}
			tt.change(t, s, snaps, ids)
			s.Close(context.Background())

			var logs testutil.LockedBuffer
			withSnap, err := NewService(memory.DefaultConfig(), storeWithPageIndex{store, snaps}, mustCounter(t),
				WithLogger(slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))))
			if err != nil {
				t.Fatal(err)
			}
			defer withSnap.Close(context.Background())
			fromText := newTestService(t, store, memory.DefaultConfig())
			for _, q := range queries {
				got, err := withSnap.Retrieve(t.Context(), memory.RetrieveRequest{Query: q, MaxResults: 20})
				if err != nil {
					t.Fatal(err)
				}
				want, err := fromText.Retrieve(t.Context(), memory.RetrieveRequest{Query: q, MaxResults: 20})
				if err != nil {
					t.Fatal(err)
				}
				if !reflect.DeepEqual(got.Pages, want.Pages) || got.StoredTurns != want.StoredTurns {
					t.Fatalf("Retrieve(%q) with the snapshot = %d pages of %d, from text %d of %d", q, len(got.Pages), got.StoredTurns, len(want.Pages), want.StoredTurns)
				}
			}
			if used := strings.Contains(logs.String(), "page index read from its snapshot"); used != tt.wantUse {
				t.Errorf("snapshot used = %v, want %v; log:\n%s", used, tt.wantUse, logs.String())
			}
			if refused := strings.Contains(logs.String(), "page index snapshot not used") || strings.Contains(logs.String(), "page index snapshot does not match"); refused == tt.wantUse {
				t.Errorf("snapshot refused = %v, want %v; log:\n%s", refused, !tt.wantUse, logs.String())
			}
		})
	}
}

// TestSnapshotDueAtClose: a stop saves the snapshot once snapshotAtClose
// pages are fresh, however large the index, while a save during use waits
// for a quarter of it (so a restart of a large scope after a clean stop
// does not tokenize up to a quarter of its pages again).
func TestSnapshotDueAtClose(t *testing.T) {
	tests := []struct {
		pages, saved, busy   int
		wantClose, wantInUse bool
	}{
		{pages: 100000, saved: 100000 - snapshotAtClose, wantClose: true},
		{pages: 100000, saved: 100000 - snapshotAtClose + 1},
		{pages: 100000, saved: 75000, wantClose: true, wantInUse: true},
		{pages: 100000, saved: 75001, wantClose: true},
		{pages: snapshotAfter, wantClose: true, wantInUse: true},
		{pages: snapshotAfter - 1, wantClose: true},
		{pages: 100000, saved: 0, busy: 1},
	}
	for _, tt := range tests {
		st := &scopeState{snapPages: tt.saved, snapBusy: tt.busy == 1}
		st.Turns = make([]*memory.Turn, tt.pages)
		if got := st.snapshotDue(snapshotAtClose); got != tt.wantClose {
			t.Errorf("%d pages, %d saved, busy %v: snapshotDue(snapshotAtClose) = %v, want %v", tt.pages, tt.saved, st.snapBusy, got, tt.wantClose)
		}
		if got := st.backgroundSnapshotDue(); got != tt.wantInUse {
			t.Errorf("%d pages, %d saved, busy %v: backgroundSnapshotDue() = %v, want %v", tt.pages, tt.saved, st.snapBusy, got, tt.wantInUse)
		}
	}
}

// TestTurnIDsHash holds turnIDsHash to hash/fnv's FNV-64a of the ids,
// each ended by a zero byte, as snapshots saved before it was written
// out were hashed.
func TestTurnIDsHash(t *testing.T) {
	tests := [][]string{
		nil,
		{""},
		{"turn_01a236ea-73d4-7971-beb4-51de06091ee7"},
		{"a", "b", "", "café 数据", "\x00\xff"},
	}
	for _, ids := range tests {
		h := fnv.New64a()
		for _, id := range ids {
			io.WriteString(h, id)
			h.Write([]byte{0})
		}
		if got, want := turnIDsHash(len(ids), func(i int) string { return ids[i] }), h.Sum64(); got != want {
			t.Errorf("turnIDsHash(%q) = %#x, want %#x", ids, got, want)
		}
	}
}
