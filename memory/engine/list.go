package engine

import (
	"cmp"
	"context"
	"slices"
	"strings"
	"time"

	"github.com/mnemo-mcp/mnemo/memory"
)

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
func (s *Service) List(ctx context.Context, req memory.ListRequest) (*memory.ListResult, error) {
	scope, err := s.resolveScope(req.UserID, req.AgentName)
	if err != nil {
		return nil, err
	}
	kind := cmp.Or(req.Kind, memory.ListFacts)
	if kind != memory.ListFacts && kind != memory.ListTurns && kind != memory.ListThreads {
		return nil, memory.Invalid("kind", "%q is not a kind; use facts, turns or threads", req.Kind)
	}
	if kind != memory.ListFacts && (req.Category != "" || req.MinConfidence != 0) {
		return nil, memory.Invalid("kind", "category and min_confidence filter facts only; set kind to facts or leave them out")
	}
	cat, err := memory.CheckCategory(req.Category, "")
	if err != nil {
		return nil, err
	}
	if req.MinConfidence < 0 || req.MinConfidence > 1 || req.MinConfidence != req.MinConfidence {
		return nil, memory.Invalid("min_confidence", "%v is not between 0 and 1", req.MinConfidence)
	}
	if req.ThreadID != "" {
		if err := memory.ValidateID("thread_id", req.ThreadID); err != nil {
			return nil, err
		}
	}
	since, err := memory.ParseBound("since", req.Since)
	if err != nil {
		return nil, err
	}
	until, err := memory.ParseBound("until", req.Until)
	if err != nil {
		return nil, err
	}
	if !since.IsZero() && !until.IsZero() && until.Before(since) {
		return nil, memory.Invalid("until", "is before since; swap them")
	}
	offset, limit, err := memory.CheckPage(req.Offset, req.Limit)
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
	res := &memory.ListResult{Scope: scope, Kind: kind, Offset: offset}
	switch kind {
	case memory.ListFacts:
		var facts []memory.Fact
		for _, f := range st.doc.Facts {
			if (cat == "" || f.Category == cat) && f.Confidence >= req.MinConfidence &&
				(req.ThreadID == "" || f.Source == req.ThreadID) && inRange(f.CreatedAt) && has(f.Content) {
				facts = append(facts, f)
			}
		}
		slices.SortStableFunc(facts, func(a, b memory.Fact) int { return b.CreatedAt.Compare(a.CreatedAt) })
		res.Total = len(facts)
		res.Facts, res.NextOffset = page(facts, offset, limit)
	case memory.ListTurns:
		var turns []memory.ListedTurn
		for i := len(st.Turns) - 1; i >= 0; i-- {
			t := st.Turns[i]
			if (req.ThreadID == "" || t.ThreadID == req.ThreadID) && inRange(t.Time) && has(t.User, t.Reply) {
				turns = append(turns, memory.ListedTurn{ID: t.ID, Seq: t.Seq, ThreadID: t.ThreadID, Time: t.Time, User: t.User, Reply: t.Reply,
					Processed: t.Seq <= st.doc.Watermarks[t.ThreadID]})
			}
		}
		res.Total = len(turns)
		res.Turns, res.NextOffset = page(turns, offset, limit)
	case memory.ListThreads:
		var threads []memory.ListedThread
		for id, positions := range st.Threads {
			if req.ThreadID != "" && id != req.ThreadID {
				continue
			}
			th := memory.ListedThread{ID: id, Turns: len(positions)}
			match := false
			for _, p := range positions {
				t := st.Turns[p]
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
		slices.SortFunc(threads, func(a, b memory.ListedThread) int {
			return cmp.Or(b.Last.Compare(a.Last), strings.Compare(a.ID, b.ID))
		})
		res.Total = len(threads)
		res.Threads, res.NextOffset = page(threads, offset, limit)
	}
	return res, nil
}
