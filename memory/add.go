package memory

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"time"
)

// AddRequest is one add_memory call: either UserInput+AgentResponse or
// Messages, plus where it belongs.
type AddRequest struct {
	UserID        string
	AgentName     string
	ThreadID      string
	UserInput     string
	AgentResponse string
	Messages      []Message
	// Timestamp is when the exchange happened: RFC 3339 or
	// "YYYY-MM-DD HH:MM:SS" (UTC); empty means now.
	Timestamp string
	// MetaData is a JSON object stored with the turn and returned verbatim.
	MetaData json.RawMessage
	// IdempotencyKey, when set, identifies the exchange across a client's
	// retries: the same exchange sent again with it within DuplicateWindow
	// is answered with the stored turns instead of being stored twice.
	IdempotencyKey string
	// Facts are the lasting facts the host's model distilled from the
	// exchange; they take the path of extracted facts (host_facts.go).
	Facts []HostFact
}

// DuplicateWindow is how long after an exchange was stored the same
// exchange sent again to the same thread (a client retrying after a
// time-out) is answered with the stored turns rather than stored twice.
const DuplicateWindow = 2 * time.Minute

// AddResult reports what add_memory stored.
type AddResult struct {
	Scope    Scope        `json:"scope"`
	ThreadID string       `json:"thread_id"`
	TurnIDs  []string     `json:"turn_ids"`
	Filter   FilterReport `json:"filter"`
	Signals  Signals      `json:"signals"`
	Pending  PendingInfo  `json:"pending"`
	// Duplicate is set when the exchange was already stored (a retry):
	// TurnIDs are the turns stored then, and nothing was stored again.
	Duplicate bool `json:"duplicate,omitempty"`
	// Redacted counts the secrets replaced by "[redacted: KIND]" before
	// the turns were written, by kind; empty when there were none.
	Redacted []Redaction `json:"redacted,omitempty"`
	// Facts says what became of each fact passed with the exchange, in
	// order: kept, merged with a known fact, or refused with the reason.
	Facts []HostFactResult `json:"facts,omitempty"`
	// Ask is what the memory needs from the host's model, if anything:
	// the lasting facts of the exchange when no extraction model is
	// configured, or the right approach after a correction.
	Ask string `json:"ask,omitempty"`
	// Note explains a call that stored nothing.
	Note string `json:"note,omitempty"`
}

// PendingInfo says how much background work waits for the updater.
type PendingInfo struct {
	Turns int `json:"turns"`
	// Threads maps a thread id to its pending turns: the thread of the
	// call and otherwise the maxPendingThreads busiest ones.
	Threads map[string]int `json:"threads,omitempty"`
	// OtherThreads counts the threads with pending turns left out of
	// Threads, so an answer stays small however many threads a user has.
	OtherThreads int `json:"other_threads,omitempty"`
	// LLM is "not configured" or the state of the configured model.
	LLM string `json:"llm"`
	// Deferred, when set, says that extraction waits for the daily token
	// budget to renew (daily_token_budget).
	Deferred string `json:"deferred,omitempty"`
}

// Add validates, filters and durably stores one exchange (or several, for a
// message list), and reports what was kept and what is pending. It returns
// only after the turns are durable. Errors wrapping ErrInvalidInput say
// what to fix; nothing is stored then.
func (s *Service) Add(ctx context.Context, req AddRequest) (*AddResult, error) {
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
	meta, err := validateMetaData(req.MetaData, s.cfg.MaxMetaDataBytes)
	if err != nil {
		return nil, err
	}
	if req.IdempotencyKey != "" {
		if err := ValidateID("idempotency_key", req.IdempotencyKey); err != nil {
			return nil, err
		}
		if err := credentialID("idempotency_key", req.IdempotencyKey); err != nil {
			return nil, err
		}
	}
	now := s.now().UTC()
	when := now
	if req.Timestamp != "" {
		if when, err = ParseTimestamp(req.Timestamp); err != nil {
			return nil, err
		}
	}

	exchanges, report := Filter(msgs)
	red := &redactor{on: s.cfg.RedactSecrets}
	for i := range exchanges {
		exchanges[i].User, exchanges[i].Reply = red.text(exchanges[i].User), red.text(exchanges[i].Reply)
	}
	meta = red.json(meta)
	kept := make([]Message, 0, len(exchanges))
	for _, e := range exchanges {
		if e.User != "" {
			kept = append(kept, Message{Role: RoleUser, Content: e.User})
		}
	}
	signals := DetectSignals(kept)
	res := &AddResult{Scope: scope, ThreadID: thread, TurnIDs: []string{}, Filter: report, Signals: signals, Redacted: red.take()}

	turns := make([]Turn, len(exchanges))
	for i, e := range exchanges {
		turns[i] = Turn{ID: s.newID(), ThreadID: thread, Time: when, Stored: now, User: e.User, Reply: e.Reply, Signals: signals, MetaData: meta,
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
			return s.addFacts(ctx, res, req.Facts, red)
		}
	} else {
		st = s.liveState(scope)
	}
	var stored []Turn
	if len(turns) > 0 {
		stored, err = s.store.AppendTurns(ctx, scope, turns)
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
		} else if s.llm != nil {
			s.queue.enqueue(scope, thread, signals)
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
	if len(res.TurnIDs) == 0 {
		for _, f := range req.Facts {
			res.Facts = append(res.Facts, HostFactResult{Content: f.Content, Status: HostFactRefused,
				Reason: "no exchange was stored, so there is no thread to take the fact from; save it with save_memory"})
		}
		return res, nil
	}
	return s.addFacts(ctx, res, req.Facts, red)
}

// addFacts applies the facts passed with a stored exchange, and says what
// memory still needs from the host's model.
func (s *Service) addFacts(ctx context.Context, res *AddResult, facts []HostFact, red *redactor) (*AddResult, error) {
	if len(facts) > 0 {
		out, err := s.applyHostFacts(ctx, res.Scope, res.ThreadID, facts, red)
		if err != nil {
			return nil, err
		}
		res.Facts = out
		// The facts' secrets join the exchange's in the count.
		for _, r := range red.take() {
			i := 0
			for i < len(res.Redacted) && res.Redacted[i].Kind != r.Kind {
				i++
			}
			if i == len(res.Redacted) {
				res.Redacted = append(res.Redacted, Redaction{Kind: r.Kind})
			}
			res.Redacted[i].Count += r.Count
		}
	}
	if s.llm != nil {
		return res, nil
	}
	corrected := false
	for i, f := range res.Facts {
		if f.Status != HostFactRefused && strings.EqualFold(strings.TrimSpace(facts[i].Category), CategoryCorrection) {
			corrected = true
		}
	}
	switch {
	case res.Signals.Correction && !corrected:
		res.Ask = "the user corrected you: send this call again with the same exchange (it is not stored twice) and a facts entry of category correction, " +
			"whose content is the right approach and source_error what went wrong"
	case len(facts) == 0:
		res.Ask = "no extraction model is configured, so nothing is learned from this exchange unless you pass its lasting facts: " +
			"send this call again with the same exchange (it is not stored twice) and facts, a few short ones worth remembering across conversations, " +
			"never secrets — or nothing if it holds none"
	}
	return res, nil
}

// maxPendingThreads bounds the threads listed in PendingInfo.
const maxPendingThreads = 10

// pendingInfo reports the scope's pending work, listing thread (when it
// has pending turns) and the busiest other threads. The caller holds st.mu.
func (s *Service) pendingInfo(st *scopeState, thread string) PendingInfo {
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
	llm := "not configured: turns are stored and searchable; extraction waits for an LLM"
	if s.llm != nil {
		llm = fmt.Sprintf("configured: pending turns are processed after %ds of quiet per thread, or now by flush_memory", s.cfg.DebounceSeconds)
		if fails := s.queue.failures(st.scope); len(fails) > 0 {
			parts := make([]string, 0, len(fails))
			for thread, msg := range fails {
				parts = append(parts, "thread "+thread+": "+msg)
			}
			sort.Strings(parts)
			llm = "configured, but the last update failed and is retried in the background with backoff — " + strings.Join(parts, "; ")
		}
	}
	p := PendingInfo{Turns: c.total, Threads: byThread, OtherThreads: other, LLM: llm}
	if s.llm != nil && s.cfg.DailyTokenBudget > 0 && c.total > 0 {
		p.Deferred = s.usageOf(st.scope, st.doc).Deferred
	}
	return p
}

// duplicateOf returns the ids of the thread's last turns when they are
// the exchange turns again: stored within DuplicateWindow before now,
// with the same text (and time, when the caller gave one) and the same
// idempotency key. A key used for a different exchange is an input
// error. The caller holds st.mu over a synced state.
func duplicateOf(st *scopeState, thread string, turns []Turn, timed bool, now time.Time) ([]string, error) {
	pos := st.threads[thread]
	key := turns[0].IdempotencyKey
	if key != "" {
		// The key decides: look back through the window for it.
		for i := len(pos) - 1; i >= 0; i-- {
			t := st.turns[pos[i]]
			if now.Sub(t.Stored) > DuplicateWindow {
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
func sameExchange(st *scopeState, pos []int, turns []Turn, timed bool, now time.Time, key string) ([]string, error) {
	mismatch := func() ([]string, error) {
		if key != "" {
			return nil, invalid("idempotency_key", "%q was used for a different exchange in this thread moments ago; use a new key for a new exchange", key)
		}
		return nil, nil
	}
	if len(pos) < len(turns) {
		return mismatch()
	}
	last := pos[len(pos)-len(turns):]
	ids := make([]string, len(turns))
	for i, p := range last {
		t, n := st.turns[p], turns[i]
		if t.User != n.User || t.Reply != n.Reply || t.IdempotencyKey != key ||
			now.Sub(t.Stored) > DuplicateWindow || (timed && !t.Time.Equal(n.Time)) {
			return mismatch()
		}
		ids[i] = t.ID
	}
	return ids, nil
}
