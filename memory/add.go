package memory

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"time"
	"unicode/utf8"
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

// earliest and latest bound accepted timestamps.
var (
	earliest = time.Date(1900, 1, 1, 0, 0, 0, 0, time.UTC)
	latest   = time.Date(2200, 1, 1, 0, 0, 0, 0, time.UTC)
)

// ParseTimestamp accepts RFC 3339 (with or without fractional seconds) and
// "YYYY-MM-DD HH:MM:SS" or "YYYY-MM-DDTHH:MM:SS" (taken as UTC), between
// the years 1900 and 2200.
func ParseTimestamp(s string) (time.Time, error) {
	s = strings.TrimSpace(s)
	var t time.Time
	var err error
	for _, layout := range []string{time.RFC3339Nano, "2006-01-02 15:04:05", "2006-01-02T15:04:05", "2006-01-02 15:04:05Z07:00"} {
		if t, err = time.Parse(layout, s); err == nil {
			break
		}
	}
	if err != nil {
		return time.Time{}, invalid("timestamp", "%q is not a valid time; use RFC 3339 like 2024-05-08T13:56:00Z or \"2024-05-08 13:56:00\"", s)
	}
	if t.Before(earliest) || !t.Before(latest) {
		return time.Time{}, invalid("timestamp", "%q is out of range; use a date between 1900 and 2200", s)
	}
	return t.UTC(), nil
}

// validateMetaData checks that raw is a JSON object within the size limit
// and returns it compacted.
func validateMetaData(raw json.RawMessage, limit int) (json.RawMessage, error) {
	trimmed := bytes.TrimSpace(raw)
	if len(trimmed) == 0 || bytes.Equal(trimmed, []byte("null")) {
		return nil, nil
	}
	if len(trimmed) > limit {
		return nil, invalid("meta_data", "is %d bytes; the limit is %d", len(trimmed), limit)
	}
	if trimmed[0] != '{' {
		return nil, invalid("meta_data", "must be a JSON object like {\"source\": \"chat\"}")
	}
	var buf bytes.Buffer
	if err := json.Compact(&buf, trimmed); err != nil {
		return nil, invalid("meta_data", "is not valid JSON: %v", err)
	}
	if err := checkDepth(buf.Bytes(), 32); err != nil {
		return nil, err
	}
	return json.RawMessage(buf.Bytes()), nil
}

// checkDepth rejects JSON nested deeper than max levels.
func checkDepth(data []byte, max int) error {
	depth := 0
	inString, escaped := false, false
	for _, c := range data {
		switch {
		case escaped:
			escaped = false
		case inString && c == '\\':
			escaped = true
		case c == '"':
			inString = !inString
		case inString:
		case c == '{' || c == '[':
			depth++
			if depth > max {
				return invalid("meta_data", "is nested more than %d levels deep", max)
			}
		case c == '}' || c == ']':
			depth--
		}
	}
	return nil
}

// checkText rejects text that is not UTF-8, holds control characters other
// than tab and newlines, or is over the limit.
func checkText(field, text string, limit int) error {
	if len(text) > limit {
		return invalid(field, "is %d bytes; the limit is %d — split it into several calls", len(text), limit)
	}
	if !utf8.ValidString(text) {
		return invalid(field, "is not valid UTF-8")
	}
	for _, r := range text {
		if r < 0x20 && r != '\n' && r != '\t' && r != '\r' || r == 0x7f {
			return invalid(field, "contains control character %U; remove it", r)
		}
	}
	return nil
}

// normalizeMessages validates the request and returns it as one message list.
func (s *Service) normalizeMessages(req *AddRequest) ([]Message, error) {
	hasPair := req.UserInput != "" || req.AgentResponse != ""
	switch {
	case hasPair && len(req.Messages) > 0:
		return nil, invalid("messages", "give either user_input/agent_response or messages, not both")
	case !hasPair && len(req.Messages) == 0:
		return nil, invalid("user_input", "nothing to store: give user_input and agent_response, or a messages list")
	}
	if hasPair {
		if err := checkText("user_input", req.UserInput, s.cfg.MaxMessageBytes); err != nil {
			return nil, err
		}
		if err := checkText("agent_response", req.AgentResponse, s.cfg.MaxMessageBytes); err != nil {
			return nil, err
		}
		return []Message{{Role: RoleUser, Content: req.UserInput}, {Role: RoleAssistant, Content: req.AgentResponse}}, nil
	}
	if len(req.Messages) > s.cfg.MaxMessages {
		return nil, invalid("messages", "has %d messages; the limit is %d per call", len(req.Messages), s.cfg.MaxMessages)
	}
	for i, m := range req.Messages {
		field := fmt.Sprintf("messages[%d]", i)
		if !m.Role.Valid() {
			return nil, invalid(field+".role", "%q is not a role; use system, user, assistant or tool", m.Role)
		}
		if err := checkText(field+".content", m.Content, s.cfg.MaxMessageBytes); err != nil {
			return nil, err
		}
	}
	return req.Messages, nil
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
	st := s.state(scope)
	st.mu.Lock()
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
