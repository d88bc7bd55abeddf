package engine

import (
	"context"
	"slices"
	"strings"

	"github.com/mnemo-mcp/mnemo/memory"
)

// FactHistory returns the recorded events of one fact, or the latest
// events of the scope. A fact id with neither events nor a current fact is
// an error wrapping ErrNotFound.
func (s *Service) FactHistory(ctx context.Context, req memory.HistoryRequest) (*memory.HistoryResult, error) {
	scope, err := s.resolveScope(req.UserID, req.AgentName)
	if err != nil {
		return nil, err
	}
	offset, limit, err := memory.CheckPage(req.Offset, req.Limit)
	if err != nil {
		return nil, err
	}
	st, err := s.loadedState(ctx, scope)
	if err != nil {
		return nil, err
	}
	defer st.mu.Unlock()
	d := st.doc
	res := &memory.HistoryResult{Scope: scope, FactID: req.FactID, Events: []memory.FactEvent{}, SectionEvents: []memory.SectionEvent{}}
	if req.Section != "" {
		if req.FactID != "" {
			return nil, memory.Invalid("section", "give fact_id or section, not both")
		}
		if !slices.Contains(memory.ProfileSections, req.Section) {
			return nil, memory.Invalid("section", "%q is not a profile section; use one of %s", req.Section, strings.Join(memory.ProfileSections, ", "))
		}
		res.Section = req.Section
		for _, e := range d.SectionEvents {
			if e.Section == req.Section {
				res.SectionEvents = append(res.SectionEvents, e)
			}
		}
		res.Total = len(res.SectionEvents)
		if len(res.SectionEvents) > limit {
			res.SectionEvents = res.SectionEvents[len(res.SectionEvents)-limit:]
		}
		return res, nil
	}
	if req.FactID == "" {
		for i := len(d.SectionEvents) - 1; i >= 0 && len(res.SectionEvents) < limit; i-- {
			res.SectionEvents = append(res.SectionEvents, d.SectionEvents[i])
		}
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
	for _, list := range [][]memory.Fact{d.Facts, d.Knowledge, d.AssistantKnowledge} {
		if i := slices.IndexFunc(list, func(f memory.Fact) bool { return f.ID == req.FactID }); i >= 0 {
			f := list[i]
			res.Current = &f
			break
		}
	}
	if res.Total == 0 && res.Current == nil {
		return nil, memory.NotFound("no fact %q and no history of it in the memory of %s; memory_history without fact_id shows the latest events", req.FactID, scope.Key())
	}
	return res, nil
}
