package engine

import (
	"context"
	"encoding/json"
	"strings"
	"sync"
	"time"

	"github.com/mnemo-mcp/mnemo/memory"
)

// memStore is an in-memory Store for tests of the pipeline. It keeps
// documents as JSON so callers never share memory with it, like a real
// store.
type memStore struct {
	mu    sync.Mutex
	turns map[string][]memory.Turn
	docs  map[string][]byte
	// failSave, when set, makes UpdateDocument fail after fn ran.
	failSave error
	saves    int
}

var _ memory.Store = (*memStore)(nil)

func newMemStore() *memStore {
	return &memStore{turns: map[string][]memory.Turn{}, docs: map[string][]byte{}}
}

func (m *memStore) AppendTurns(_ context.Context, sc memory.Scope, turns []memory.Turn) ([]memory.Turn, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := make([]memory.Turn, len(turns))
	for i, t := range turns {
		t.Seq = 1
		if all := m.turns[sc.Key()]; len(all) > 0 {
			t.Seq = all[len(all)-1].Seq + 1
		}
		m.turns[sc.Key()] = append(m.turns[sc.Key()], t)
		out[i] = t
	}
	return out, nil
}

func (m *memStore) ReadTurns(_ context.Context, sc memory.Scope, after int64) ([]memory.Turn, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	var out []memory.Turn
	for _, t := range m.turns[sc.Key()] {
		if t.Seq > after {
			out = append(out, t)
		}
	}
	return out, nil
}

func (m *memStore) DeleteTurns(_ context.Context, sc memory.Scope, match func(memory.Turn) bool) ([]memory.Turn, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	var kept, removed []memory.Turn
	for _, t := range m.turns[sc.Key()] {
		if match(t) {
			removed = append(removed, t)
		} else {
			kept = append(kept, t)
		}
	}
	if len(removed) == 0 {
		return []memory.Turn{}, nil
	}
	m.turns[sc.Key()] = kept
	d, err := m.load(sc)
	if err != nil {
		return nil, err
	}
	d.TurnLogEpoch++
	raw, err := json.Marshal(d)
	if err != nil {
		return nil, err
	}
	m.docs[sc.Key()] = raw
	return removed, nil
}

func (m *memStore) ImportScope(_ context.Context, sc memory.Scope, doc *memory.Document, turns []memory.Turn) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if _, ok := m.docs[sc.Key()]; ok || len(m.turns[sc.Key()]) > 0 {
		return memory.Invalid("scope", "not empty")
	}
	raw, err := json.Marshal(doc)
	if err != nil {
		return err
	}
	m.docs[sc.Key()] = raw
	m.turns[sc.Key()] = append([]memory.Turn(nil), turns...)
	return nil
}

func (m *memStore) LoadDocument(_ context.Context, sc memory.Scope) (*memory.Document, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.load(sc)
}

func (m *memStore) load(sc memory.Scope) (*memory.Document, error) {
	raw, ok := m.docs[sc.Key()]
	if !ok {
		return memory.NewDocument(), nil
	}
	d := memory.NewDocument()
	return d, json.Unmarshal(raw, d)
}

func (m *memStore) UpdateDocument(_ context.Context, sc memory.Scope, fn func(*memory.Document) error) (*memory.Document, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	d, err := m.load(sc)
	if err != nil {
		return nil, err
	}
	if err := fn(d); err != nil {
		return nil, err
	}
	if m.failSave != nil {
		return nil, m.failSave
	}
	d.Revision++
	d.LastUpdated = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	raw, err := json.Marshal(d)
	if err != nil {
		return nil, err
	}
	m.docs[sc.Key()] = raw
	m.saves++
	return d, nil
}

func (m *memStore) Scopes(context.Context) ([]memory.Scope, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	var out []memory.Scope
	for k := range m.turns {
		user, agent, _ := strings.Cut(k, "/")
		out = append(out, memory.Scope{UserID: user, AgentName: agent})
	}
	return out, nil
}

func (m *memStore) Close() error { return nil }

func (m *memStore) DeleteScope(_ context.Context, sc memory.Scope) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, k := range []map[string][]memory.Turn{m.turns} {
		for key := range k {
			if key == sc.Key() || sc.AgentName == "" && strings.HasPrefix(key, sc.UserID+"/") {
				delete(k, key)
			}
		}
	}
	for key := range m.docs {
		if key == sc.Key() || sc.AgentName == "" && strings.HasPrefix(key, sc.UserID+"/") {
			delete(m.docs, key)
		}
	}
	return nil
}

func (m *memStore) ListVersions(context.Context, memory.Scope) ([]memory.Version, error) {
	return nil, nil
}

func (m *memStore) RestoreVersion(context.Context, memory.Scope, int64) (*memory.Document, error) {
	return nil, memory.ErrNotFound
}

// Stores with an optional capability (ports.go) that the test keeps apart:
// the Store and the capability embedded side by side.
type (
	storeWithMidTerm struct {
		memory.Store
		memory.MidTermStore
	}
	storeWithPageIndex struct {
		memory.Store
		memory.PageIndexStore
	}
	storeWithVectors struct {
		memory.Store
		memory.VectorStore
	}
	storeWithVectorsMidTerm struct {
		memory.Store
		memory.VectorStore
		memory.MidTermStore
	}
)
