package memory

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
)

// ForgetScope deletes a user's memory (agentName empty: the user's shared
// memory and every agent's) or one agent's memory of that user, from the
// store and from this Service: the in-memory turns, indexes, token cache
// and pending queue entries of the scope are dropped, and the updates of
// the scope wait until it is gone, so none writes deleted memory back. No
// other user's memory is touched. Forgetting a scope with nothing stored
// is not an error. Another server process on the same store keeps what it
// has cached until it restarts, so the CLI is meant to run while no
// server uses the data directory.
func (s *Service) ForgetScope(ctx context.Context, userID, agentName string) error {
	if userID == "" {
		return invalid("user_id", "name the user whose memory to forget")
	}
	scope, err := s.resolveScope(userID, agentName)
	if err != nil {
		return err
	}
	matches := func(sc Scope) bool {
		return sc == scope || agentName == "" && sc.UserID == scope.UserID
	}

	// Hold the update lock of every matching scope this Service knows, so
	// that no update in flight saves a document after the delete.
	known := map[string]Scope{scope.Key(): scope}
	s.mu.Lock()
	for _, st := range s.scopes {
		if matches(st.scope) {
			known[st.scope.Key()] = st.scope
		}
	}
	s.mu.Unlock()
	if stored, err := s.store.Scopes(ctx); err == nil {
		for _, sc := range stored {
			if matches(sc) {
				known[sc.Key()] = sc
			}
		}
	}
	keys := slices.Sorted(maps.Keys(known))
	scopes := make([]Scope, len(keys))
	for i, k := range keys {
		scopes[i] = known[k]
	}
	release, err := s.queue.lockScopes(ctx, scopes)
	if err != nil {
		return fmt.Errorf("forget %s: wait for running update: %w", scope.Key(), err)
	}
	defer release()
	// Scope ids hold no '/', so a key is the user's own or one of their
	// agents' exactly when matches holds for its scope.
	s.queue.drop(func(k string) bool {
		return k == scope.Key() || agentName == "" && strings.HasPrefix(k, scope.UserID+"/")
	})

	if err := s.store.DeleteScope(context.WithoutCancel(ctx), scope); err != nil {
		return fmt.Errorf("forget %s: %w", scope.Key(), err)
	}
	s.mu.Lock()
	for k, st := range s.scopes {
		if matches(st.scope) {
			delete(s.scopes, k)
		}
	}
	s.mu.Unlock()
	s.log.Info("forgot memory", "scope", scope.Key(), "with_agents", agentName == "")
	return nil
}
