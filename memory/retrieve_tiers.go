package memory

import (
	"cmp"
	"context"
	"slices"
)

// maxKnowledgeHits bounds the user and the assistant knowledge entries a
// retrieval returns.
const maxKnowledgeHits = 5

// tierRetrieval is what the mid-term and long-term tiers add to a
// retrieval: the sessions of the pages found, in rank order (ranked by
// rankWithSessions), each visit counted, and the
// knowledge entries that share terms with the query. When a visit makes a
// session hot and a model is configured, its analysis (runTiers) starts
// in the background right away; a peek counts no visit. The caller holds
// st.mu for writing.
func (s *Service) tierRetrieval(ctx context.Context, st *scopeState, query string, pages []PageHit, ranked []rankedSession, peek bool) (sessions []SessionHit, user, assistant []FactHit) {
	ids := make([]string, len(pages))
	for i, p := range pages {
		ids[i] = p.ID
	}
	due := false
	if peek {
		sessions = s.peekPages(ctx, st, ids)
	} else {
		sessions, due = s.visitPages(ctx, st, ids)
	}
	// Sessions are listed in their rank order, each with its score.
	order := make(map[string]int, len(ranked))
	for i, r := range ranked {
		order[r.ses.ID] = i
		for j := range sessions {
			if sessions[j].ID == r.ses.ID {
				sessions[j].Score = round4(r.score)
			}
		}
	}
	slices.SortStableFunc(sessions, func(a, b SessionHit) int { return cmp.Compare(order[a.ID], order[b.ID]) })
	if s.llm != nil && due {
		s.queue.tiers(st.scope)
	}
	return sessions, relevantKnowledge(st, query, st.doc.Knowledge), relevantKnowledge(st, query, st.doc.AssistantKnowledge)
}

// relevantKnowledge scores each entry against the query with the page
// index's BM25 statistics and returns the best that share a term with it.
func relevantKnowledge(st *scopeState, query string, list []Fact) []FactHit {
	var hits []FactHit
	for _, f := range list {
		if sc := st.pages.Similarity(query, f.Content); sc > 0 {
			hits = append(hits, FactHit{Fact: f, Score: round4(sc)})
		}
	}
	slices.SortStableFunc(hits, func(a, b FactHit) int { return cmp.Compare(b.Score, a.Score) })
	return hits[:min(len(hits), maxKnowledgeHits)]
}
