package engine

import (
	"context"
	"math"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/mnemo-mcp/mnemo/memory"
	"github.com/mnemo-mcp/mnemo/memory/recall"
	"github.com/mnemo-mcp/mnemo/memory/tiers"
)

// syncMidTerm keeps a scope's mid-term memory up to date as turns arrive, once
// something has used it (ensureMidTerm): a restart that only reads the profile
// never pays for it.
func (s *Service) syncMidTerm(ctx context.Context, st *scopeState) {
	if st.midTerm != nil {
		s.catchUpMidTerm(ctx, st)
	}
}

// ensureMidTerm returns the scope's mid-term memory up to date, loading the
// saved state, or rebuilding it from the turn log, on first use.
func (s *Service) ensureMidTerm(ctx context.Context, st *scopeState) *tiers.MidTerm {
	if st.midTerm == nil {
		st.midTerm = s.loadMidTerm(ctx, st)
	}
	s.catchUpMidTerm(ctx, st)
	return st.midTerm
}

// catchUpMidTerm moves the pages that have left their thread's short-term
// window (the last short_term_capacity exchanges) into mid-term sessions,
// evicts over mid_term_capacity and saves the state when due.
func (s *Service) catchUpMidTerm(ctx context.Context, st *scopeState) {
	m := st.midTerm
	capacity := s.cfg.ShortTermCapacity
	// The first catch-up of a state looks at every thread; later ones at
	// the threads that got turns since (a scope may have thousands).
	check := st.touched
	if !m.CaughtUp {
		check = make(map[string]bool, len(st.Threads))
		for thread := range st.Threads {
			check[thread] = true
		}
		m.CaughtUp = true
	}
	var threads []string
	for thread := range check {
		positions := st.Threads[thread]
		if n := len(positions) - capacity; n > 0 && st.Turns[positions[n-1]].Seq > m.Moved[thread] {
			threads = append(threads, thread)
		}
		if w := max(0, len(positions)-capacity); w < len(positions) && st.Turns[positions[w]].Seq <= m.Moved[thread] {
			s.returnToWindow(st, thread)
		}
	}
	clear(st.touched)
	sort.Strings(threads)
	total, placed := 0, 0
	if st.progress != nil {
		for _, thread := range threads {
			positions := st.Threads[thread]
			out := positions[:len(positions)-capacity]
			total += len(out) - sort.Search(len(out), func(i int) bool { return st.Turns[out[i]].Seq > m.Moved[thread] })
		}
	}
	report := total >= progressStep
	for _, thread := range threads {
		positions := st.Threads[thread]
		out := positions[:len(positions)-capacity]
		i := sort.Search(len(out), func(i int) bool { return st.Turns[out[i]].Seq > m.Moved[thread] })
		for _, p := range out[i:] {
			if placed++; report && placed%progressStep == 0 {
				st.progress(stageSessions, placed, total)
			}
			s.placePage(st, p)
			m.Moved[thread] = st.Turns[p].Seq
		}
		m.Dirty = true
	}
	if report {
		st.progress(stageSessions, total, total)
	}
	m.Evict(s.cfg.MidTermCapacity)
	if m.Dirty && time.Since(m.Saved) >= tiers.MidTermSaveEvery {
		s.saveMidTermSoon(st)
	}
}

// returnToWindow takes the pages that are back inside their thread's
// short-term window out of their sessions: after the thread's latest
// exchanges were forgotten, the window reaches back over exchanges that
// had moved to mid-term, and an exchange is in one place only. Sessions
// left empty are dropped; the others recount their terms and vectors, and
// refresh an extractive summary.
func (s *Service) returnToWindow(st *scopeState, thread string) {
	m := st.midTerm
	positions := st.Threads[thread]
	w := max(0, len(positions)-s.cfg.ShortTermCapacity)
	changed := make(map[*memory.MidTermSession]bool)
	for _, p := range positions[w:] {
		id := st.Turns[p].ID
		num, ok := m.ByPage[id]
		if !ok {
			continue
		}
		delete(m.ByPage, id)
		ses := m.Sessions[num]
		ses.Pages = slices.DeleteFunc(ses.Pages, func(pg memory.MidTermPage) bool { return pg.TurnID == id })
		changed[ses] = true
	}
	for ses := range changed {
		if len(ses.Pages) == 0 {
			m.Drop(ses)
			continue
		}
		ses.Terms, ses.CentroidOK = nil, false
		sessionTerms(st, ses)
		if !ses.LLMSummary {
			s.refreshExtractive(st, ses)
		}
		m.Reindex(ses)
	}
	m.Moved[thread] = 0
	if w > 0 {
		m.Moved[thread] = st.Turns[positions[w-1]].Seq
	}
	m.Dirty = true
}

// placePage puts the page at position p into the most similar session
// when the similarity reaches mid_term_similarity_threshold, else into a
// new session. Similarity is semantic (cosine of the page and session
// vectors when both are embedded, else the cosine of their term counts)
// plus the Jaccard index of their keywords (MemoryOS), plus midTermContinuity
// for the session of the page's predecessor in the same sitting, so a
// thread that stays on one topic stays in one session.
func (s *Service) placePage(st *scopeState, p int) {
	m := st.midTerm
	t := st.Turns[p]
	tf := make(map[string]int)
	st.Index.DocTerms(p, func(term string, n int) { tf[term] += n })
	kw := tiers.TopTerms(tf, st.Index, tiers.MidTermKeywords)
	pt := tiers.NewPageTerms(tf)
	var vec []float32
	if p < len(st.Vec.Vecs) {
		vec = st.Vec.Vecs[p]
	}

	cands := make([]int, 0, tiers.MidTermCandidates+1)
	for _, h := range m.Idx.Search(strings.Join(kw, " "), tiers.MidTermCandidates, nil) {
		cands = append(cands, h.ID)
	}
	// The session of the page before this one in its thread is always a
	// candidate, and within one sitting (at most sittingGap apart) it gets
	// midTermContinuity on top of its similarity.
	prevNum := -1
	if pp := prevInThread(st, t); pp >= 0 {
		if num, ok := m.ByPage[st.Turns[pp].ID]; ok {
			if !slices.Contains(cands, num) {
				cands = append(cands, num)
			}
			if t.Time.Sub(st.Turns[pp].Time).Abs() <= recall.SittingGap {
				prevNum = num
			}
		}
	}
	var best *memory.MidTermSession
	bestScore := math.Inf(-1)
	for _, num := range cands {
		ses := m.Sessions[num]
		if ses == nil {
			continue
		}
		sessionTerms(st, ses)
		sem := pt.Cosine(ses)
		if c := sessionCentroid(st, ses); vec != nil && c != nil {
			sem = tiers.VecCosine(vec, c)
		}
		score := sem + tiers.Jaccard(kw, ses.KwToks)
		if num == prevNum {
			score += tiers.MidTermContinuity
		}
		if score > bestScore || score == bestScore && best != nil && num < best.Num {
			best, bestScore = ses, score
		}
	}
	now := s.now()
	if best == nil || bestScore < s.cfg.MidTermSimilarityThreshold {
		best = &memory.MidTermSession{Created: now, LastVisit: now, Terms: make(map[string]int), CentroidOK: true}
		m.AddSession(best)
	}
	sessionCentroid(st, best)
	best.Pages = append(best.Pages, memory.MidTermPage{TurnID: t.ID, Seq: t.Seq, Pos: p})
	best.Interactions++
	best.Uses++
	best.LastVisit = now
	m.ByPage[t.ID] = best.Num
	for term, n := range tf {
		best.AddTerm(term, n)
	}
	best.AddVector(vec)
	best.DirtyKW++
	if !best.LLMSummary && (len(best.Pages) <= tiers.MidTermKeywords || best.DirtyKW*4 >= len(best.Pages)) {
		s.refreshExtractive(st, best)
		m.Reindex(best)
	}
}

// sessionTerms counts the terms of the session's pages, once: sessions
// loaded from the saved state get them when first compared with a page.
func sessionTerms(st *scopeState, ses *memory.MidTermSession) {
	if ses.Terms != nil {
		return
	}
	ses.Terms, ses.TermsSq = make(map[string]int), 0
	for _, pg := range ses.Pages {
		st.Index.DocTerms(pg.Pos, ses.AddTerm)
	}
}

// sessionCentroid returns the sum of the unit vectors of the session's
// embedded pages, or nil when none is. It is computed on first use for a
// session loaded from the saved state, and again after the scope's stored
// vectors are loaded (invalidateCentroids); placePage keeps it up to date
// as pages join.
func sessionCentroid(st *scopeState, ses *memory.MidTermSession) []float32 {
	if !ses.CentroidOK {
		ses.CentroidOK = true
		ses.Centroid = nil
		for _, pg := range ses.Pages {
			if pg.Pos < len(st.Vec.Vecs) {
				ses.AddVector(st.Vec.Vecs[pg.Pos])
			}
		}
	}
	return ses.Centroid
}

// invalidateCentroids makes every session compute its centroid again: the
// scope's vectors have just been loaded.
func invalidateCentroids(st *scopeState) {
	if st.midTerm == nil {
		return
	}
	for _, ses := range st.midTerm.Sessions {
		ses.CentroidOK = false
	}
}

// prevInThread returns the position of the turn before t in its thread,
// or -1.
func prevInThread(st *scopeState, t *memory.Turn) int {
	positions := st.Threads[t.ThreadID]
	i := sort.Search(len(positions), func(i int) bool { return st.Turns[positions[i]].Seq >= t.Seq })
	if i == 0 || i > len(positions) {
		return -1
	}
	return positions[i-1]
}

// pageNeighbours returns the turn ids before and after the page in its thread
// (page continuity links); "" where there is none.
func pageNeighbours(st *scopeState, p int) (prev, next string) {
	t := st.Turns[p]
	positions := st.Threads[t.ThreadID]
	i := sort.Search(len(positions), func(i int) bool { return st.Turns[positions[i]].Seq >= t.Seq })
	if i > 0 {
		prev = st.Turns[positions[i-1]].ID
	}
	if i+1 < len(positions) {
		next = st.Turns[positions[i+1]].ID
	}
	return prev, next
}
