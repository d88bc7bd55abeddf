package memory

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"
)

// Managing memory directly: the host's model (or the command line) saves,
// corrects and forgets facts and exchanges. Facts change through
// ApplyUpdate like the updater's, so deduplication, upload scrubbing,
// max_facts and the fact history follow the same rules.

// ForgetEverything is the confirmation Forget needs to delete a whole scope.
const ForgetEverything = "forget everything"

// DefaultManualConfidence is the confidence of a saved fact that gives none.
const DefaultManualConfidence = 0.9

// WithChangeHook sets a function called after each change this Service
// makes to a scope's memory document or turn log outside add (a saved,
// updated or forgotten fact, forgotten turns or scope, an updater run).
// It runs synchronously and must not block; the MCP server uses it to
// send resource notifications.
func WithChangeHook(fn func(Scope)) Option { return func(s *Service) { s.OnChange(fn) } }

// OnChange adds fn to the functions called after each change, as
// WithChangeHook does, for a listener created after the Service (the MCP
// server).
func (s *Service) OnChange(fn func(Scope)) {
	if fn == nil {
		return
	}
	s.mu.Lock()
	s.changed = append(s.changed, fn)
	s.mu.Unlock()
}

// notifyChange calls the change hooks.
func (s *Service) notifyChange(scope Scope) {
	s.mu.Lock()
	hooks := s.changed
	s.mu.Unlock()
	for _, fn := range hooks {
		fn(scope)
	}
}

// errNoChange aborts a document update that has nothing to save.
var errNoChange = errors.New("no change")

// manualReason says who made a manual change, for the fact history.
func manualReason(source, verb string) string {
	if source == SourceCLI {
		return verb + " from the command line"
	}
	return verb + " manually (by the assistant's tool call)"
}

// SaveFactRequest is one save_memory call: a fact to remember as given.
type SaveFactRequest struct {
	UserID    string
	AgentName string
	Content   string
	// Category is one of Categories; empty means CategoryContext.
	Category string
	// Confidence is in (0, 1]; 0 means DefaultManualConfidence.
	Confidence float64
	// Source is SourceManual (the default) or SourceCLI.
	Source string
}

// SaveFactResult is what SaveFact stored, or the fact that already said
// the same thing.
type SaveFactResult struct {
	Scope Scope `json:"scope"`
	Fact  Fact  `json:"fact"`
	// Duplicate is true when a fact with the same content was already
	// stored; Fact is that fact and nothing changed.
	Duplicate bool `json:"duplicate"`
	// Evicted are ids of facts dropped to stay within max_facts.
	Evicted []string `json:"evicted,omitempty"`
	// Notes say what was adjusted (for example upload sentences removed).
	Notes []string `json:"notes,omitempty"`
}

// SaveFact stores a fact as the host's model (or the command line) states
// it, with source "manual" (or "cli"); no language model is needed. A fact
// whose content matches a stored one (ignoring case, spacing and a final
// full stop) is not stored again: the stored one is returned with
// Duplicate set. max_facts is enforced as for extracted facts.
func (s *Service) SaveFact(ctx context.Context, req SaveFactRequest) (*SaveFactResult, error) {
	scope, err := s.resolveScope(req.UserID, req.AgentName)
	if err != nil {
		return nil, err
	}
	ch, err := checkSave(&req)
	if err != nil {
		return nil, err
	}
	content, cat, conf, source := ch.content, ch.category, ch.confidence, ch.source
	res := &SaveFactResult{Scope: scope}
	key := foldFactContent(scrubUploads(content))
	_, err = s.store.UpdateDocument(ctx, scope, func(d *Document) error {
		res.Evicted, res.Notes = nil, nil
		for _, f := range d.Facts {
			if foldFactContent(f.Content) == key {
				res.Fact, res.Duplicate = f, true
				return errNoChange
			}
		}
		rep := ApplyUpdate(d, &Update{NewFacts: []NewFact{{Content: content, Category: cat, Confidence: conf}}}, ApplyOptions{
			Source:         source,
			Now:            s.now().UTC(),
			MaxFacts:       s.cfg.MaxFacts,
			MaxRemoveShare: s.cfg.MaxRemoveShare,
			NewID:          s.newFactID,
			CreatedReason:  manualReason(source, "saved"),
		})
		if len(rep.FactsAdded) == 0 {
			why := strings.Join(rep.Ignored, "; ")
			if strings.Contains(why, "over the limit") {
				return invalid("confidence", "the fact was not kept: memory holds the maximum of %d facts and none has a lower confidence than %v; raise confidence or forget a fact first",
					s.cfg.MaxFacts, conf)
			}
			return invalid("content", "the fact was not kept: %s", why)
		}
		for _, f := range d.Facts {
			if f.ID == rep.FactsAdded[0] {
				res.Fact = f
			}
		}
		res.Evicted, res.Notes = rep.FactsEvicted, rep.Ignored
		return nil
	})
	switch {
	case errors.Is(err, errNoChange):
		return res, nil
	case err != nil:
		return nil, fmt.Errorf("save fact in %s: %w", scope.Key(), err)
	}
	s.log.Info("fact saved", "scope", scope.Key(), "fact", res.Fact.ID, "source", source)
	s.notifyChange(scope)
	return res, nil
}

// UpdateFactRequest is one update_memory call. Nil fields are left as
// they are; at least one must be set.
type UpdateFactRequest struct {
	UserID     string
	AgentName  string
	ID         string
	Content    *string
	Category   *string
	Confidence *float64
	// Source is SourceManual (the default) or SourceCLI.
	Source string
}

// UpdateFactResult is the fact after the change and what it was before.
type UpdateFactResult struct {
	Scope    Scope    `json:"scope"`
	Fact     Fact     `json:"fact"`
	Previous Fact     `json:"previous"`
	Changed  []string `json:"changed"`
}

// UpdateFact changes a fact's content, category or confidence, keeping its
// id, creation time and source, and records the change in the fact
// history. A fact id the scope does not hold is an error wrapping
// ErrNotFound.
func (s *Service) UpdateFact(ctx context.Context, req UpdateFactRequest) (*UpdateFactResult, error) {
	scope, err := s.resolveScope(req.UserID, req.AgentName)
	if err != nil {
		return nil, err
	}
	ch, err := checkUpdate(&req)
	if err != nil {
		return nil, err
	}
	content, cat, conf, source := ch.content, ch.category, ch.confidence, ch.source
	res := &UpdateFactResult{Scope: scope}
	_, err = s.store.UpdateDocument(ctx, scope, func(d *Document) error {
		i := slices.IndexFunc(d.Facts, func(f Fact) bool { return f.ID == req.ID })
		if i < 0 {
			return fmt.Errorf("%w: no fact %q in the memory of %s; list_memories lists the fact ids", ErrNotFound, req.ID, scope.Key())
		}
		f := d.Facts[i]
		res.Previous, res.Changed = f, nil
		if req.Content != nil && content != f.Content {
			content = scrubUploads(content)
			key := foldFactContent(content)
			for _, o := range d.Facts {
				if o.ID != f.ID && foldFactContent(o.Content) == key {
					return invalid("content", "fact %s already says this; forget %s instead of making it a duplicate", o.ID, f.ID)
				}
			}
			f.Content = content
			res.Changed = append(res.Changed, "content")
		}
		if req.Category != nil && cat != f.Category {
			f.Category = cat
			if cat != CategoryCorrection {
				f.SourceError = ""
			}
			res.Changed = append(res.Changed, "category")
		}
		if req.Confidence != nil && conf != f.Confidence {
			f.Confidence = conf
			res.Changed = append(res.Changed, "confidence")
		}
		res.Fact = f
		if len(res.Changed) == 0 {
			return errNoChange
		}
		d.Facts[i] = f
		d.AddFactEvent(FactEvent{FactID: f.ID, Event: FactUpdated, At: s.now().UTC(), Source: source,
			Reason: manualReason(source, "changed "+strings.Join(res.Changed, ", ")), Content: f.Content})
		return nil
	})
	switch {
	case errors.Is(err, errNoChange):
		res.Changed = []string{}
		return res, nil
	case err != nil:
		return nil, fmt.Errorf("update fact in %s: %w", scope.Key(), err)
	}
	s.log.Info("fact updated", "scope", scope.Key(), "fact", req.ID, "changed", res.Changed, "source", source)
	s.notifyChange(scope)
	return res, nil
}

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
