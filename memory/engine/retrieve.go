package engine

import (
	"context"
	"sort"
	"strings"
	"time"

	"github.com/mnemo-mcp/mnemo/memory"
	"github.com/mnemo-mcp/mnemo/memory/lexical"
	"github.com/mnemo-mcp/mnemo/memory/recall"
	"github.com/mnemo-mcp/mnemo/memory/update"
)

// Retrieve finds the pages and facts relevant to the query and builds the
// token-budgeted injection text. Errors wrapping ErrInvalidInput say what
// to fix.
func (s *Service) Retrieve(ctx context.Context, req memory.RetrieveRequest) (*memory.RetrieveResult, error) {
	scope, err := s.resolveScope(req.UserID, req.AgentName)
	if err != nil {
		return nil, err
	}
	thread, err := resolveThread(req.ThreadID)
	if err != nil {
		return nil, err
	}
	maxResults, maxTokens, err := s.checkRetrieve(&req)
	if err != nil {
		return nil, err
	}

	// Embedding the query is a network call: made before the scope is
	// locked.
	qv, fallback := s.queryVector(ctx, scope, req.Query)
	st, err := s.readState(ctx, scope)
	if err != nil {
		return nil, err
	}
	defer st.mu.RUnlock()

	res := &memory.RetrieveResult{Pages: []memory.PageHit{}, Scope: scope, ThreadID: thread, StoredTurns: len(st.Turns)}
	now := s.now()
	if !req.Now.IsZero() {
		now = req.Now
	}
	res.Ranking = rankingInfo(qv, fallback, st.Vec.Count)
	hits, ranked := s.rankWithSessions(st, req.Query, req.Keywords, now, qv, maxResults)
	kws := recall.NewKeywords(req.Keywords)
	for _, h := range hits {
		t := st.Turns[h.ID]
		prev, next := pageNeighbours(st, h.ID)
		res.Pages = append(res.Pages, memory.PageHit{ID: t.ID, ThreadID: t.ThreadID, Time: t.Time, User: t.User, Reply: t.Reply, Score: update.Round4(h.Score), MetaData: t.MetaData, PrevID: prev, NextID: next,
			MatchedKeywords: kws.InPage(&st.Pages, h.ID)})
	}
	kterms := recall.KeywordTerms(req.Keywords)
	kweights := recall.TermWeights(&st.Pages, kterms)
	res.Sessions, res.UserKnowledge, res.AssistantKnowledge = s.tierRetrieval(st, req.Query, req.Keywords, res.Pages, ranked, req.Peek)
	conv := s.conversation(st, thread, req.ThreadID != "", now)
	recentPos := s.recent(conv)
	res.Recent = make([]memory.RecentTurn, 0, len(recentPos))
	for _, p := range recentPos {
		t := st.Turns[p]
		res.Recent = append(res.Recent, memory.RecentTurn{ID: t.ID, Time: t.Time, User: t.User, Reply: t.Reply})
	}
	qterms := recall.QueryTerms(req.Query)
	if len(qterms) > recall.MaxTopicTerms {
		qterms = qterms[:recall.MaxTopicTerms]
	}
	weights := recall.TermWeights(&st.Pages, qterms)
	res.Facts = s.rankFacts(st, strings.Join(append([]string{req.Query}, req.Keywords...), " "), qterms, weights, kterms, kweights, conv)
	for i := range res.Facts {
		res.Facts[i].MatchedKeywords = kws.InText(res.Facts[i].Content)
	}
	res.PastFacts = recall.PastFacts(st.doc, req.Query)
	// The floor weighs the query without its dates: the time window
	// already ranked the pages of the day it names (recall.FloorTerms).
	fterms := recall.FloorTerms(req.Query)
	if len(fterms) > recall.MaxTopicTerms {
		fterms = fterms[:recall.MaxTopicTerms]
	}
	floor := recall.Relevant(&st.Pages, fterms, hits, recall.AsksForList(req.Query))
	if len(req.Keywords) > 0 {
		// A page found by the keywords clears the floor on their terms
		// as well as on the query's.
		kfloor := recall.RelevantByKeywords(&st.Pages, kterms, hits)
		for i := range floor {
			floor[i] = floor[i] || kfloor[i]
		}
	}
	// The text draws on the pages a default retrieval lists
	// (retrieval_queue_capacity): a host asking for more pages lengthens
	// its list, not the text. LongMemEval's harness asks for 50; on its
	// development half the text drew on up to 50 pages, filling the
	// budget (docs/tools.md, the <memory> text).
	textPages := s.cfg.RetrievalQueueCapacity
	pageNotes := make([]recall.ItemNote, len(hits))
	for i, h := range hits {
		pageNotes[i] = recall.TurnNote(&st.Pages, h.ID, qterms)
		pageNotes[i].Hidden = !floor[i] || i >= textPages
		pageNotes[i].Seq = h.ID
	}
	// A correction about what a shown page speaks of is shown too, even
	// below the floor: it says which of the two holds.
	var shownTopics uint64
	for _, n := range pageNotes {
		if !n.Hidden {
			shownTopics |= n.Topics
		}
	}
	for i := range pageNotes {
		if n := &pageNotes[i]; n.Hidden && n.Correction && n.Topics&shownTopics != 0 {
			n.Hidden = false
		}
	}
	recentNotes := make([]recall.ItemNote, len(recentPos))
	for i, p := range recentPos {
		recentNotes[i] = recall.TurnNote(&st.Pages, p, qterms)
	}
	res.Facts = markSuperseded(st.doc, res.Facts, res.Pages, pageNotes, res.Recent, recentNotes)
	factNotes := make([]recall.ItemNote, len(res.Facts))
	for i, f := range res.Facts {
		factNotes[i].Topics = recall.TextTopics(f.Content, qterms)
	}
	res.Profile = profileSections(st.doc)
	res.Pending = s.pendingInfo(st, thread)
	res.Injection, res.InjectionTokens = recall.BuildInjection(s.tokenCounter(st), recall.InjectionInput{
		Relationship:       req.RelationshipWithUser,
		StyleHint:          req.StyleHint,
		Profile:            relevantProfile(res.Profile, qterms, weights, kterms, kweights),
		Facts:              res.Facts,
		PastFacts:          res.PastFacts,
		Pages:              res.Pages,
		Sessions:           res.Sessions,
		UserKnowledge:      res.UserKnowledge,
		AssistantKnowledge: res.AssistantKnowledge,
		Recent:             res.Recent,
		Budget:             maxTokens,
		Query:              qterms,
		Match:              recall.MatchTerms(&st.Pages, qterms),
		Keywords:           recall.MatchTerms(&st.Pages, kterms),
		AsksUser:           recall.AsksUser(req.Query),
		Now:                now,
		PageNotes:          pageNotes,
		RecentNotes:        recentNotes,
		FactNotes:          factNotes,
	})
	return res, nil
}

// conversation returns the positions of the turns that make up the
// current conversation, oldest first: the thread's turns when the caller
// named it (named), else only the latest turns of the default thread that
// follow one another, and the last of them precedes now (the query's
// reference time), by at most conversation_idle_gap. Turns from an
// earlier sitting are never the current conversation.
func (s *Service) conversation(st *scopeState, thread string, named bool, now time.Time) []int {
	positions := st.Threads[thread]
	if named || len(positions) == 0 {
		return positions
	}
	gap := s.cfg.ConversationIdleGap
	last := st.Turns[positions[len(positions)-1]].Time
	if now.Sub(last) > gap {
		return nil
	}
	i := len(positions) - 1
	for i > 0 && st.Turns[positions[i]].Time.Sub(st.Turns[positions[i-1]].Time).Abs() <= gap {
		i--
	}
	return positions[i:]
}

// recent returns the positions of the last short_term_capacity exchanges
// of the current conversation (positions, oldest first), oldest first.
func (s *Service) recent(positions []int) []int {
	if n := s.cfg.ShortTermCapacity; len(positions) > n {
		positions = positions[len(positions)-n:]
	}
	return positions
}

// Facts enter a retrieval by relevance to the query or to the host's
// keywords, never by confidence alone: a fact must hold
// recall.MinTextCoverage of the query's weight or of the keywords'. The
// standing facts enter whatever the query (recall.Standing: pinned,
// corrections, behaviour rules, diet, allergy, health and accessibility
// constraints), at most recall.MaxStandingFacts of them: pinned first,
// then the newest. Identity and everything else the user told about
// themselves (home, work, family, tastes) are found by the query like any
// fact: an always-on identity line would cost tokens on every turn and
// was not needed by any question measured.
const maxFactHits = 10

// rankFacts returns the facts relevant to the query (at most maxFactHits,
// best first) and then the standing ones (at most recall.MaxStandingFacts). A fact is
// relevant when it holds recall.MinTextCoverage of the query's weight
// (qterms, weights) or of the keywords' (kterms, kweights); relevant facts
// are ordered by similarity to the query (with the keywords' words)
// plus the last max_context_turns turns of the current conversation
// (positions, oldest first; weight similarity_weight) and by confidence
// (weight confidence_weight).
func (s *Service) rankFacts(st *scopeState, query string, qterms []lexical.Term, weights []float64, kterms []lexical.Term, kweights []float64, positions []int) []memory.FactHit {
	facts := st.doc.Facts
	if len(facts) == 0 {
		return nil
	}
	ctxText := query
	if s.cfg.MaxContextTurns > 0 && len(positions) > 0 {
		if len(positions) > s.cfg.MaxContextTurns {
			positions = positions[len(positions)-s.cfg.MaxContextTurns:]
		}
		var b strings.Builder
		b.WriteString(query)
		for _, p := range positions {
			b.WriteString("\n")
			b.WriteString(st.Turns[p].User)
		}
		ctxText = b.String()
	}
	sims := make([]float64, len(facts))
	best := 0.0
	for _, h := range st.factIdx.Search(ctxText, len(facts), nil) {
		sims[h.ID] = h.Score
		best = max(best, h.Score)
	}
	var hits, core []memory.FactHit
	for i, f := range facts {
		sim := 0.0
		if best > 0 {
			sim = sims[i] / best
		}
		h := memory.FactHit{Fact: f, Score: update.Round4(s.cfg.SimilarityWeight*sim + s.cfg.ConfidenceWeight*f.Confidence), Standing: recall.Standing(f)}
		switch {
		case recall.TextCoverage(f.Content, qterms, weights) >= recall.MinTextCoverage,
			len(kterms) > 0 && recall.TextCoverage(f.Content, kterms, kweights) >= recall.MinTextCoverage,
			correctedByQuery(f, qterms, weights):
			hits = append(hits, h)
			if f.Category == memory.CategoryCorrection {
				// A correction that matches what is asked is still
				// relevant: it does not decay (maintain.go).
				s.relevant.note(st.scope, f.ID, s.now().UTC())
			}
		case h.Standing:
			core = append(core, h)
		}
	}
	sort.SliceStable(hits, func(i, j int) bool { return hits[i].Score > hits[j].Score })
	hits = hits[:min(len(hits), maxFactHits)]
	sort.SliceStable(core, func(i, j int) bool {
		if core[i].Pinned != core[j].Pinned {
			return core[i].Pinned
		}
		return core[i].Since().After(core[j].Since())
	})
	return append(hits, core[:min(len(core), recall.MaxStandingFacts)]...)
}

// relevantProfile keeps, of each profile section, the sentences that
// hold recall.MinTextCoverage of the query's weight or of the keywords'
// (kterms, kweights), and those that state a standing constraint
// (recall.StandingText: a diet, an allergy); a section with none is left
// out of the injection text.
func relevantProfile(sections []memory.ProfileSection, qterms []lexical.Term, weights []float64, kterms []lexical.Term, kweights []float64) []memory.ProfileSection {
	var out []memory.ProfileSection
	for _, p := range sections {
		if text := recall.RelevantSentences(p.Summary, qterms, weights, kterms, kweights); text != "" {
			p.Summary = text
			out = append(out, p)
		}
	}
	return out
}

// profileSections lists the document's non-empty sections in reading order.
func profileSections(d *memory.Document) []memory.ProfileSection {
	var out []memory.ProfileSection
	for _, ns := range d.Sections() {
		if strings.TrimSpace(ns.Section.Summary) != "" {
			out = append(out, memory.ProfileSection{Name: ns.Name, Summary: ns.Section.Summary, UpdatedAt: ns.Section.UpdatedAt})
		}
	}
	return out
}
