package engine

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/mnemo-mcp/mnemo/memory"
)

// Add validates, filters and durably stores one exchange (or several, for a
// message list), and reports what was kept and what is pending. It returns
// only after the turns are durable. Errors wrapping ErrInvalidInput say
// what to fix; nothing is stored then.
func (s *Service) Add(ctx context.Context, req memory.AddRequest) (*memory.AddResult, error) {
	scope, err := s.resolveScope(req.UserID, req.AgentName)
	if err != nil {
		return nil, err
	}
	thread, err := resolveThread(req.ThreadID)
	if err != nil {
		return nil, err
	}
	msgs, err := s.normalizeMessages(&req)
	if err != nil {
		return nil, err
	}
	meta, err := memory.ValidateMetaData(req.MetaData, s.cfg.MaxMetaDataBytes)
	if err != nil {
		return nil, err
	}
	if req.IdempotencyKey != "" {
		if err := memory.ValidateID("idempotency_key", req.IdempotencyKey); err != nil {
			return nil, err
		}
		if err := credentialID("idempotency_key", req.IdempotencyKey); err != nil {
			return nil, err
		}
	}
	now := s.now().UTC()
	when := now
	// stated is the time of an exchange the caller dated: its facts became
	// true then. Zero (undated) dates them when they are stored.
	var stated time.Time
	if req.Timestamp != "" {
		if when, err = memory.ParseTimestamp(req.Timestamp); err != nil {
			return nil, err
		}
		stated = when
	}

	exchanges, report := memory.Filter(msgs)
	red := &memory.Redactor{On: s.cfg.RedactSecrets}
	for i := range exchanges {
		exchanges[i].User, exchanges[i].Reply = red.Text(exchanges[i].User), red.Text(exchanges[i].Reply)
	}
	meta = red.JSON(meta)
	kept := make([]memory.Message, 0, len(exchanges))
	for _, e := range exchanges {
		if e.User != "" {
			kept = append(kept, memory.Message{Role: memory.RoleUser, Content: e.User})
		}
	}
	signals := memory.DetectSignals(kept)
	res := &memory.AddResult{Scope: scope, ThreadID: thread, TurnIDs: []string{}, Filter: report, Signals: signals, Redacted: red.Take()}

	turns := make([]memory.Turn, len(exchanges))
	for i, e := range exchanges {
		turns[i] = memory.Turn{ID: s.newID(), ThreadID: thread, Time: when, Stored: now, User: e.User, Reply: e.Reply, Signals: signals, MetaData: meta,
			IdempotencyKey: req.IdempotencyKey}
	}

	// Once the append starts, finish the call even if the client gives up:
	// an acknowledged-or-not turn must never be half handled.
	ctx = context.WithoutCancel(ctx)
	var st *scopeState
	if len(turns) > 0 {
		// Catch up with the log first (another process may have stored
		// the same exchange): the turn log, not this process's memory,
		// tells a retry from a new exchange, so it is read even when no
		// change was announced.
		s.invalidate(scope)
		if st, err = s.loadedState(ctx, scope); err != nil {
			return nil, err
		}
		dup, err := duplicateOf(st, thread, turns, req.Timestamp != "", now)
		if err != nil {
			st.mu.Unlock()
			return nil, err
		}
		if dup != nil {
			res.TurnIDs, res.Duplicate = dup, true
			res.Note = "already stored: the same exchange reached this thread moments ago (a client retry?); answered with the stored turn, nothing stored again"
			res.Pending = s.pendingInfo(st, thread)
			st.mu.Unlock()
			// The stored turn may still wait for the flush that makes it
			// durable: it is acknowledged only after it.
			if err := s.syncTurns(ctx, scope, st); err != nil {
				return nil, err
			}
			return s.addFacts(ctx, res, req.Facts, stated, red)
		}
	} else {
		st = s.liveState(scope)
	}
	var stored []memory.Turn
	if len(turns) > 0 {
		stored, err = s.writeTurns(ctx, scope, turns)
		if err != nil {
			st.mu.Unlock()
			return nil, fmt.Errorf("store turns: %w", err)
		}
		for _, t := range stored {
			res.TurnIDs = append(res.TurnIDs, t.ID)
		}
		retry, err := retriedAppend(stored, turns)
		if err != nil {
			st.mu.Unlock()
			return nil, err
		}
		if retry {
			res.Duplicate = true
			res.Note = "already stored: an earlier call with this idempotency_key stored the exchange (its answer was lost?); answered with the stored turn, nothing stored again"
			stored = nil
		}
	} else {
		res.Note = "nothing to remember: the filter dropped every message (tool traffic, system prompts, upload-only input or empty text)"
	}
	// Catch up with the log (our turns and any another process appended),
	// unless our turns directly follow what st holds: then nothing else
	// is new and they need not be read back.
	if !s.appended(ctx, st, stored) {
		if st, err = s.resync(ctx, st); err != nil {
			return nil, err
		}
	}
	res.Pending = s.pendingInfo(st, thread)
	st.mu.Unlock()
	if len(turns) > 0 {
		if err := s.syncTurns(ctx, scope, st); err != nil {
			return nil, err
		}
		if len(stored) > 0 && s.llm != nil {
			s.queue.enqueue(scope, thread, signals)
		}
	}
	if len(res.TurnIDs) == 0 {
		for _, f := range req.Facts {
			res.Facts = append(res.Facts, memory.HostFactResult{Content: f.Content, Status: memory.HostFactRefused,
				Reason: "no exchange was stored, so there is no thread to take the fact from; save it with save_memory"})
		}
		return res, nil
	}
	return s.addFacts(ctx, res, req.Facts, stated, red)
}

// addFacts applies the facts passed with a stored exchange dated when
// (zero: undated),
// and says what memory still needs from the host's model.
func (s *Service) addFacts(ctx context.Context, res *memory.AddResult, facts []memory.HostFact, when time.Time, red *memory.Redactor) (*memory.AddResult, error) {
	if len(facts) > 0 {
		out, err := s.applyHostFacts(ctx, res.Scope, res.ThreadID, facts, when, red)
		if err != nil {
			return nil, err
		}
		res.Facts = out
		// The facts' secrets join the exchange's in the count.
		for _, r := range red.Take() {
			i := 0
			for i < len(res.Redacted) && res.Redacted[i].Kind != r.Kind {
				i++
			}
			if i == len(res.Redacted) {
				res.Redacted = append(res.Redacted, memory.Redaction{Kind: r.Kind})
			}
			res.Redacted[i].Count += r.Count
		}
	}
	if s.llm != nil {
		return res, nil
	}
	corrected := false
	for i, f := range res.Facts {
		if f.Status != memory.HostFactRefused && strings.EqualFold(strings.TrimSpace(facts[i].Category), memory.CategoryCorrection) {
			corrected = true
		}
	}
	switch {
	case res.Signals.Correction && !corrected:
		res.Ask = "the user corrected you: send this call again with the same exchange (it is not stored twice) and a facts entry of category correction, " +
			"whose content is the right approach and source_error what went wrong"
	case len(facts) == 0:
		res.Ask = "you are the extraction model (none is configured), so this exchange teaches memory nothing unless you pass its lasting facts: " +
			"send this call again with the same exchange (it is not stored twice) and facts, a few short ones worth remembering across conversations, " +
			"never secrets — or nothing if it holds none"
	}
	return res, nil
}

// maxPendingThreads bounds the threads listed in PendingInfo.
const maxPendingThreads = 10

// pendingInfo reports the scope's pending work, listing thread (when it has
// pending turns) and the busiest other threads.
func (s *Service) pendingInfo(st *scopeState, thread string) memory.PendingInfo {
	if s.llm == nil {
		// No updater reads the turns above the watermarks, so none of
		// them is pending: they are stored, and the facts come from the
		// host. (A model configured later takes them, oldest first.)
		return memory.PendingInfo{LLM: memory.KeylessMode}
	}
	// The call's thread and the maxPendingThreads busiest others, from
	// the cache's ranking: no pass over every thread of the scope.
	c := st.pendingCounts()
	byThread := make(map[string]int, maxPendingThreads+1)
	if n, ok := c.count[thread]; ok {
		byThread[thread] = n
	}
	others := 0
	for _, t := range c.top {
		if t.id != thread && others < maxPendingThreads {
			byThread[t.id] = t.n
			others++
		}
	}
	other := len(c.count) - len(byThread)
	llm := fmt.Sprintf("configured: pending turns are processed after %ds of quiet per thread, or now by flush_memory", s.cfg.DebounceSeconds)
	if fails := s.queue.failures(st.scope); len(fails) > 0 {
		parts := make([]string, 0, len(fails))
		for thread, msg := range fails {
			parts = append(parts, "thread "+thread+": "+msg)
		}
		sort.Strings(parts)
		llm = "configured, but the last update failed and is retried in the background with backoff — " + strings.Join(parts, "; ")
	}
	p := memory.PendingInfo{Turns: c.total, Threads: byThread, OtherThreads: other, LLM: llm}
	if s.cfg.DailyTokenBudget > 0 && c.total > 0 {
		p.Deferred = s.usageOf(st.scope, st.doc).Deferred
	}
	return p
}

// duplicateOf returns the ids of the thread's last turns when they are
// the exchange turns again: stored within DuplicateWindow before now,
// with the same text (and time, when the caller gave one) and the same
// idempotency key. A key used for a different exchange is an input
// error. The caller holds st.mu over a synced state.
func duplicateOf(st *scopeState, thread string, turns []memory.Turn, timed bool, now time.Time) ([]string, error) {
	pos := st.Threads[thread]
	key := turns[0].IdempotencyKey
	if key != "" {
		// The key decides: look back through the window for it.
		for i := len(pos) - 1; i >= 0; i-- {
			t := st.Turns[pos[i]]
			if now.Sub(t.Stored) > memory.DuplicateWindow {
				break
			}
			if t.IdempotencyKey == key {
				return sameExchange(st, pos[:i+1], turns, timed, now, key)
			}
		}
		return nil, nil
	}
	return sameExchange(st, pos, turns, timed, now, "")
}

// sameExchange compares turns with the last len(turns) turns at pos.
func sameExchange(st *scopeState, pos []int, turns []memory.Turn, timed bool, now time.Time, key string) ([]string, error) {
	mismatch := func() ([]string, error) {
		if key != "" {
			return nil, memory.Invalid("idempotency_key", "%q was used for a different exchange in this thread moments ago; use a new key for a new exchange", key)
		}
		return nil, nil
	}
	if len(pos) < len(turns) {
		return mismatch()
	}
	last := pos[len(pos)-len(turns):]
	ids := make([]string, len(turns))
	for i, p := range last {
		t, n := st.Turns[p], turns[i]
		if t.User != n.User || t.Reply != n.Reply || t.IdempotencyKey != key ||
			now.Sub(t.Stored) > memory.DuplicateWindow || (timed && !t.Time.Equal(n.Time)) {
			return mismatch()
		}
		ids[i] = t.ID
	}
	return ids, nil
}

// writeTurns appends turns to the scope's log; with a store that commits
// in groups (memory.GroupCommitter) it returns before they are durable,
// and the caller, once it has released the scope's lock, waits for them
// with syncTurns. Adds that arrive meanwhile share one flush.
func (s *Service) writeTurns(ctx context.Context, scope memory.Scope, turns []memory.Turn) ([]memory.Turn, error) {
	if gc, ok := s.groupCommitter(); ok {
		// As localWrites does for AppendTurns: the Service sees its own
		// write at once.
		defer s.invalidate(scope)
		return gc.WriteTurns(ctx, scope, turns)
	}
	return s.store.AppendTurns(ctx, scope, turns)
}

// groupCommitter returns the store as a memory.GroupCommitter, if it is
// one. It is asked of the store as given: s.store, which wraps it
// (localWrites), has only memory.Store's methods.
func (s *Service) groupCommitter() (memory.GroupCommitter, bool) {
	gc, ok := s.base.(memory.GroupCommitter)
	return gc, ok
}

// syncTurns waits until the turns written to scope are durable. A failed
// flush cut them from the log again, so st, which holds them, is dropped:
// the scope is read again at its next use.
func (s *Service) syncTurns(ctx context.Context, scope memory.Scope, st *scopeState) error {
	gc, ok := s.groupCommitter()
	if !ok {
		return nil
	}
	if err := gc.SyncTurns(ctx, scope); err != nil {
		s.dropState(st)
		return fmt.Errorf("store turns: %w", err)
	}
	return nil
}
