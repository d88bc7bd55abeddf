package engine

import (
	"context"
	"crypto/sha256"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/mnemo-mcp/mnemo/memory"
)

// sharedStore is one memStore used by two Services, as two instances use
// one database. Its announcements never arrive (the latest a loaded
// server can deliver them): only its versions can tell a Service that the
// other one wrote.
type sharedStore struct {
	*memStore
	// watching is done once per Watch, when it has started.
	watching *sync.WaitGroup
}

func (s sharedStore) Watch(ctx context.Context, changed func(memory.Scope)) error {
	changed(memory.Scope{})
	s.watching.Done()
	<-ctx.Done()
	return ctx.Err()
}

// ScopeVersion is the scope's last Seq and a digest of its document.
func (s sharedStore) ScopeVersion(ctx context.Context, sc memory.Scope) (string, error) {
	if err := s.check(ctx, sc); err != nil {
		return "", err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	turns, doc := s.turns[sc.Key()], s.docs[sc.Key()]
	if len(turns) == 0 && doc == nil {
		return "", nil
	}
	var last int64
	if len(turns) > 0 {
		last = turns[len(turns)-1].Seq
	}
	return fmt.Sprintf("%d.%x", last, sha256.Sum256(doc)), nil
}

var (
	_ memory.ScopeWatcher   = sharedStore{}
	_ memory.ScopeVersioner = sharedStore{}
)

// TestWritesOfAnotherInstanceAreSeenAtOnce: what one instance
// acknowledged — a saved fact, a forget, an exchange — is what the other
// answers with at its next call, though no announcement of the change
// has reached it; a scope nobody changed is served from memory.
func TestWritesOfAnotherInstanceAreSeenAtOnce(t *testing.T) {
	ctx := t.Context()
	store := sharedStore{newMemStore(), new(sync.WaitGroup)}
	store.watching.Add(2)
	a := newTestService(t, store, memory.DefaultConfig())
	b := newTestService(t, store, memory.DefaultConfig())
	store.watching.Wait()
	t.Cleanup(func() {
		a.Close(context.Background())
		b.Close(context.Background())
	})
	facts := func() string {
		t.Helper()
		res, err := b.List(ctx, memory.ListRequest{})
		if err != nil {
			t.Fatalf("List() = %v", err)
		}
		var out []string
		for _, f := range res.Facts {
			out = append(out, f.Content)
		}
		return strings.Join(out, "; ")
	}

	if got := facts(); got != "" {
		t.Fatalf("facts of an empty store = %q", got)
	}
	saved, err := a.SaveFact(ctx, memory.SaveFactRequest{Content: "Alice moors in berth 7"})
	if err != nil {
		t.Fatalf("SaveFact() = %v", err)
	}
	if got := facts(); got != "Alice moors in berth 7" {
		t.Fatalf("the other instance lists %q after the save, want the saved fact", got)
	}
	if _, err := a.Forget(ctx, memory.ForgetRequest{FactIDs: []string{saved.Fact.ID}}); err != nil {
		t.Fatalf("Forget() = %v", err)
	}
	if got := facts(); got != "" {
		t.Fatalf("the other instance lists %q after the forget", got)
	}

	addPair(t, a, "t", "Where do I keep the dinghy?", "In the shed by the slipway.")
	res, err := b.Retrieve(ctx, memory.RetrieveRequest{Query: "dinghy shed"})
	if err != nil {
		t.Fatalf("Retrieve() = %v", err)
	}
	if len(res.Pages) != 1 || !strings.Contains(res.Pages[0].Reply, "slipway") {
		t.Fatalf("the other instance retrieves %+v after the add, want the new exchange", res.Pages)
	}

	// Nothing changed since: the next call is served from memory.
	st := b.liveState(memory.Scope{UserID: b.cfg.UserID})
	defer st.mu.Unlock()
	if !b.fresh(st) {
		t.Error("a scope nobody changed since it was read is not served from memory")
	}
}
