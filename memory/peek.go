package memory

import (
	"context"
	"slices"
)

// Looking without touching: a retrieval with RetrieveRequest.Peek (the
// memory viewer's preview and search) ranks as any other but counts no
// visit on a topic session, so it changes no heat and starts no analysis.

// sessionsOf returns the sessions that hold any of turnIDs, in the order
// of their first page among them, without counting a visit.
func (m *midTerm) sessionsOf(turnIDs []string) []*MidTermSession {
	var hit []*MidTermSession
	for _, id := range turnIDs {
		num, ok := m.byPage[id]
		if !ok {
			continue
		}
		if ses := m.sessions[num]; !slices.Contains(hit, ses) {
			hit = append(hit, ses)
		}
	}
	return hit
}

// peekPages is visitPages without the visit: the sessions of the pages,
// with their heat as it is. The caller holds st.mu for writing.
func (s *Service) peekPages(ctx context.Context, st *scopeState, turnIDs []string) []SessionHit {
	s.ensureMidTerm(ctx, st)
	now := s.now()
	hits := st.midTerm.sessionsOf(turnIDs)
	out := make([]SessionHit, 0, len(hits))
	for _, ses := range hits {
		h := SessionHit{ID: ses.ID, Summary: ses.Summary, Keywords: slices.Clone(ses.Keywords),
			Heat: round4(ses.Heat(now, s.heatWeights())), PageCount: len(ses.Pages)}
		for _, id := range turnIDs {
			if st.midTerm.byPage[id] == ses.num {
				h.PageIDs = append(h.PageIDs, id)
			}
		}
		out = append(out, h)
	}
	return out
}
