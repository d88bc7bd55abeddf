package memory

import (
	"context"
	"slices"
)

// HistoryRequest is one memory_history call.
type HistoryRequest struct {
	UserID    string
	AgentName string
	// FactID selects one fact's events; empty means the latest events of
	// every fact.
	FactID string
	// Limit bounds the events returned: DefaultListLimit when 0, at most
	// MaxListLimit.
	Limit int
	// Offset skips that many of the newest events of the scope (a page of
	// the latest events); not used with FactID.
	Offset int
}

// HistoryResult is how facts came to be. For one fact the events are
// oldest first (its story); for all facts, newest first.
type HistoryResult struct {
	Scope  Scope       `json:"scope"`
	FactID string      `json:"fact_id,omitempty"`
	Events []FactEvent `json:"events"`
	// Current is the fact as it is now; absent when it was removed.
	Current *Fact `json:"current,omitempty"`
	// Total is how many events there are for the request.
	Total int `json:"total"`
}

// FactHistory returns the recorded events of one fact, or the latest
// events of the scope. A fact id with neither events nor a current fact is
// an error wrapping ErrNotFound.
func (s *Service) FactHistory(ctx context.Context, req HistoryRequest) (*HistoryResult, error) {
	scope, err := s.resolveScope(req.UserID, req.AgentName)
	if err != nil {
		return nil, err
	}
	offset, limit, err := checkPage(req.Offset, req.Limit)
	if err != nil {
		return nil, err
	}
	st, err := s.loadedState(ctx, scope)
	if err != nil {
		return nil, err
	}
	defer st.mu.Unlock()
	d := st.doc
	res := &HistoryResult{Scope: scope, FactID: req.FactID, Events: []FactEvent{}}
	if req.FactID == "" {
		res.Total = len(d.FactEvents)
		for i := len(d.FactEvents) - 1 - offset; i >= 0 && len(res.Events) < limit; i-- {
			res.Events = append(res.Events, d.FactEvents[i])
		}
		return res, nil
	}
	for _, e := range d.FactEvents {
		if e.FactID == req.FactID {
			res.Events = append(res.Events, e)
		}
	}
	res.Total = len(res.Events)
	if len(res.Events) > limit {
		res.Events = res.Events[len(res.Events)-limit:]
	}
	for _, list := range [][]Fact{d.Facts, d.Knowledge, d.AssistantKnowledge} {
		if i := slices.IndexFunc(list, func(f Fact) bool { return f.ID == req.FactID }); i >= 0 {
			f := list[i]
			res.Current = &f
			break
		}
	}
	if res.Total == 0 && res.Current == nil {
		return nil, notFound("no fact %q and no history of it in the memory of %s; memory_history without fact_id shows the latest events", req.FactID, scope.Key())
	}
	return res, nil
}
