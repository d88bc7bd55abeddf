package engine

import (
	"cmp"
	"slices"

	"github.com/mnemo-mcp/mnemo/memory"
	"github.com/mnemo-mcp/mnemo/memory/recall"
	"github.com/mnemo-mcp/mnemo/memory/update"
)

// tierRetrieval is what the mid-term and long-term tiers add to a retrieval:
// the sessions of the pages found, in rank order (ranked by rankWithSessions),
// each visit counted, and the knowledge entries that share terms with the
// query. When a visit makes a session hot and a model is configured, its
// analysis (runTiers) starts in the background right away; a peek counts no
// visit. The caller holds st.mu for reading, over a state ready to rank
// (prepareToRank).
func (s *Service) tierRetrieval(st *scopeState, query string, keywords []string, pages []memory.PageHit, ranked []rankedSession, peek bool) (sessions []memory.SessionHit, user, assistant []memory.FactHit) {
	ids := make([]string, len(pages))
	for i, p := range pages {
		ids[i] = p.ID
	}
	due := false
	if peek {
		sessions = s.peekPages(st, ids)
	} else {
		sessions, due = s.visitPages(st, ids)
	}
	// Sessions are listed in their rank order, each with its score.
	order := make(map[string]int, len(ranked))
	for i, r := range ranked {
		order[r.ses.ID] = i
		for j := range sessions {
			if sessions[j].ID == r.ses.ID {
				sessions[j].Score = update.Round4(r.score)
			}
		}
	}
	slices.SortStableFunc(sessions, func(a, b memory.SessionHit) int { return cmp.Compare(order[a.ID], order[b.ID]) })
	if s.llm != nil && due {
		s.queue.tiers(st.scope)
	}
	return sessions, recall.RelevantKnowledge(&st.Pages, query, keywords, st.doc.Knowledge), recall.RelevantKnowledge(&st.Pages, query, keywords, st.doc.AssistantKnowledge)
}
