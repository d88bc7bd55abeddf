package engine

import (
	"cmp"
	"context"
	"slices"
	"sync/atomic"
	"time"

	"github.com/mnemo-mcp/mnemo/memory"
	"github.com/mnemo-mcp/mnemo/memory/tiers"
)

// saveMidTerm writes st's mid-term state when a MidTermStore is set.
func (s *Service) saveMidTerm(ctx context.Context, st *scopeState) {
	if s.midTermStore == nil || st.midTerm == nil {
		return
	}
	saved, err := s.saveCache(st, "mid-term memory", func() error {
		return s.midTermStore.SaveMidTerm(ctx, st.scope, st.midTerm.State())
	})
	if err != nil {
		s.log.Warn("cannot save mid-term memory; it will be rebuilt from the turn log if lost", "scope", st.scope.Key(), "err", err)
	}
	if !saved {
		return
	}
	st.midTerm.Dirty = false
	st.midTerm.Saved = time.Now()
}

// saveMidTermSoon writes st's mid-term state in the background: the
// state is copied under st.mu, which the caller holds, and encoded and
// written after, so that add_memory never waits for a save. One save per
// scope runs at a time; a change meanwhile stays dirty for the next.
func (s *Service) saveMidTermSoon(st *scopeState) {
	m := st.midTerm
	if s.midTermStore == nil || m == nil || m.Saving {
		return
	}
	state := m.State()
	m.Saving, m.Dirty, m.Saved = true, false, time.Now()
	s.bg.Add(1)
	go func() {
		defer s.bg.Done()
		saved, err := s.saveCache(st, "mid-term memory", func() error {
			return s.midTermStore.SaveMidTerm(s.bgCtx, st.scope, state)
		})
		st.mu.Lock()
		defer st.mu.Unlock()
		m.Saving = false
		if !saved {
			m.Dirty = true
		}
		if err != nil {
			s.log.Warn("cannot save mid-term memory; it will be rebuilt from the turn log if lost", "scope", st.scope.Key(), "err", err)
		}
	}()
}

// flushMidTerm saves every scope whose mid-term state changed since its
// last save; Close calls it once background saves are done.
func (s *Service) flushMidTerm(ctx context.Context) {
	s.mu.Lock()
	states := make([]*scopeState, 0, len(s.scopes))
	for _, st := range s.scopes {
		states = append(states, st)
	}
	s.mu.Unlock()
	for _, st := range states {
		st.mu.Lock()
		if st.midTerm != nil && st.midTerm.Dirty {
			s.saveMidTerm(ctx, st)
		}
		st.mu.Unlock()
	}
}

// loadMidTerm reads the saved state and fits it to the turns in st: pages
// whose turns are gone (forgotten) are dropped, and so are sessions left
// empty. Nothing saved, or a state that cannot be read, starts empty, and
// syncMidTerm then rebuilds the sessions from the turn log.
func (s *Service) loadMidTerm(ctx context.Context, st *scopeState) *tiers.MidTerm {
	if s.midTermStore == nil {
		return tiers.NewMidTerm()
	}
	saved, err := s.midTermStore.LoadMidTerm(ctx, st.scope)
	return s.fitMidTerm(st, saved, err)
}

// turnBySeq returns the position in turns (in Seq order) of the turn
// with the given Seq and id, or -1 when there is none (seq 0: not known).
// Seqs are usually dense, so the position is first guessed from the
// first turn's Seq.
func turnBySeq(turns []*memory.Turn, seq int64, id string) int {
	if seq <= 0 || len(turns) == 0 {
		return -1
	}
	p := -1
	if g := seq - turns[0].Seq; g >= 0 && g < int64(len(turns)) && turns[g].Seq == seq {
		p = int(g)
	} else if i, ok := slices.BinarySearchFunc(turns, seq, func(t *memory.Turn, seq int64) int { return cmp.Compare(t.Seq, seq) }); ok {
		p = i
	}
	if p < 0 || turns[p].ID != id {
		return -1
	}
	return p
}

// savedMidTerm is a scope's saved mid-term state being read
// (LoadMidTerm's results, once done is closed). Its sessions become those
// of one state only: take hands them out once.
type savedMidTerm struct {
	done  chan struct{}
	state *memory.MidTermState
	err   error
	taken atomic.Bool
}

// take waits for the read and returns its results; ok is false when they
// were taken already.
func (m *savedMidTerm) take() (saved *memory.MidTermState, err error, ok bool) {
	<-m.done
	if m.taken.Swap(true) {
		return nil, nil, false
	}
	return m.state, m.err, true
}

// fitSavedMidTerm fits the saved mid-term state Preload is reading, if
// any, to st's turns. It returns the sessions that lost pages, for
// refitSessions once st's page index is whole. The caller holds st.mu.
func (s *Service) fitSavedMidTerm(st *scopeState) []*memory.MidTermSession {
	mid := st.savedMid
	st.savedMid = nil
	if mid == nil || st.midTerm != nil {
		return nil
	}
	saved, err, ok := mid.take()
	if !ok {
		return nil
	}
	m, refit := s.fitSaved(st, saved, err)
	st.midTerm = m
	return refit
}

// fitMidTerm is loadMidTerm once the saved state is read (saved and err
// are LoadMidTerm's results).
func (s *Service) fitMidTerm(st *scopeState, saved *memory.MidTermState, err error) *tiers.MidTerm {
	m, refit := s.fitSaved(st, saved, err)
	s.refitSessions(st, m, refit)
	return m
}

// refitSessions makes again the terms, keywords and summary of sessions
// that lost pages (the summary may quote a forgotten exchange), from the
// pages left: fitSaved's second half, which reads the page index.
func (s *Service) refitSessions(st *scopeState, m *tiers.MidTerm, sessions []*memory.MidTermSession) {
	for _, ses := range sessions {
		sessionTerms(st, ses)
		s.refreshExtractive(st, ses)
		m.Reindex(ses)
	}
}

// fitSaved is fitMidTerm but for what reads the page index: the sessions
// that lost pages are returned for refitSessions, which makes their
// terms, keywords and summary again. It reads only st's turns.
func (s *Service) fitSaved(st *scopeState, saved *memory.MidTermState, err error) (*tiers.MidTerm, []*memory.MidTermSession) {
	m := tiers.NewMidTerm()
	if err != nil {
		s.log.Warn("mid-term memory unreadable; rebuilding it from the turn log", "scope", st.scope.Key(), "err", err)
		m.Dirty = true
		return m, nil
	}
	if saved == nil || saved.Version != memory.MidTermVersion {
		return m, nil
	}
	var refit []*memory.MidTermSession
	for thread, seq := range saved.Moved {
		m.Moved[thread] = seq
	}
	total := 0
	for _, ses := range saved.Sessions {
		if ses != nil {
			total += len(ses.Pages)
		}
	}
	m.ByPage = make(map[string]int, total)
	taken := make([]bool, len(st.Turns)) // a turn is in one session only
	var ids map[string]int               // turn id → position, built if a page's Seq does not find it
	for _, ses := range saved.Sessions {
		if ses == nil {
			continue
		}
		had := len(ses.Pages)
		pages := ses.Pages[:0]
		for _, pg := range ses.Pages {
			p := turnBySeq(st.Turns, pg.Seq, pg.TurnID)
			if p < 0 {
				if ids == nil {
					ids = make(map[string]int, len(st.Turns))
					for p, t := range st.Turns {
						ids[t.ID] = p
					}
				}
				var ok bool
				if p, ok = ids[pg.TurnID]; !ok {
					continue
				}
			}
			if !taken[p] {
				taken[p] = true
				if pg.Seq != st.Turns[p].Seq {
					pg.Seq = st.Turns[p].Seq
					m.Dirty = true // saved again with the Seq, for the next start
				}
				// The turn's own id, equal to the page's: the copy
				// decoded from the saved state is let go.
				pg.Pos, pg.TurnID = p, st.Turns[p].ID
				pages = append(pages, pg)
			}
		}
		if len(pages) == 0 {
			m.Dirty = true
			continue
		}
		ses.Pages = pages
		ses.SetKeywords(ses.Keywords)
		if len(pages) < had {
			// The summary may quote a forgotten exchange: it is made
			// again from what is left (refitSessions).
			ses.LLMSummary, ses.SummarizedPages = false, 0
			refit = append(refit, ses)
			m.Dirty = true
		}
		m.AddSession(ses)
	}
	m.NextID = max(m.NextID, saved.NextID)
	m.Saved = time.Now()
	return m, refit
}
