package memory

import (
	"context"
	"encoding/json"
	"sort"
	"strings"
	"time"

	"github.com/mnemo-mcp/mnemo/memory/lexical"
)

// RetrieveRequest is one retrieve_memory call.
type RetrieveRequest struct {
	UserID    string
	AgentName string
	ThreadID  string
	Query     string
	// MaxResults is how many pages to return; 0 means the configured
	// retrieval_queue_capacity.
	MaxResults int
	// MaxTokens is the injection budget; 0 means max_injection_tokens.
	MaxTokens int
	// RelationshipWithUser and StyleHint (MemoryOS) are echoed in the
	// injection header so the host's model can adjust its tone.
	RelationshipWithUser string
	StyleHint            string
	// Peek looks without touching: no visit to a topic session is
	// counted, so no heat changes and no analysis starts (the memory
	// viewer's preview and search).
	Peek bool
}

// PageHit is a past exchange that matches the query.
type PageHit struct {
	ID       string          `json:"id"`
	ThreadID string          `json:"thread_id"`
	Time     time.Time       `json:"timestamp"`
	User     string          `json:"user_input,omitempty"`
	Reply    string          `json:"agent_response,omitempty"`
	Score    float64         `json:"score"`
	MetaData json.RawMessage `json:"meta_data,omitempty"`
	// PrevID and NextID are the ids of the exchanges before and after
	// this one in its thread (page continuity).
	PrevID string `json:"prev_id,omitempty"`
	NextID string `json:"next_id,omitempty"`
}

// FactHit is a remembered fact with its retrieval score.
type FactHit struct {
	Fact
	Score float64 `json:"score"`
}

// RecentTurn is one of the thread's latest turns (short-term memory).
type RecentTurn struct {
	ID    string    `json:"id"`
	Time  time.Time `json:"timestamp"`
	User  string    `json:"user_input,omitempty"`
	Reply string    `json:"agent_response,omitempty"`
}

// ProfileSection is one non-empty profile or history summary.
type ProfileSection struct {
	Name      string    `json:"name"`
	Summary   string    `json:"summary"`
	UpdatedAt time.Time `json:"updated_at,omitzero"`
}

// RetrieveResult is what retrieve_memory returns. Pages come first: they
// are the ranked answer.
type RetrieveResult struct {
	Pages []PageHit `json:"pages"`
	Facts []FactHit `json:"facts,omitempty"`
	// PastFacts are replaced facts that match a query about the past
	// ("before", "used to", …), with their validity interval.
	PastFacts       []FactHit        `json:"past_facts,omitempty"`
	Profile         []ProfileSection `json:"profile,omitempty"`
	Recent          []RecentTurn     `json:"recent,omitempty"`
	Injection       string           `json:"injection"`
	InjectionTokens int              `json:"injection_tokens"`
	Scope           Scope            `json:"scope"`
	ThreadID        string           `json:"thread_id"`
	StoredTurns     int              `json:"stored_turns"`
	Pending         PendingInfo      `json:"pending"`
	// Sessions are the mid-term topic sessions of the pages returned,
	// with their summaries; returning a page counts as a visit.
	Sessions []SessionHit `json:"sessions,omitempty"`
	// UserKnowledge and AssistantKnowledge are the long-term knowledge
	// entries that share terms with the query.
	UserKnowledge      []FactHit `json:"user_knowledge,omitempty"`
	AssistantKnowledge []FactHit `json:"assistant_knowledge,omitempty"`
}

// maxFactHits bounds the facts listed in a retrieval result.
const maxFactHits = 20

// Retrieve finds the pages and facts relevant to the query and builds the
// token-budgeted injection text. Errors wrapping ErrInvalidInput say what
// to fix.
func (s *Service) Retrieve(ctx context.Context, req RetrieveRequest) (*RetrieveResult, error) {
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
	qv := s.queryVector(ctx, scope, req.Query)
	st, err := s.loadedState(ctx, scope)
	if err != nil {
		return nil, err
	}
	defer st.mu.Unlock()

	res := &RetrieveResult{Pages: []PageHit{}, Scope: scope, ThreadID: thread, StoredTurns: len(st.turns)}
	hits, ranked := s.rankWithSessions(ctx, st, req.Query, qv, maxResults)
	for _, h := range hits {
		t := st.turns[h.ID]
		prev, next := pageNeighbours(st, h.ID)
		res.Pages = append(res.Pages, PageHit{ID: t.ID, ThreadID: t.ThreadID, Time: t.Time, User: t.User, Reply: t.Reply, Score: round4(h.Score), MetaData: t.MetaData, PrevID: prev, NextID: next})
	}
	res.Sessions, res.UserKnowledge, res.AssistantKnowledge = s.tierRetrieval(ctx, st, req.Query, res.Pages, ranked, req.Peek)
	conv := s.conversation(st, thread, req.ThreadID != "")
	recentPos := s.recent(conv)
	res.Recent = make([]RecentTurn, 0, len(recentPos))
	for _, p := range recentPos {
		t := st.turns[p]
		res.Recent = append(res.Recent, RecentTurn{ID: t.ID, Time: t.Time, User: t.User, Reply: t.Reply})
	}
	res.Facts = s.rankFacts(st, req.Query, conv)
	res.PastFacts = pastFacts(st.doc, req.Query)
	qterms := queryTerms(req.Query)
	if len(qterms) > maxTopicTerms {
		qterms = qterms[:maxTopicTerms]
	}
	floor := relevant(st, qterms, hits)
	pageNotes := make([]itemNote, len(hits))
	for i, h := range hits {
		pageNotes[i] = turnNote(st, h.ID, qterms)
		pageNotes[i].hidden = !floor[i]
	}
	// A correction about what a shown page speaks of is shown too, even
	// below the floor: it says which of the two holds.
	var shownTopics uint64
	for _, n := range pageNotes {
		if !n.hidden {
			shownTopics |= n.topics
		}
	}
	for i := range pageNotes {
		if n := &pageNotes[i]; n.hidden && n.correction && n.topics&shownTopics != 0 {
			n.hidden = false
		}
	}
	recentNotes := make([]itemNote, len(recentPos))
	for i, p := range recentPos {
		recentNotes[i] = turnNote(st, p, qterms)
	}
	factNotes := make([]itemNote, len(res.Facts))
	for i, f := range res.Facts {
		factNotes[i].topics = textTopics(f.Content, qterms)
	}
	res.Profile = profileSections(st.doc)
	res.Pending = s.pendingInfo(st, thread)
	res.Injection, res.InjectionTokens = s.buildInjection(st, injectionInput{
		Relationship:       req.RelationshipWithUser,
		StyleHint:          req.StyleHint,
		Profile:            res.Profile,
		Facts:              res.Facts,
		PastFacts:          res.PastFacts,
		Pages:              res.Pages,
		Sessions:           res.Sessions,
		UserKnowledge:      res.UserKnowledge,
		AssistantKnowledge: res.AssistantKnowledge,
		Recent:             res.Recent,
		Budget:             maxTokens,
		PageNotes:          pageNotes,
		RecentNotes:        recentNotes,
		FactNotes:          factNotes,
	})
	return res, nil
}

// conversation returns the positions of the turns that make up the
// current conversation, oldest first: the thread's turns when the caller
// named it (named), else only the latest turns of the default thread that
// follow one another, and the last of them precedes now, by at most
// conversation_idle_gap. Turns from an earlier sitting are never the
// current conversation. The caller holds st.mu.
func (s *Service) conversation(st *scopeState, thread string, named bool) []int {
	positions := st.threads[thread]
	if named || len(positions) == 0 {
		return positions
	}
	gap := s.cfg.ConversationIdleGap
	last := st.turns[positions[len(positions)-1]].Time
	if s.now().Sub(last) > gap {
		return nil
	}
	i := len(positions) - 1
	for i > 0 && st.turns[positions[i]].Time.Sub(st.turns[positions[i-1]].Time).Abs() <= gap {
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

// maxTopicTerms bounds the query terms an itemNote's topics record.
const maxTopicTerms = 64

// turnNote is what the injection needs to know of the turn at position p:
// the query terms (qterms, at most maxTopicTerms) it holds and its
// correction signal. The caller holds st.mu.
func turnNote(st *scopeState, p int, qterms []lexical.Term) itemNote {
	n := itemNote{correction: st.turns[p].Signals.Correction}
	for j, m := range termMatch(st, p, qterms, 1) {
		if m > 0 {
			n.topics |= 1 << j
		}
	}
	return n
}

// textTopics returns the bits of the query terms (qterms, at most
// maxTopicTerms) that text holds, or a word of the same prefix.
func textTopics(text string, qterms []lexical.Term) uint64 {
	var topics uint64
	for _, t := range lexical.Tokenize(text) {
		for j, q := range qterms {
			if t == q.Text || samePrefix(t, q.Text) {
				topics |= 1 << j
			}
		}
	}
	return topics
}

// rankFacts scores every fact by similarity to the query plus the last
// max_context_turns turns of the current conversation (positions, oldest
// first; weight similarity_weight) and by confidence (weight
// confidence_weight), best first. Similarity is normalised to [0, 1] by
// the best match. The caller holds st.mu.
func (s *Service) rankFacts(st *scopeState, query string, positions []int) []FactHit {
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
			b.WriteString(st.turns[p].User)
		}
		ctxText = b.String()
	}
	sims := make([]float64, len(facts))
	best := 0.0
	for _, h := range st.factIdx.Search(ctxText, len(facts), nil) {
		sims[h.ID] = h.Score
		best = max(best, h.Score)
	}
	hits := make([]FactHit, len(facts))
	for i, f := range facts {
		sim := 0.0
		if best > 0 {
			sim = sims[i] / best
		}
		hits[i] = FactHit{Fact: f, Score: round4(s.cfg.SimilarityWeight*sim + s.cfg.ConfidenceWeight*f.Confidence)}
		if f.Category == CategoryCorrection && sims[i] > 0 {
			// A correction that matches what is asked is still relevant:
			// it does not decay (maintain.go).
			s.relevant.note(st.scope, f.ID, s.now().UTC())
		}
	}
	sort.SliceStable(hits, func(i, j int) bool { return hits[i].Score > hits[j].Score })
	if len(hits) > maxFactHits {
		// Corrections stay listed even when they rank low: they say what to avoid.
		top := hits[:maxFactHits:maxFactHits]
		for _, h := range hits[maxFactHits:] {
			if h.Category == CategoryCorrection {
				top = append(top, h)
			}
		}
		hits = top
	}
	return hits
}

// profileSections lists the document's non-empty sections in reading order.
func profileSections(d *Document) []ProfileSection {
	var out []ProfileSection
	for _, ns := range d.Sections() {
		if strings.TrimSpace(ns.Section.Summary) != "" {
			out = append(out, ProfileSection{Name: ns.Name, Summary: ns.Section.Summary, UpdatedAt: ns.Section.UpdatedAt})
		}
	}
	return out
}

func round4(x float64) float64 {
	return float64(int64(x*10000+0.5)) / 10000
}
