package engine

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/mnemo-mcp/mnemo/memory"
)

// dropStates drops (retires) this Service's state of every scope that
// matches.
func (s *Service) dropStates(matches func(memory.Scope) bool) {
	s.mu.Lock()
	var states []*scopeState
	for _, st := range s.scopes {
		if matches(st.scope) {
			states = append(states, st)
		}
	}
	s.mu.Unlock()
	for _, st := range states {
		s.dropState(st)
	}
}

// ForgetScope deletes a user's memory (agentName empty: the user's shared
// memory and every agent's) or one agent's memory of that user, from the
// store and from this Service: the in-memory turns, indexes, token cache
// and pending queue entries of the scope are dropped, and the updates of
// the scope wait until it is gone, so none writes deleted memory back. No
// other user's memory is touched. Forgetting a scope with nothing stored
// is not an error. Another server process on the same store notices at
// its next use of the scope (the document's revision went down) or when
// its store refuses a cache save of the deleted scope (ErrStale), and
// reads the scope afresh; it never writes the deleted memory back.
func (s *Service) ForgetScope(ctx context.Context, userID, agentName string) error {
	if userID == "" {
		return memory.Invalid("user_id", "name the user whose memory to forget")
	}
	scope, err := s.resolveScope(userID, agentName)
	if err != nil {
		return err
	}
	matches := func(sc memory.Scope) bool {
		return sc == scope || agentName == "" && sc.UserID == scope.UserID
	}

	// Hold the update lock of every matching scope this Service knows, so
	// that no update in flight saves a document after the delete.
	known := map[string]memory.Scope{scope.Key(): scope}
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
	scopes := make([]memory.Scope, len(keys))
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

	// The states are dropped (retired) before the delete, so that none
	// saves a cache of the deleted turns after it, and again after it, for
	// any a concurrent request read meanwhile.
	s.dropStates(matches)
	if err := s.store.DeleteScope(context.WithoutCancel(ctx), scope); err != nil {
		return fmt.Errorf("forget %s: %w", scope.Key(), err)
	}
	s.dropStates(matches)
	s.log.Info("forgot memory", "scope", scope.Key(), "with_agents", agentName == "")
	return nil
}

// Forget deletes memory of one scope: the listed facts (from facts and
// knowledge lists), the listed exchanges and every exchange of ThreadID —
// from disk, indexes and caches, in this process and (through the turn
// log epoch and the store's refusal of stale caches) in others — or the
// whole scope. It never touches another scope. The forgotten text leaves
// every file of the store: the fact history keeps each removal (id, time,
// source, reason) but no fact's content, and kept versions that hold it
// are deleted (VersionScrubber). Forgetting exchanges also forgets the
// facts extracted from a thread it leaves without turns (see ForgetResult).
// Ids the scope does not hold are reported in NotFound; when nothing
// requested exists the error wraps ErrNotFound.
func (s *Service) Forget(ctx context.Context, req memory.ForgetRequest) (*memory.ForgetResult, error) {
	scope, err := s.resolveScope(req.UserID, req.AgentName)
	if err != nil {
		return nil, err
	}
	source, err := memory.CheckForget(&req, scope)
	if err != nil {
		return nil, err
	}
	res := &memory.ForgetResult{Scope: scope, FactsRemoved: []memory.Fact{}, TurnsRemoved: []memory.ForgottenTurn{}, DerivedFactsRemoved: []memory.Fact{}}
	if req.AllOfScope {
		if err := s.ForgetScope(ctx, scope.UserID, scope.AgentName); err != nil {
			return nil, err
		}
		res.ScopeForgotten = true
		s.notifyChange(scope)
		return res, nil
	}
	if req.Topic != "" {
		// Only what the topic's preview lists may go, and the facts of
		// a thread its exchanges leave empty stay (they were listed if
		// they mention it).
		if err := s.checkTopicChoice(ctx, scope, req); err != nil {
			return nil, err
		}
		req.KeepFacts = true
	}
	if len(req.FactIDs) > 0 {
		if err := s.forgetFacts(ctx, scope, req.FactIDs, source, res); err != nil {
			return nil, err
		}
	}
	var turns []memory.Turn
	if len(req.TurnIDs) > 0 || req.ThreadID != "" {
		if turns, err = s.forgetTurns(ctx, scope, req, res); err != nil {
			return nil, err
		}
	}
	if len(req.Sections) > 0 {
		if err := s.clearSections(ctx, scope, req.Sections, source, res); err != nil {
			return nil, err
		}
	}
	if len(res.FactsRemoved) == 0 && len(res.TurnsRemoved) == 0 && len(res.SectionsCleared) == 0 {
		what := strings.Join(res.NotFound, ", ")
		if req.ThreadID != "" {
			what = strings.TrimPrefix(what+", thread "+req.ThreadID, ", ")
		}
		return nil, memory.NotFound("nothing to forget in the memory of %s: no %s; list_memories shows what is stored", scope.Key(), what)
	}
	if req.Topic != "" {
		if err := s.scrubTopicEvents(ctx, scope, req.Topic, res); err != nil {
			return nil, err
		}
	}
	if err := s.stillMentioned(ctx, scope, turns, res); err != nil {
		return nil, err
	}
	s.log.Info("memory forgotten", "scope", scope.Key(), "facts", len(res.FactsRemoved), "turns", len(res.TurnsRemoved),
		"derived_facts", len(res.DerivedFactsRemoved), "versions_scrubbed", res.VersionsScrubbed, "source", source)
	s.notifyChange(scope)
	return res, nil
}

// forgetFacts removes facts by id from the facts and knowledge lists,
// and their text from the fact history and the kept versions.
func (s *Service) forgetFacts(ctx context.Context, scope memory.Scope, ids []string, source string, res *memory.ForgetResult) error {
	var removed []memory.Fact
	var missing []string
	err := s.updateForgetting(ctx, scope, func(d *memory.Document) ([]string, error) {
		var texts []string
		want := map[string]bool{}
		for _, id := range ids {
			want[id] = true
		}
		removed, texts = dropFacts(d, func(f memory.Fact) bool {
			if !want[f.ID] {
				return false
			}
			delete(want, f.ID)
			return true
		}, memory.FactEvent{Event: memory.FactRemoved, At: s.now().UTC(), Source: source, Reason: manualReason(source, "forgotten")})
		missing = nil
		for _, id := range ids {
			if want[id] && !slices.Contains(missing, id) {
				missing = append(missing, id)
			}
		}
		if len(removed) == 0 {
			return nil, errNoChange
		}
		return texts, nil
	}, res)
	if err != nil && !errors.Is(err, errNoChange) {
		return fmt.Errorf("forget facts in %s: %w", scope.Key(), err)
	}
	res.FactsRemoved = append(res.FactsRemoved, removed...)
	res.NotFound = append(res.NotFound, missing...)
	return nil
}

// dropFacts removes the facts and knowledge entries that match from d,
// records a removal event (ev, with the fact's id) for each, and strips
// the content from every earlier event of those facts: the history says
// that a fact was created, changed and removed, not what it said. It
// returns the removed facts and every text they held (contents, earlier
// wordings, source errors), for scrubbing the kept versions.
func dropFacts(d *memory.Document, match func(memory.Fact) bool, ev memory.FactEvent) ([]memory.Fact, []string) {
	var removed []memory.Fact
	var texts []string
	gone := map[string]bool{}
	drop := func(list []memory.Fact) []memory.Fact {
		return slices.DeleteFunc(list, func(f memory.Fact) bool {
			if !match(f) {
				return false
			}
			removed = append(removed, f)
			gone[f.ID] = true
			texts = append(texts, f.Content, f.SourceError, f.Replaced)
			return true
		})
	}
	d.Facts = drop(d.Facts)
	d.Knowledge = drop(d.Knowledge)
	d.AssistantKnowledge = drop(d.AssistantKnowledge)
	d.PastFacts = drop(d.PastFacts)
	d.RetiredFacts = drop(d.RetiredFacts)
	// Facts merged into a forgotten one said nearly the same: they go too.
	for more := true; more; {
		more = false
		for _, e := range d.FactEvents {
			if e.Event == memory.FactMerged && gone[e.Into] && !gone[e.FactID] {
				id := e.FactID
				before := len(removed)
				match = func(f memory.Fact) bool { return f.ID == id }
				d.RetiredFacts = drop(d.RetiredFacts)
				d.PastFacts = drop(d.PastFacts)
				d.Facts = drop(d.Facts)
				gone[id] = true
				more = more || len(removed) > before
			}
		}
	}
	for i := range d.FactEvents {
		e := &d.FactEvents[i]
		if !gone[e.FactID] {
			continue
		}
		if e.Content != "" {
			texts = append(texts, e.Content)
			e.Content = ""
		}
		if r := unquotedReason(e.Reason); r != e.Reason {
			texts = append(texts, e.Reason)
			e.Reason = r
		}
	}
	for _, f := range removed {
		e := ev
		e.FactID = f.ID
		d.AddFactEvent(e)
	}
	return removed, texts
}

// scrubVersions deletes the kept versions of scope's document that hold
// any of texts, when the store can (VersionScrubber), and counts them in
// res.
func (s *Service) scrubVersions(ctx context.Context, scope memory.Scope, texts []string, res *memory.ForgetResult) error {
	vs, ok := s.base.(memory.VersionScrubber)
	if !ok || len(texts) == 0 {
		return nil
	}
	n, err := vs.ScrubVersions(context.WithoutCancel(ctx), scope, texts)
	res.VersionsScrubbed += n
	if err != nil {
		return fmt.Errorf("forgotten in %s, but kept versions of the memory document may still hold it: %w", scope.Key(), err)
	}
	return nil
}

// forgetTurns removes exchanges by id or thread from the turn log, the
// facts whose only source they were, and their text from the kept
// versions. It holds the scope's update lock, so that no update in flight
// saves watermarks or facts of turns that are being removed.
func (s *Service) forgetTurns(ctx context.Context, scope memory.Scope, req memory.ForgetRequest, res *memory.ForgetResult) ([]memory.Turn, error) {
	lock := s.queue.scopeLock(scope)
	select {
	case lock <- struct{}{}:
	case <-ctx.Done():
		return nil, fmt.Errorf("forget turns in %s: wait for running update: %w", scope.Key(), ctx.Err())
	}
	defer func() { <-lock }()
	before, err := s.store.LoadDocument(ctx, scope)
	if err != nil {
		return nil, fmt.Errorf("forget turns in %s: %w", scope.Key(), err)
	}
	ids := map[string]bool{}
	for _, id := range req.TurnIDs {
		ids[id] = true
	}
	// This process's state of the scope is dropped before the log is
	// rewritten, so that it never saves a cache of the old turns; the
	// next use of the scope reads it afresh.
	s.dropStates(func(sc memory.Scope) bool { return sc == scope })
	removed, err := s.store.DeleteTurns(context.WithoutCancel(ctx), scope, func(t memory.Turn) bool {
		return ids[t.ID] || req.ThreadID != "" && t.ThreadID == req.ThreadID
	})
	if err != nil {
		return nil, fmt.Errorf("forget turns in %s: %w", scope.Key(), err)
	}
	seen := map[string]bool{}
	var texts []string
	for _, t := range removed {
		seen[t.ID] = true
		res.TurnsRemoved = append(res.TurnsRemoved, memory.ForgottenTurn{ID: t.ID, ThreadID: t.ThreadID, Time: t.Time})
		texts = append(texts, t.User, t.Reply)
	}
	for _, id := range req.TurnIDs {
		if !seen[id] && !slices.Contains(res.NotFound, id) {
			res.NotFound = append(res.NotFound, id)
		}
	}
	if len(removed) == 0 {
		return nil, nil
	}
	if err := s.forgetDerived(ctx, scope, removed, texts, req, res); err != nil {
		return nil, err
	}
	res.SectionsMayMention, err = s.sectionsMayMention(ctx, scope, before, removed)
	if err != nil {
		return nil, err
	}
	// Versions may quote the turns too (a profile summary, a fact's
	// wording); those the derived facts' update did not delete go now.
	return removed, s.scrubVersions(ctx, scope, texts, res)
}

// forgetDerived forgets the facts and knowledge entries whose source is
// a thread that lost turns in this forget and has none left in the log
// (unless req.KeepFacts), and lists those it keeps. The kept versions
// that hold the removed facts' texts or turnTexts are deleted with them.
// The caller holds the scope's update lock.
func (s *Service) forgetDerived(ctx context.Context, scope memory.Scope, removed []memory.Turn, turnTexts []string, req memory.ForgetRequest, res *memory.ForgetResult) error {
	touched := map[string]bool{}
	for _, t := range removed {
		touched[t.ThreadID] = true
	}
	doc, err := s.store.LoadDocument(ctx, scope)
	if err != nil {
		return fmt.Errorf("forget facts of the forgotten turns in %s: %w", scope.Key(), err)
	}
	var candidates []memory.Fact
	for _, list := range [][]memory.Fact{doc.Facts, doc.Knowledge, doc.AssistantKnowledge} {
		for _, f := range list {
			if slices.ContainsFunc(f.AllSources(), func(src string) bool { return touched[src] }) {
				candidates = append(candidates, f)
			}
		}
	}
	if len(candidates) == 0 {
		return nil
	}
	if req.KeepFacts {
		res.DerivedFactsKept = candidates
		return nil
	}
	left, err := s.store.ReadTurns(ctx, scope, 0)
	if err != nil {
		return fmt.Errorf("forget facts of the forgotten turns in %s: %w", scope.Key(), err)
	}
	emptied := maps.Clone(touched)
	for i := range left {
		delete(emptied, left[i].ThreadID)
	}
	source := req.Source
	if source == "" {
		source = memory.SourceManual
	}
	var dropped []memory.Fact
	if len(emptied) > 0 {
		err = s.updateForgetting(ctx, scope, func(d *memory.Document) ([]string, error) {
			var texts []string
			dropped, texts = dropFacts(d, onlyFrom(emptied), memory.FactEvent{
				Event: memory.FactRemoved, At: s.now().UTC(), Source: source,
				Reason: manualReason(source, "forgotten with the turns of its thread"),
			})
			if len(dropped) == 0 {
				return nil, errNoChange
			}
			return append(texts, turnTexts...), nil
		}, res)
		if err != nil && !errors.Is(err, errNoChange) {
			return fmt.Errorf("forget facts of the forgotten turns in %s: %w", scope.Key(), err)
		}
	}
	res.DerivedFactsRemoved = append(res.DerivedFactsRemoved, dropped...)
	for _, f := range candidates {
		if !onlyFrom(emptied)(f) {
			res.DerivedFactsKept = append(res.DerivedFactsKept, f)
		}
	}
	return nil
}

// sectionsMayMention lists the profile sections, by ProfileSections name,
// that may mention one of the removed turns: those with a summary
// rewritten (or of unknown time) since the earliest removed turn that the
// updater had processed (Seq at or below its thread's watermark in
// before, the document as it was before the forget) was stored. A section
// last rewritten before that cannot draw on it.
func (s *Service) sectionsMayMention(ctx context.Context, scope memory.Scope, before *memory.Document, removed []memory.Turn) ([]string, error) {
	var earliest time.Time
	for _, t := range removed {
		if t.Seq > before.Watermarks[t.ThreadID] {
			continue
		}
		at := t.Stored
		if at.IsZero() || t.Time.Before(at) {
			at = t.Time
		}
		if earliest.IsZero() || at.Before(earliest) {
			earliest = at
		}
	}
	if earliest.IsZero() {
		return nil, nil
	}
	doc, err := s.store.LoadDocument(ctx, scope)
	if err != nil {
		return nil, fmt.Errorf("check the profile of %s: %w", scope.Key(), err)
	}
	var names []string
	for i, sec := range doc.Sections() {
		if at := sec.Section.UpdatedAt; sec.Section.Summary != "" && (at.IsZero() || !at.Before(earliest)) {
			names = append(names, memory.ProfileSections[i])
		}
	}
	return names, nil
}

// onlyFrom matches the facts whose every source is one of threads: a fact
// also stated in another conversation is kept.
func onlyFrom(threads map[string]bool) func(memory.Fact) bool {
	return func(f memory.Fact) bool {
		srcs := f.AllSources()
		return len(srcs) > 0 && !slices.ContainsFunc(srcs, func(src string) bool { return !threads[src] })
	}
}
