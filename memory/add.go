package memory

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"strings"
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
}

// AddResult reports what add_memory stored.
type AddResult struct {
	Scope    Scope        `json:"scope"`
	ThreadID string       `json:"thread_id"`
	TurnIDs  []string     `json:"turn_ids"`
	Filter   FilterReport `json:"filter"`
	Signals  Signals      `json:"signals"`
	Pending  PendingInfo  `json:"pending"`
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
	now := s.now().UTC()
	when := now
	if req.Timestamp != "" {
		if when, err = ParseTimestamp(req.Timestamp); err != nil {
			return nil, err
		}
	}

	exchanges, report := Filter(msgs)
	kept := make([]Message, 0, len(exchanges))
	for _, e := range exchanges {
		if e.User != "" {
			kept = append(kept, Message{Role: RoleUser, Content: e.User})
		}
	}
	signals := DetectSignals(kept)
	res := &AddResult{Scope: scope, ThreadID: thread, TurnIDs: []string{}, Filter: report, Signals: signals}

	turns := make([]Turn, len(exchanges))
	for i, e := range exchanges {
		turns[i] = Turn{ID: s.newID(), ThreadID: thread, Time: when, Stored: now, User: e.User, Reply: e.Reply, Signals: signals, MetaData: meta}
	}

	// Once the append starts, finish the call even if the client gives up:
	// an acknowledged-or-not turn must never be half handled.
	ctx = context.WithoutCancel(ctx)
	st := s.liveState(scope)
	if len(turns) > 0 {
		stored, err := s.store.AppendTurns(ctx, scope, turns)
		if err != nil {
			st.mu.Unlock()
			return nil, fmt.Errorf("store turns: %w", err)
		}
		for _, t := range stored {
			res.TurnIDs = append(res.TurnIDs, t.ID)
		}
		if s.llm != nil {
			s.queue.enqueue(scope, thread, signals)
		}
	} else {
		res.Note = "nothing to remember: the filter dropped every message (tool traffic, system prompts, upload-only input or empty text)"
	}
	// Catch up with the log (our turns and any another process appended).
	st, err = s.resync(ctx, st)
	if err != nil {
		return nil, err
	}
	defer st.mu.Unlock()
	res.Pending = s.pendingInfo(st, thread)
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
	return PendingInfo{Turns: c.total, Threads: byThread, OtherThreads: other, LLM: llm}
}
