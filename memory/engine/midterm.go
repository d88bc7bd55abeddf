package engine

import (
	"context"
	"slices"

	"github.com/mnemo-mcp/mnemo/memory"
	"github.com/mnemo-mcp/mnemo/memory/tiers"
	"github.com/mnemo-mcp/mnemo/memory/update"
)

// heatWeights returns the configured heat coefficients.
func (s *Service) heatWeights() memory.HeatWeights {
	return memory.HeatWeights{Alpha: s.cfg.MidTermHeatAlpha, Beta: s.cfg.MidTermHeatBeta, Gamma: s.cfg.MidTermHeatGamma, Tau: s.cfg.MidTermHeatTau}
}

// visitPages counts a retrieval hit on the sessions holding the given pages
// (turn ids) and returns those sessions, in the order of their first page, and
// whether the visit left one of them due for analysis (heat at or over
// mid_term_heat_threshold, unanalysed pages). The caller holds st.mu for
// reading, over a state ready to rank (prepareToRank); the visit is
// counted under st.visitMu.
func (s *Service) visitPages(st *scopeState, turnIDs []string) ([]memory.SessionHit, bool) {
	now := s.now()
	st.visitMu.Lock()
	defer st.visitMu.Unlock()
	hits := st.midTerm.Visit(turnIDs, now)
	out := make([]memory.SessionHit, 0, len(hits))
	anyDue := false
	for _, ses := range hits {
		heat := ses.Heat(now, s.heatWeights())
		if heat >= s.cfg.MidTermHeatThreshold && slices.ContainsFunc(ses.Pages, func(p memory.MidTermPage) bool { return !p.Analyzed }) {
			ses.Due, anyDue = true, true
		}
		h := memory.SessionHit{ID: ses.ID, Summary: ses.Summary, Keywords: slices.Clone(ses.Keywords), Heat: update.Round4(heat), PageCount: len(ses.Pages), Summarized: ses.LLMSummary}
		for _, id := range turnIDs {
			if st.midTerm.ByPage[id] == ses.Num {
				h.PageIDs = append(h.PageIDs, id)
			}
		}
		out = append(out, h)
	}
	return out, anyDue
}

// MidTerm returns the mid-term sessions of a scope.
func (s *Service) MidTerm(ctx context.Context, userID, agentName string) (*memory.MidTermView, error) {
	scope, err := s.resolveScope(userID, agentName)
	if err != nil {
		return nil, err
	}
	st, err := s.loadedState(ctx, scope)
	if err != nil {
		return nil, err
	}
	defer st.mu.Unlock()
	now := s.now()
	view := &memory.MidTermView{Sessions: []memory.MidTermSessionView{}}
	for _, ses := range s.ensureMidTerm(ctx, st).Sessions {
		v := memory.MidTermSessionView{ID: ses.ID, Summary: ses.Summary, Keywords: slices.Clone(ses.Keywords), Visits: ses.Visits,
			Interactions: ses.Interactions, Uses: ses.Uses, LastVisit: ses.LastVisit, Heat: ses.Heat(now, s.heatWeights())}
		for _, p := range ses.Pages {
			prev, next := pageNeighbours(st, p.Pos)
			v.Pages = append(v.Pages, memory.PageLink{ID: p.TurnID, Prev: prev, Next: next})
			if p.Analyzed {
				v.Analyzed++
			}
		}
		view.Sessions = append(view.Sessions, v)
	}
	slices.SortFunc(view.Sessions, func(a, b memory.MidTermSessionView) int {
		if a.Heat != b.Heat {
			if a.Heat > b.Heat {
				return -1
			}
			return 1
		}
		return tiers.CompareSessionIDs(a.ID, b.ID)
	})
	return view, nil
}
