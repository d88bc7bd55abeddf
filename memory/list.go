package memory

import (
	"cmp"
	"context"
	"slices"
	"strings"
	"time"
)

// List kinds.
const (
	ListFacts   = "facts"
	ListTurns   = "turns"
	ListThreads = "threads"
)

// Pagination bounds of List and FactHistory.
const (
	DefaultListLimit = 20
	MaxListLimit     = 100
)

// ListRequest is one list_memories call: a page of one kind of stored
// memory, filtered.
type ListRequest struct {
	UserID    string
	AgentName string
	// Kind is ListFacts (the default), ListTurns or ListThreads.
	Kind string
	// Category and MinConfidence filter facts only.
	Category      string
	MinConfidence float64
	// ThreadID keeps facts extracted from that thread, or the turns of it.
	ThreadID string
	// Since and Until (RFC 3339) bound a fact's creation time, a turn's
	// time, or a thread's last exchange.
	Since, Until string
	// Text keeps items containing it, ignoring case.
	Text string
	// Offset skips that many matching items; Limit is the page size,
	// DefaultListLimit when 0, at most MaxListLimit.
	Offset, Limit int
}

// ListedTurn is a stored exchange in a list.
type ListedTurn struct {
	ID       string    `json:"id"`
	Seq      int64     `json:"seq"`
	ThreadID string    `json:"thread_id"`
	Time     time.Time `json:"timestamp"`
	User     string    `json:"user_input,omitempty"`
	Reply    string    `json:"agent_response,omitempty"`
	// Processed is true once the updater has read the exchange.
	Processed bool `json:"processed"`
}

// ListedThread is one conversation of a scope.
type ListedThread struct {
	ID      string    `json:"thread_id"`
	Turns   int       `json:"turns"`
	Pending int       `json:"pending"`
	First   time.Time `json:"first"`
	Last    time.Time `json:"last"`
}

// ListResult is one page of a list, newest first.
type ListResult struct {
	Scope Scope  `json:"scope"`
	Kind  string `json:"kind"`
	// Total is how many items match the filters.
	Total  int `json:"total"`
	Offset int `json:"offset"`
	// NextOffset is the offset of the next page; 0 when this is the last.
	NextOffset int            `json:"next_offset"`
	Facts      []Fact         `json:"facts,omitempty"`
	Turns      []ListedTurn   `json:"turns,omitempty"`
	Threads    []ListedThread `json:"threads,omitempty"`
}

// page returns items[offset:offset+limit] and the next offset.
func page[T any](items []T, offset, limit int) ([]T, int) {
	if offset >= len(items) {
		return []T{}, 0
	}
	end := min(offset+limit, len(items))
	next := 0
	if end < len(items) {
		next = end
	}
	return items[offset:end], next
}

// List returns one page of a scope's facts, exchanges or threads, newest
// first, so a host can browse memory without pulling all of it.
func (s *Service) List(ctx context.Context, req ListRequest) (*ListResult, error) {
	scope, err := s.resolveScope(req.UserID, req.AgentName)
	if err != nil {
		return nil, err
	}
	kind := cmp.Or(req.Kind, ListFacts)
	if kind != ListFacts && kind != ListTurns && kind != ListThreads {
		return nil, invalid("kind", "%q is not a kind; use facts, turns or threads", req.Kind)
	}
	if kind != ListFacts && (req.Category != "" || req.MinConfidence != 0) {
		return nil, invalid("kind", "category and min_confidence filter facts only; set kind to facts or leave them out")
	}
	cat, err := checkCategory(req.Category, "")
	if err != nil {
		return nil, err
	}
	if req.MinConfidence < 0 || req.MinConfidence > 1 || req.MinConfidence != req.MinConfidence {
		return nil, invalid("min_confidence", "%v is not between 0 and 1", req.MinConfidence)
	}
	if req.ThreadID != "" {
		if err := ValidateID("thread_id", req.ThreadID); err != nil {
			return nil, err
		}
	}
	since, err := parseBound("since", req.Since)
	if err != nil {
		return nil, err
	}
	until, err := parseBound("until", req.Until)
	if err != nil {
		return nil, err
	}
	if !since.IsZero() && !until.IsZero() && until.Before(since) {
		return nil, invalid("until", "is before since; swap them")
	}
	offset, limit, err := checkPage(req.Offset, req.Limit)
	if err != nil {
		return nil, err
	}
	inRange := func(t time.Time) bool {
		return (since.IsZero() || !t.Before(since)) && (until.IsZero() || !t.After(until))
	}
	text := strings.ToLower(strings.TrimSpace(req.Text))
	has := func(parts ...string) bool {
		if text == "" {
			return true
		}
		for _, p := range parts {
			if strings.Contains(strings.ToLower(p), text) {
				return true
			}
		}
		return false
	}

	st, err := s.loadedState(ctx, scope)
	if err != nil {
		return nil, err
	}
	defer st.mu.Unlock()
	res := &ListResult{Scope: scope, Kind: kind, Offset: offset}
	switch kind {
	case ListFacts:
		var facts []Fact
		for _, f := range st.doc.Facts {
			if (cat == "" || f.Category == cat) && f.Confidence >= req.MinConfidence &&
				(req.ThreadID == "" || f.Source == req.ThreadID) && inRange(f.CreatedAt) && has(f.Content) {
				facts = append(facts, f)
			}
		}
		slices.SortStableFunc(facts, func(a, b Fact) int { return b.CreatedAt.Compare(a.CreatedAt) })
		res.Total = len(facts)
		res.Facts, res.NextOffset = page(facts, offset, limit)
	case ListTurns:
		var turns []ListedTurn
		for i := len(st.turns) - 1; i >= 0; i-- {
			t := st.turns[i]
			if (req.ThreadID == "" || t.ThreadID == req.ThreadID) && inRange(t.Time) && has(t.User, t.Reply) {
				turns = append(turns, ListedTurn{ID: t.ID, Seq: t.Seq, ThreadID: t.ThreadID, Time: t.Time, User: t.User, Reply: t.Reply,
					Processed: t.Seq <= st.doc.Watermarks[t.ThreadID]})
			}
		}
		res.Total = len(turns)
		res.Turns, res.NextOffset = page(turns, offset, limit)
	case ListThreads:
		var threads []ListedThread
		for id, positions := range st.threads {
			if req.ThreadID != "" && id != req.ThreadID {
				continue
			}
			th := ListedThread{ID: id, Turns: len(positions)}
			match := false
			for _, p := range positions {
				t := st.turns[p]
				if th.First.IsZero() || t.Time.Before(th.First) {
					th.First = t.Time
				}
				if t.Time.After(th.Last) {
					th.Last = t.Time
				}
				if t.Seq > st.doc.Watermarks[id] {
					th.Pending++
				}
				match = match || has(t.User, t.Reply)
			}
			if match && inRange(th.Last) {
				threads = append(threads, th)
			}
		}
		slices.SortFunc(threads, func(a, b ListedThread) int {
			return cmp.Or(b.Last.Compare(a.Last), strings.Compare(a.ID, b.ID))
		})
		res.Total = len(threads)
		res.Threads, res.NextOffset = page(threads, offset, limit)
	}
	return res, nil
}
