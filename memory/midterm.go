package memory

import (
	"context"
	"math"
	"slices"
	"strconv"
	"time"

	"github.com/mnemo-mcp/mnemo/memory/lexical"
)

// MidTermState is the persisted form of a scope's mid-term memory.
type MidTermState struct {
	// Version is the format version, midTermVersion.
	Version int `json:"version"`
	// Moved maps a thread to the highest turn Seq that has left its
	// short-term window (placed in a session, or evicted since).
	Moved map[string]int64 `json:"moved"`
	// NextID numbers the next session.
	NextID   int               `json:"nextId"`
	Sessions []*MidTermSession `json:"sessions"`
}

const midTermVersion = 1

// MidTermSession is a mid-term topic session: pages that left the
// short-term window, grouped by topic (MemoryOS).
type MidTermSession struct {
	ID       string   `json:"id"`
	Summary  string   `json:"summary"`
	Keywords []string `json:"keywords"`
	// LLMSummary says Summary and Keywords came from the language model;
	// otherwise they are extractive and are refreshed as pages join.
	LLMSummary bool          `json:"llmSummary,omitempty"`
	Pages      []MidTermPage `json:"pages"`
	// Visits is N_visit: retrieval hits since the last analysis.
	Visits int `json:"visits"`
	// Interactions is L_interaction: pages joined since the last analysis.
	Interactions int       `json:"interactions"`
	LastVisit    time.Time `json:"lastVisit"`
	Created      time.Time `json:"created"`
	// Uses counts visits and joins over the session's life and is never
	// reset; the least used session is evicted first (LFU).
	Uses int `json:"uses"`

	// SummarizedPages is how many pages the session had when the
	// language model last summarised it.
	SummarizedPages int `json:"summarizedPages,omitempty"`

	num      int            // id in the session index
	terms    map[string]int // token counts over the pages
	termsSq  float64        // sum of the squared counts, for the cosine
	kwToks   []string       // Keywords as index terms, for the Jaccard index
	centroid []float32      // sum of the pages' unit vectors, when embedded
	// centroidOK says centroid reflects the vectors known for the pages.
	centroidOK bool
	// due says a retrieval found the session at or over the heat
	// threshold: it is analysed even if its heat has decayed a little by
	// the time the analysis runs.
	due     bool
	dirtyKW int // pages joined since keywords were refreshed
}

// addTerm adds n occurrences of term to the session's terms.
func (m *MidTermSession) addTerm(term string, n int) {
	c := m.terms[term]
	m.terms[term] = c + n
	m.termsSq += float64((c+n)*(c+n) - c*c)
}

// setKeywords sets the keywords and their index terms.
func (m *MidTermSession) setKeywords(kw []string) {
	m.Keywords = kw
	m.kwToks = m.kwToks[:0]
	for _, k := range kw {
		for _, t := range lexical.Tokenize(k) {
			if !slices.Contains(m.kwToks, t) {
				m.kwToks = append(m.kwToks, t)
			}
		}
	}
}

// MidTermPage is one page (turn) of a session.
type MidTermPage struct {
	TurnID   string `json:"turnId"`
	Analyzed bool   `json:"analyzed,omitempty"`

	pos int // position of the turn in the scope's turns
}

// HeatWeights are the coefficients of a session's heat.
type HeatWeights struct {
	Alpha, Beta, Gamma float64
	Tau                time.Duration
}

// Heat is α·visits + β·interactions + γ·exp(−Δt/τ), Δt being the time
// since the session's last visit (MemoryOS H_segment).
func (m *MidTermSession) Heat(now time.Time, w HeatWeights) float64 {
	dt := now.Sub(m.LastVisit)
	if dt < 0 {
		dt = 0
	}
	recency := 1.0
	if w.Tau > 0 {
		recency = math.Exp(-dt.Seconds() / w.Tau.Seconds())
	}
	return w.Alpha*float64(m.Visits) + w.Beta*float64(m.Interactions) + w.Gamma*recency
}

// midTerm is a scope's mid-term memory in process; the scope's mu guards
// it.
type midTerm struct {
	sessions map[int]*MidTermSession // by num
	byPage   map[string]int          // turn id → session num
	moved    map[string]int64
	nextID   int
	idx      *lexical.Index // over session keywords and summary, by num
	dirty    bool
	saved    time.Time // wall time of the last save
	// saving says a background save of this state is running.
	saving bool
	// caughtUp says every thread of the scope has been checked once;
	// after that only the threads with new turns are.
	caughtUp bool
}

func newMidTerm() *midTerm {
	return &midTerm{
		sessions: make(map[int]*MidTermSession),
		byPage:   make(map[string]int),
		moved:    make(map[string]int64),
		idx:      lexical.New(lexical.Options{}),
	}
}

// heatWeights returns the configured heat coefficients.
func (s *Service) heatWeights() HeatWeights {
	return HeatWeights{s.cfg.MidTermHeatAlpha, s.cfg.MidTermHeatBeta, s.cfg.MidTermHeatGamma, s.cfg.MidTermHeatTau}
}

// addSession registers ses under a new number.
func (m *midTerm) addSession(ses *MidTermSession) {
	m.nextID++
	ses.num = m.nextID
	if ses.ID == "" {
		ses.ID = "session_" + strconv.Itoa(ses.num)
	}
	m.sessions[ses.num] = ses
	for _, p := range ses.Pages {
		m.byPage[p.TurnID] = ses.num
	}
	m.reindex(ses)
}

// reindex refreshes the session's entry in the session index.
func (m *midTerm) reindex(ses *MidTermSession) {
	m.idx.Remove(ses.num)
	m.idx.Add(ses.num, sessionText(ses))
}

func sessionText(ses *MidTermSession) string {
	b := []byte(ses.Summary)
	for _, k := range ses.Keywords {
		b = append(b, ' ')
		b = append(b, k...)
	}
	return string(b)
}

// evict drops the least frequently used sessions while there are more
// than capacity: fewest Uses first, then the longest unvisited, then the
// oldest. Their pages leave the mid-term index; the turn log keeps them.
// It returns the ids of the sessions dropped.
func (m *midTerm) evict(capacity int) []string {
	if len(m.sessions) <= capacity {
		return nil
	}
	var dropped []string
	if len(m.sessions) == capacity+1 {
		// The usual case, one session over: one pass finds it.
		var victim *MidTermSession
		for _, ses := range m.sessions {
			if victim == nil || lfuOrder(ses, victim) < 0 {
				victim = ses
			}
		}
		m.drop(victim)
		m.dirty = true
		return append(dropped, victim.ID)
	}
	all := make([]*MidTermSession, 0, len(m.sessions))
	for _, ses := range m.sessions {
		all = append(all, ses)
	}
	slices.SortFunc(all, lfuOrder)
	for _, ses := range all[:len(all)-capacity] {
		m.drop(ses)
		dropped = append(dropped, ses.ID)
	}
	m.dirty = true
	return dropped
}

// lfuOrder orders sessions for eviction, the first to go first.
func lfuOrder(a, b *MidTermSession) int {
	switch {
	case a.Uses != b.Uses:
		return a.Uses - b.Uses
	case !a.LastVisit.Equal(b.LastVisit):
		return a.LastVisit.Compare(b.LastVisit)
	}
	return a.num - b.num
}

func (m *midTerm) drop(ses *MidTermSession) {
	for _, p := range ses.Pages {
		if m.byPage[p.TurnID] == ses.num {
			delete(m.byPage, p.TurnID)
		}
	}
	m.idx.Remove(ses.num)
	delete(m.sessions, ses.num)
}

// visit counts a retrieval hit on the session of each page (once per
// session per call) and returns the sessions hit, in page order.
func (m *midTerm) visit(turnIDs []string, now time.Time) []*MidTermSession {
	var hit []*MidTermSession
	for _, id := range turnIDs {
		num, ok := m.byPage[id]
		if !ok {
			continue
		}
		ses := m.sessions[num]
		if slices.Contains(hit, ses) {
			continue
		}
		ses.Visits++
		ses.Uses++
		ses.LastVisit = now
		hit = append(hit, ses)
	}
	if len(hit) > 0 {
		m.dirty = true
	}
	return hit
}

// hottest returns the session to analyse next among those with
// unanalysed pages: a due one first, then the highest heat; nil when no
// session has unanalysed pages.
func (m *midTerm) hottest(now time.Time, w HeatWeights) (*MidTermSession, float64) {
	var best *MidTermSession
	bestHeat := math.Inf(-1)
	for _, ses := range m.sessions {
		if !slices.ContainsFunc(ses.Pages, func(p MidTermPage) bool { return !p.Analyzed }) {
			continue
		}
		h := ses.Heat(now, w)
		switch {
		case best == nil, ses.due && !best.due:
		case best.due && !ses.due:
			continue
		case h < bestHeat, h == bestHeat && ses.num > best.num:
			continue
		}
		best, bestHeat = ses, h
	}
	return best, bestHeat
}

// state returns the persisted form, sessions in number order.
func (m *midTerm) state() *MidTermState {
	out := &MidTermState{Version: midTermVersion, Moved: make(map[string]int64, len(m.moved)), NextID: m.nextID}
	for k, v := range m.moved {
		out.Moved[k] = v
	}
	for _, ses := range m.sessions {
		c := *ses
		c.Keywords = slices.Clone(ses.Keywords)
		c.Pages = slices.Clone(ses.Pages)
		out.Sessions = append(out.Sessions, &c)
	}
	slices.SortFunc(out.Sessions, func(a, b *MidTermSession) int { return a.num - b.num })
	return out
}

// SessionHit is a mid-term session that matched a retrieval, with its
// heat after the visit.
type SessionHit struct {
	ID       string   `json:"id"`
	Summary  string   `json:"summary"`
	Keywords []string `json:"keywords,omitempty"`
	Heat     float64  `json:"heat"`
	// Score is the session's rank score for the query: its best page's
	// score relative to the best page of the retrieval (1 = holds it).
	Score float64 `json:"score"`
	// PageCount is how many pages the session holds in all.
	PageCount int `json:"page_count"`
	// PageIDs are the session's pages among the retrieved ones.
	PageIDs []string `json:"page_ids"`
}

// visitPages counts a retrieval hit on the sessions holding the given
// pages (turn ids) and returns those sessions, in the order of their
// first page, and whether the visit left one of them due for analysis
// (heat at or over mid_term_heat_threshold, unanalysed pages). The caller
// holds st.mu for writing.
func (s *Service) visitPages(ctx context.Context, st *scopeState, turnIDs []string) ([]SessionHit, bool) {
	s.ensureMidTerm(ctx, st)
	now := s.now()
	hits := st.midTerm.visit(turnIDs, now)
	out := make([]SessionHit, 0, len(hits))
	anyDue := false
	for _, ses := range hits {
		heat := ses.Heat(now, s.heatWeights())
		if heat >= s.cfg.MidTermHeatThreshold && slices.ContainsFunc(ses.Pages, func(p MidTermPage) bool { return !p.Analyzed }) {
			ses.due, anyDue = true, true
		}
		h := SessionHit{ID: ses.ID, Summary: ses.Summary, Keywords: slices.Clone(ses.Keywords), Heat: round4(heat), PageCount: len(ses.Pages)}
		for _, id := range turnIDs {
			if st.midTerm.byPage[id] == ses.num {
				h.PageIDs = append(h.PageIDs, id)
			}
		}
		out = append(out, h)
	}
	return out, anyDue
}

// MidTermView is a snapshot of a scope's mid-term sessions, with heat at
// the time of the call, hottest first.
type MidTermView struct {
	Sessions []MidTermSessionView `json:"sessions"`
}

// MidTermSessionView is one session in a MidTermView.
type MidTermSessionView struct {
	ID       string   `json:"id"`
	Summary  string   `json:"summary"`
	Keywords []string `json:"keywords"`
	// Pages are the session's exchanges in the order they joined, each
	// with its neighbours in its thread (page continuity).
	Pages        []PageLink `json:"pages"`
	Analyzed     int        `json:"analyzed"`
	Visits       int        `json:"visits"`
	Interactions int        `json:"interactions"`
	Uses         int        `json:"uses"`
	LastVisit    time.Time  `json:"last_visit"`
	Heat         float64    `json:"heat"`
}

// MidTerm returns the mid-term sessions of a scope.
func (s *Service) MidTerm(ctx context.Context, userID, agentName string) (*MidTermView, error) {
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
	view := &MidTermView{Sessions: []MidTermSessionView{}}
	for _, ses := range s.ensureMidTerm(ctx, st).sessions {
		v := MidTermSessionView{ID: ses.ID, Summary: ses.Summary, Keywords: slices.Clone(ses.Keywords), Visits: ses.Visits,
			Interactions: ses.Interactions, Uses: ses.Uses, LastVisit: ses.LastVisit, Heat: ses.Heat(now, s.heatWeights())}
		for _, p := range ses.Pages {
			prev, next := pageNeighbours(st, p.pos)
			v.Pages = append(v.Pages, PageLink{ID: p.TurnID, Prev: prev, Next: next})
			if p.Analyzed {
				v.Analyzed++
			}
		}
		view.Sessions = append(view.Sessions, v)
	}
	slices.SortFunc(view.Sessions, func(a, b MidTermSessionView) int {
		if a.Heat != b.Heat {
			if a.Heat > b.Heat {
				return -1
			}
			return 1
		}
		return compareSessionIDs(a.ID, b.ID)
	})
	return view, nil
}

// PageLink is a page (turn id) with the turns before and after it in its
// thread; "" where there is none.
type PageLink struct {
	ID   string `json:"id"`
	Prev string `json:"prev,omitempty"`
	Next string `json:"next,omitempty"`
}

func compareSessionIDs(a, b string) int {
	if len(a) != len(b) {
		return len(a) - len(b)
	}
	if a < b {
		return -1
	}
	if a > b {
		return 1
	}
	return 0
}
