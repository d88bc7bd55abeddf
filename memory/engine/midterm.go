package engine

import (
	"context"
	"math"
	"slices"
	"strconv"
	"time"

	"github.com/mnemo-mcp/mnemo/memory"
	"github.com/mnemo-mcp/mnemo/memory/lexical"
	"github.com/mnemo-mcp/mnemo/memory/update"
)

// midTerm is a scope's mid-term memory in process; the scope's mu guards
// it.
type midTerm struct {
	sessions map[int]*memory.MidTermSession // by num
	byPage   map[string]int                 // turn id → session num
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
		sessions: make(map[int]*memory.MidTermSession),
		byPage:   make(map[string]int),
		moved:    make(map[string]int64),
		idx:      lexical.New(lexical.Options{}),
	}
}

// heatWeights returns the configured heat coefficients.
func (s *Service) heatWeights() memory.HeatWeights {
	return memory.HeatWeights{Alpha: s.cfg.MidTermHeatAlpha, Beta: s.cfg.MidTermHeatBeta, Gamma: s.cfg.MidTermHeatGamma, Tau: s.cfg.MidTermHeatTau}
}

// addSession registers ses under a new number.
func (m *midTerm) addSession(ses *memory.MidTermSession) {
	m.nextID++
	ses.Num = m.nextID
	if ses.ID == "" {
		ses.ID = "session_" + strconv.Itoa(ses.Num)
	}
	m.sessions[ses.Num] = ses
	for _, p := range ses.Pages {
		m.byPage[p.TurnID] = ses.Num
	}
	m.reindex(ses)
}

// reindex refreshes the session's entry in the session index.
func (m *midTerm) reindex(ses *memory.MidTermSession) {
	m.idx.Remove(ses.Num)
	m.idx.Add(ses.Num, sessionText(ses))
}

func sessionText(ses *memory.MidTermSession) string {
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
		var victim *memory.MidTermSession
		for _, ses := range m.sessions {
			if victim == nil || lfuOrder(ses, victim) < 0 {
				victim = ses
			}
		}
		m.drop(victim)
		m.dirty = true
		return append(dropped, victim.ID)
	}
	all := make([]*memory.MidTermSession, 0, len(m.sessions))
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
func lfuOrder(a, b *memory.MidTermSession) int {
	switch {
	case a.Uses != b.Uses:
		return a.Uses - b.Uses
	case !a.LastVisit.Equal(b.LastVisit):
		return a.LastVisit.Compare(b.LastVisit)
	}
	return a.Num - b.Num
}

func (m *midTerm) drop(ses *memory.MidTermSession) {
	for _, p := range ses.Pages {
		if m.byPage[p.TurnID] == ses.Num {
			delete(m.byPage, p.TurnID)
		}
	}
	m.idx.Remove(ses.Num)
	delete(m.sessions, ses.Num)
}

// visit counts a retrieval hit on the session of each page (once per
// session per call) and returns the sessions hit, in page order.
func (m *midTerm) visit(turnIDs []string, now time.Time) []*memory.MidTermSession {
	var hit []*memory.MidTermSession
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
func (m *midTerm) hottest(now time.Time, w memory.HeatWeights) (*memory.MidTermSession, float64) {
	var best *memory.MidTermSession
	bestHeat := math.Inf(-1)
	for _, ses := range m.sessions {
		if !slices.ContainsFunc(ses.Pages, func(p memory.MidTermPage) bool { return !p.Analyzed }) {
			continue
		}
		h := ses.Heat(now, w)
		switch {
		case best == nil, ses.Due && !best.Due:
		case best.Due && !ses.Due:
			continue
		case h < bestHeat, h == bestHeat && ses.Num > best.Num:
			continue
		}
		best, bestHeat = ses, h
	}
	return best, bestHeat
}

// state returns the persisted form, sessions in number order.
func (m *midTerm) state() *memory.MidTermState {
	out := &memory.MidTermState{Version: memory.MidTermVersion, Moved: make(map[string]int64, len(m.moved)), NextID: m.nextID}
	for k, v := range m.moved {
		out.Moved[k] = v
	}
	for _, ses := range m.sessions {
		c := *ses
		c.Keywords = slices.Clone(ses.Keywords)
		c.Pages = slices.Clone(ses.Pages)
		out.Sessions = append(out.Sessions, &c)
	}
	slices.SortFunc(out.Sessions, func(a, b *memory.MidTermSession) int { return a.Num - b.Num })
	return out
}

// visitPages counts a retrieval hit on the sessions holding the given
// pages (turn ids) and returns those sessions, in the order of their
// first page, and whether the visit left one of them due for analysis
// (heat at or over mid_term_heat_threshold, unanalysed pages). The caller
// holds st.mu for writing.
func (s *Service) visitPages(ctx context.Context, st *scopeState, turnIDs []string) ([]memory.SessionHit, bool) {
	s.ensureMidTerm(ctx, st)
	now := s.now()
	hits := st.midTerm.visit(turnIDs, now)
	out := make([]memory.SessionHit, 0, len(hits))
	anyDue := false
	for _, ses := range hits {
		heat := ses.Heat(now, s.heatWeights())
		if heat >= s.cfg.MidTermHeatThreshold && slices.ContainsFunc(ses.Pages, func(p memory.MidTermPage) bool { return !p.Analyzed }) {
			ses.Due, anyDue = true, true
		}
		h := memory.SessionHit{ID: ses.ID, Summary: ses.Summary, Keywords: slices.Clone(ses.Keywords), Heat: update.Round4(heat), PageCount: len(ses.Pages)}
		for _, id := range turnIDs {
			if st.midTerm.byPage[id] == ses.Num {
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
	for _, ses := range s.ensureMidTerm(ctx, st).sessions {
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
		return compareSessionIDs(a.ID, b.ID)
	})
	return view, nil
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
