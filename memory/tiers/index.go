package tiers

import (
	"math"
	"slices"
	"strconv"
	"time"

	"github.com/mnemo-mcp/mnemo/memory"
	"github.com/mnemo-mcp/mnemo/memory/lexical"
)

// MidTerm is a scope's mid-term memory in process; the scope's mu guards
// it.
type MidTerm struct {
	Sessions map[int]*memory.MidTermSession // by num
	ByPage   map[string]int                 // turn id → session num
	Moved    map[string]int64
	NextID   int
	Idx      *lexical.Index // over session keywords and summary, by num
	Dirty    bool
	Saved    time.Time // wall time of the last save
	// saving says a background save of this state is running.
	Saving bool
	// caughtUp says every thread of the scope has been checked once;
	// after that only the threads with new turns are.
	CaughtUp bool
}

func NewMidTerm() *MidTerm {
	return &MidTerm{
		Sessions: make(map[int]*memory.MidTermSession),
		ByPage:   make(map[string]int),
		Moved:    make(map[string]int64),
		Idx:      lexical.New(lexical.Options{}),
	}
}

// AddSession registers ses under a new number.
func (m *MidTerm) AddSession(ses *memory.MidTermSession) {
	m.NextID++
	ses.Num = m.NextID
	if ses.ID == "" {
		ses.ID = "session_" + strconv.Itoa(ses.Num)
	}
	m.Sessions[ses.Num] = ses
	for _, p := range ses.Pages {
		m.ByPage[p.TurnID] = ses.Num
	}
	m.Reindex(ses)
}

// Reindex refreshes the session's entry in the session index.
func (m *MidTerm) Reindex(ses *memory.MidTermSession) {
	m.Idx.Remove(ses.Num)
	m.Idx.Add(ses.Num, sessionText(ses))
}

func sessionText(ses *memory.MidTermSession) string {
	b := []byte(ses.Summary)
	for _, k := range ses.Keywords {
		b = append(b, ' ')
		b = append(b, k...)
	}
	return string(b)
}

// Evict drops the least frequently used sessions while there are more
// than capacity: fewest Uses first, then the longest unvisited, then the
// oldest. Their pages leave the mid-term index; the turn log keeps them.
// It returns the ids of the sessions dropped.
func (m *MidTerm) Evict(capacity int) []string {
	if len(m.Sessions) <= capacity {
		return nil
	}
	var dropped []string
	if len(m.Sessions) == capacity+1 {
		// The usual case, one session over: one pass finds it.
		var victim *memory.MidTermSession
		for _, ses := range m.Sessions {
			if victim == nil || lfuOrder(ses, victim) < 0 {
				victim = ses
			}
		}
		m.Drop(victim)
		m.Dirty = true
		return append(dropped, victim.ID)
	}
	all := make([]*memory.MidTermSession, 0, len(m.Sessions))
	for _, ses := range m.Sessions {
		all = append(all, ses)
	}
	slices.SortFunc(all, lfuOrder)
	for _, ses := range all[:len(all)-capacity] {
		m.Drop(ses)
		dropped = append(dropped, ses.ID)
	}
	m.Dirty = true
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

func (m *MidTerm) Drop(ses *memory.MidTermSession) {
	for _, p := range ses.Pages {
		if m.ByPage[p.TurnID] == ses.Num {
			delete(m.ByPage, p.TurnID)
		}
	}
	m.Idx.Remove(ses.Num)
	delete(m.Sessions, ses.Num)
}

// Visit counts a retrieval hit on the session of each page (once per
// session per call) and returns the sessions hit, in page order.
func (m *MidTerm) Visit(turnIDs []string, now time.Time) []*memory.MidTermSession {
	var hit []*memory.MidTermSession
	for _, id := range turnIDs {
		num, ok := m.ByPage[id]
		if !ok {
			continue
		}
		ses := m.Sessions[num]
		if slices.Contains(hit, ses) {
			continue
		}
		ses.Visits++
		ses.Uses++
		ses.LastVisit = now
		hit = append(hit, ses)
	}
	if len(hit) > 0 {
		m.Dirty = true
	}
	return hit
}

// Hottest returns the session to analyse next among those with
// unanalysed pages: a due one first, then the highest heat; nil when no
// session has unanalysed pages.
func (m *MidTerm) Hottest(now time.Time, w memory.HeatWeights) (*memory.MidTermSession, float64) {
	var best *memory.MidTermSession
	bestHeat := math.Inf(-1)
	for _, ses := range m.Sessions {
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

// State returns the persisted form, sessions in number order.
func (m *MidTerm) State() *memory.MidTermState {
	out := &memory.MidTermState{Version: memory.MidTermVersion, Moved: make(map[string]int64, len(m.Moved)), NextID: m.NextID}
	for k, v := range m.Moved {
		out.Moved[k] = v
	}
	for _, ses := range m.Sessions {
		c := *ses
		c.Keywords = slices.Clone(ses.Keywords)
		c.Pages = slices.Clone(ses.Pages)
		out.Sessions = append(out.Sessions, &c)
	}
	slices.SortFunc(out.Sessions, func(a, b *memory.MidTermSession) int { return a.Num - b.Num })
	return out
}

func CompareSessionIDs(a, b string) int {
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

// Mid-term tunables that are not settings.
const (
	// midTermKeywords is how many keywords a page or session keeps.
	MidTermKeywords = 8
	// midTermCandidates is how many sessions, found through the session
	// index, a page is compared with.
	MidTermCandidates = 8
	// midTermSummaryRunes bounds an extractive summary.
	MidTermSummaryRunes = 240
	// midTermSummaryWindow is how many of a session's latest pages the
	// extractive summary is chosen from.
	MidTermSummaryWindow = 32
	// midTermContinuity is added to the similarity of the session holding the
	// previous exchange of the same thread when the two are at most
	// sittingGap apart: one sitting usually stays on a topic for a while,
	// and short chat exchanges rarely reach the similarity threshold on
	// their words alone (on LoCoMo, without it nearly every session held
	// one page; with it a conversation splits into topic sessions of 5 to
	// 15 exchanges).
	MidTermContinuity = 0.3
	// midTermSaveEvery is the least time between two saves of a scope's
	// mid-term state by the add and retrieve path; Close saves the rest.
	MidTermSaveEvery = 10 * time.Second
)
