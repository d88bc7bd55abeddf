package engine

import (
	"context"
	"slices"

	"github.com/mnemo-mcp/mnemo/memory"
	"github.com/mnemo-mcp/mnemo/memory/update"
)

// Looking without touching: a retrieval with RetrieveRequest.Peek (the
// memory viewer's preview and search) ranks as any other but counts no
// visit on a topic session, so it changes no heat and starts no analysis.

// peekPages is visitPages without the visit: the sessions holding the
// pages, in the order of their first page, with their heat as it is. The
// caller holds st.mu for reading, over a state ready to rank
// (prepareToRank); the heat is read under st.visitMu.
func (s *Service) peekPages(st *scopeState, turnIDs []string) []memory.SessionHit {
	now := s.now()
	m := st.midTerm
	st.visitMu.Lock()
	defer st.visitMu.Unlock()
	var hits []*memory.MidTermSession
	for _, id := range turnIDs {
		if num, ok := m.ByPage[id]; ok && !slices.Contains(hits, m.Sessions[num]) {
			hits = append(hits, m.Sessions[num])
		}
	}
	out := make([]memory.SessionHit, 0, len(hits))
	for _, ses := range hits {
		h := memory.SessionHit{ID: ses.ID, Summary: ses.Summary, Keywords: slices.Clone(ses.Keywords),
			Heat: update.Round4(ses.Heat(now, s.heatWeights())), PageCount: len(ses.Pages)}
		for _, id := range turnIDs {
			if m.ByPage[id] == ses.Num {
				h.PageIDs = append(h.PageIDs, id)
			}
		}
		out = append(out, h)
	}
	return out
}

// stampActor wraps an UpdateDocument function so that the fact events it
// adds record the context's actor (memory.WithActor). The events it adds
// are those after the last event the document held before: the history
// drops its oldest events past MaxFactEvents, so a count would not do.
func stampActor(ctx context.Context, fn func(*memory.Document) error) func(*memory.Document) error {
	a := memory.ActorFrom(ctx)
	if a == "" {
		return fn
	}
	return func(d *memory.Document) error {
		var last memory.FactEvent
		had := len(d.FactEvents) > 0
		if had {
			last = d.FactEvents[len(d.FactEvents)-1]
		}
		if err := fn(d); err != nil {
			return err
		}
		from := 0
		if had {
			// The events fn added follow the old last event; if fn
			// rewrote the history so that it is gone, nothing is stamped.
			from = len(d.FactEvents)
			for i := len(d.FactEvents) - 1; i >= 0; i-- {
				if sameEvent(d.FactEvents[i], last) {
					from = i + 1
					break
				}
			}
		}
		for i := from; i < len(d.FactEvents); i++ {
			if d.FactEvents[i].Actor == "" {
				d.FactEvents[i].Actor = a
			}
		}
		return nil
	}
}

// sameEvent reports whether a and b are one event by what no later change
// rewrites: a forget removes the forgotten text from the earlier events
// of a fact (their content and any quoted reason).
func sameEvent(a, b memory.FactEvent) bool {
	return a.FactID == b.FactID && a.Event == b.Event && a.At.Equal(b.At) && a.Source == b.Source &&
		a.Actor == b.Actor && a.Into == b.Into
}
