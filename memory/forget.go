package memory

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"
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
	for _, st := range s.scopes {
		if matches(st.scope) {
			s.removeStateLocked(st)
		}
	}
	s.mu.Unlock()
	s.log.Info("forgot memory", "scope", scope.Key(), "with_agents", agentName == "")
	return nil
}

// ForgetEverything is the confirmation Forget needs to delete a whole scope.
const ForgetEverything = "forget everything"

// ForgetRequest is one forget_memory call: facts by id, exchanges by id or
// whole thread, or — with AllOfScope and Confirm set to ForgetEverything
// — the whole scope.
type ForgetRequest struct {
	UserID     string
	AgentName  string
	FactIDs    []string
	TurnIDs    []string
	ThreadID   string
	AllOfScope bool
	Confirm    string
	// Source is SourceManual (the default) or SourceCLI.
	Source string
}

// ForgottenTurn identifies a removed exchange.
type ForgottenTurn struct {
	ID       string    `json:"id"`
	ThreadID string    `json:"thread_id"`
	Time     time.Time `json:"timestamp"`
}

// ForgetResult is what Forget removed.
type ForgetResult struct {
	Scope        Scope           `json:"scope"`
	FactsRemoved []Fact          `json:"facts_removed"`
	TurnsRemoved []ForgottenTurn `json:"turns_removed"`
	// NotFound are requested fact and turn ids the scope does not hold.
	NotFound []string `json:"not_found,omitempty"`
	// ScopeForgotten is true when the whole scope was deleted; for a
	// user's shared memory, every agent memory of the user went with it.
	ScopeForgotten bool `json:"scope_forgotten"`
}

// Forget deletes memory of one scope: the listed facts (from facts and
// knowledge lists), the listed exchanges and every exchange of ThreadID —
// from disk, indexes and caches, in this process and (through the turn
// log epoch) in others — or the whole scope. It never touches another
// scope. Ids the scope does not hold are reported in NotFound; when
// nothing requested exists the error wraps ErrNotFound.
func (s *Service) Forget(ctx context.Context, req ForgetRequest) (*ForgetResult, error) {
	scope, err := s.resolveScope(req.UserID, req.AgentName)
	if err != nil {
		return nil, err
	}
	source, err := checkForget(&req, scope)
	if err != nil {
		return nil, err
	}
	res := &ForgetResult{Scope: scope, FactsRemoved: []Fact{}, TurnsRemoved: []ForgottenTurn{}}
	if req.AllOfScope {
		if err := s.ForgetScope(ctx, scope.UserID, scope.AgentName); err != nil {
			return nil, err
		}
		res.ScopeForgotten = true
		s.notifyChange(scope)
		return res, nil
	}
	if len(req.FactIDs) > 0 {
		if err := s.forgetFacts(ctx, scope, req.FactIDs, source, res); err != nil {
			return nil, err
		}
	}
	if len(req.TurnIDs) > 0 || req.ThreadID != "" {
		if err := s.forgetTurns(ctx, scope, req, res); err != nil {
			return nil, err
		}
	}
	if len(res.FactsRemoved) == 0 && len(res.TurnsRemoved) == 0 {
		what := strings.Join(res.NotFound, ", ")
		if req.ThreadID != "" {
			what = strings.TrimPrefix(what+", thread "+req.ThreadID, ", ")
		}
		return nil, fmt.Errorf("%w: nothing to forget in the memory of %s: no %s; list_memories shows what is stored", ErrNotFound, scope.Key(), what)
	}
	s.log.Info("memory forgotten", "scope", scope.Key(), "facts", len(res.FactsRemoved), "turns", len(res.TurnsRemoved), "source", source)
	s.notifyChange(scope)
	return res, nil
}

// forgetFacts removes facts by id from the facts and knowledge lists.
func (s *Service) forgetFacts(ctx context.Context, scope Scope, ids []string, source string, res *ForgetResult) error {
	var removed []Fact
	var missing []string
	_, err := s.store.UpdateDocument(ctx, scope, func(d *Document) error {
		removed, missing = nil, nil
		want := map[string]bool{}
		for _, id := range ids {
			want[id] = true
		}
		now := s.now().UTC()
		drop := func(list []Fact) []Fact {
			return slices.DeleteFunc(list, func(f Fact) bool {
				if !want[f.ID] {
					return false
				}
				delete(want, f.ID)
				removed = append(removed, f)
				d.AddFactEvent(FactEvent{FactID: f.ID, Event: FactRemoved, At: now, Source: source,
					Reason: manualReason(source, "forgotten"), Content: f.Content})
				return true
			})
		}
		d.Facts = drop(d.Facts)
		d.Knowledge = drop(d.Knowledge)
		d.AssistantKnowledge = drop(d.AssistantKnowledge)
		for _, id := range ids {
			if want[id] && !slices.Contains(missing, id) {
				missing = append(missing, id)
			}
		}
		if len(removed) == 0 {
			return errNoChange
		}
		return nil
	})
	if err != nil && !errors.Is(err, errNoChange) {
		return fmt.Errorf("forget facts in %s: %w", scope.Key(), err)
	}
	res.FactsRemoved = append(res.FactsRemoved, removed...)
	res.NotFound = append(res.NotFound, missing...)
	return nil
}

// forgetTurns removes exchanges by id or thread from the turn log. It
// holds the scope's update lock, so that no update in flight saves
// watermarks or facts of turns that are being removed.
func (s *Service) forgetTurns(ctx context.Context, scope Scope, req ForgetRequest, res *ForgetResult) error {
	lock := s.queue.scopeLock(scope)
	select {
	case lock <- struct{}{}:
	case <-ctx.Done():
		return fmt.Errorf("forget turns in %s: wait for running update: %w", scope.Key(), ctx.Err())
	}
	defer func() { <-lock }()
	ids := map[string]bool{}
	for _, id := range req.TurnIDs {
		ids[id] = true
	}
	removed, err := s.store.DeleteTurns(context.WithoutCancel(ctx), scope, func(t Turn) bool {
		return ids[t.ID] || req.ThreadID != "" && t.ThreadID == req.ThreadID
	})
	if err != nil {
		return fmt.Errorf("forget turns in %s: %w", scope.Key(), err)
	}
	seen := map[string]bool{}
	for _, t := range removed {
		seen[t.ID] = true
		res.TurnsRemoved = append(res.TurnsRemoved, ForgottenTurn{ID: t.ID, ThreadID: t.ThreadID, Time: t.Time})
	}
	for _, id := range req.TurnIDs {
		if !seen[id] && !slices.Contains(res.NotFound, id) {
			res.NotFound = append(res.NotFound, id)
		}
	}
	return nil
}
