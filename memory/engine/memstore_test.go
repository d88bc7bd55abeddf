package engine

import (
	"context"
	"encoding/json"
	"maps"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mnemo-mcp/mnemo/memory"
	"github.com/mnemo-mcp/mnemo/memory/storetest"
)

// memStore is an in-memory Store for tests of the pipeline. It keeps
// documents as JSON so callers never share memory with it, like a real
// store, and passes the store contract (TestMemStoreContract).
type memStore struct {
	mu       sync.Mutex
	turns    map[string][]memory.Turn
	docs     map[string][]byte
	versions map[string][]memVersion // replaced documents, oldest first
	// failSave, when set, makes UpdateDocument fail after fn ran.
	failSave error
	saves    int
}

// memVersion is one replaced document.
type memVersion struct {
	rev   int64
	saved time.Time
	raw   []byte
}

// memKeeps is how many replaced documents memStore keeps (the stores' default).
const memKeeps = 5

// memSaved is the time memStore stamps on every saved document.
var memSaved = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)

var _ memory.Store = (*memStore)(nil)

func newMemStore() *memStore {
	return &memStore{turns: map[string][]memory.Turn{}, docs: map[string][]byte{}, versions: map[string][]memVersion{}}
}

// check refuses a canceled context and an invalid scope, as the stores do.
func (m *memStore) check(ctx context.Context, sc memory.Scope) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	return sc.Validate()
}

func (m *memStore) AppendTurns(ctx context.Context, sc memory.Scope, turns []memory.Turn) ([]memory.Turn, error) {
	if err := m.check(ctx, sc); err != nil {
		return nil, err
	}
	for _, t := range turns {
		if len(t.MetaData) > 0 && !json.Valid(t.MetaData) {
			return nil, memory.Invalid("meta_data", "is not valid JSON")
		}
	}
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

func (m *memStore) ReadTurns(ctx context.Context, sc memory.Scope, after int64) ([]memory.Turn, error) {
	if err := m.check(ctx, sc); err != nil {
		return nil, err
	}
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

func (m *memStore) DeleteTurns(ctx context.Context, sc memory.Scope, match func(memory.Turn) bool) ([]memory.Turn, error) {
	if err := m.check(ctx, sc); err != nil {
		return nil, err
	}
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
	// A thread's watermark falls to its last turn left, or goes with it.
	for thread, wm := range d.Watermarks {
		last := int64(0)
		for _, t := range kept {
			if t.ThreadID == thread && t.Seq <= wm {
				last = t.Seq
			}
		}
		if last == 0 {
			delete(d.Watermarks, thread)
		} else {
			d.Watermarks[thread] = last
		}
	}
	raw, err := json.Marshal(d)
	if err != nil {
		return nil, err
	}
	m.docs[sc.Key()] = raw
	return removed, nil
}

func (m *memStore) ImportScope(ctx context.Context, sc memory.Scope, doc *memory.Document, turns []memory.Turn) error {
	if err := m.check(ctx, sc); err != nil {
		return err
	}
	d, err := memory.ImportDocument(doc, turns)
	if err != nil {
		return err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if _, ok := m.docs[sc.Key()]; ok || len(m.turns[sc.Key()]) > 0 {
		return memory.Invalid("scope", "not empty")
	}
	raw, err := json.Marshal(d)
	if err != nil {
		return err
	}
	m.docs[sc.Key()] = raw
	m.turns[sc.Key()] = append([]memory.Turn(nil), turns...)
	return nil
}

func (m *memStore) LoadDocument(ctx context.Context, sc memory.Scope) (*memory.Document, error) {
	if err := m.check(ctx, sc); err != nil {
		return nil, err
	}
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

func (m *memStore) UpdateDocument(ctx context.Context, sc memory.Scope, fn func(*memory.Document) error) (*memory.Document, error) {
	if err := m.check(ctx, sc); err != nil {
		return nil, err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	cur, err := m.load(sc)
	if err != nil {
		return nil, err
	}
	d, err := memory.NextRevision(ctx, cur, fn, memSaved)
	if err != nil {
		return nil, err
	}
	if m.failSave != nil {
		return nil, m.failSave
	}
	return d, m.save(sc, d)
}

// save stores d, keeping the document it replaces as a version. The
// caller holds m.mu.
func (m *memStore) save(sc memory.Scope, d *memory.Document) error {
	raw, err := json.Marshal(d)
	if err != nil {
		return err
	}
	if old, ok := m.docs[sc.Key()]; ok {
		var prev memory.Document
		if err := json.Unmarshal(old, &prev); err != nil {
			return err
		}
		vs := append(m.versions[sc.Key()], memVersion{rev: prev.Revision, saved: memSaved, raw: old})
		m.versions[sc.Key()] = vs[max(0, len(vs)-memKeeps):]
	}
	m.docs[sc.Key()] = raw
	m.saves++
	return nil
}

func (m *memStore) Scopes(context.Context) ([]memory.Scope, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	keys := map[string]bool{}
	for k, ts := range m.turns {
		if len(ts) > 0 {
			keys[k] = true
		}
	}
	for k := range m.docs {
		keys[k] = true
	}
	var out []memory.Scope
	for k := range keys {
		user, agent, _ := strings.Cut(k, "/")
		out = append(out, memory.Scope{UserID: user, AgentName: agent})
	}
	return out, nil
}

func (m *memStore) Close() error { return nil }

func (m *memStore) DeleteScope(ctx context.Context, sc memory.Scope) error {
	if err := m.check(ctx, sc); err != nil {
		return err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	gone := func(key string) bool {
		return key == sc.Key() || sc.AgentName == "" && strings.HasPrefix(key, sc.UserID+"/")
	}
	maps.DeleteFunc(m.turns, func(k string, _ []memory.Turn) bool { return gone(k) })
	maps.DeleteFunc(m.docs, func(k string, _ []byte) bool { return gone(k) })
	maps.DeleteFunc(m.versions, func(k string, _ []memVersion) bool { return gone(k) })
	return nil
}

func (m *memStore) ListVersions(ctx context.Context, sc memory.Scope) ([]memory.Version, error) {
	if err := m.check(ctx, sc); err != nil {
		return nil, err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	vs := m.versions[sc.Key()]
	out := make([]memory.Version, 0, len(vs))
	for i := len(vs) - 1; i >= 0; i-- {
		out = append(out, memory.Version{Revision: vs[i].rev, Saved: vs[i].saved})
	}
	return out, nil
}

func (m *memStore) RestoreVersion(ctx context.Context, sc memory.Scope, revision int64) (*memory.Document, error) {
	if err := m.check(ctx, sc); err != nil {
		return nil, err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, v := range m.versions[sc.Key()] {
		if v.rev != revision {
			continue
		}
		cur, err := m.load(sc)
		if err != nil {
			return nil, err
		}
		d, err := memory.NextRevision(ctx, cur, func(d *memory.Document) error {
			old := memory.NewDocument()
			if err := json.Unmarshal(v.raw, old); err != nil {
				return err
			}
			// Processed turns stay processed: the watermarks are the
			// current ones.
			old.Watermarks, old.TurnLogEpoch = d.Watermarks, d.TurnLogEpoch
			*d = *old
			return nil
		}, memSaved)
		if err != nil {
			return nil, err
		}
		return d, m.save(sc, d)
	}
	return nil, memory.ErrNotFound
}

// TestMemStoreContract runs the store contract on the fake store the
// engine's tests use, so that what they prove holds for the real stores.
func TestMemStoreContract(t *testing.T) {
	storetest.Run(t, func(t *testing.T) memory.Store { return newMemStore() })
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
