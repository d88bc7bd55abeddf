package engine

import (
	"maps"
	"sort"

	"github.com/mnemo-mcp/mnemo/memory"
)

// pendingCache holds what pending() reports for one document revision:
// the turns above each thread's watermark, their total, and the busiest
// threads. Between two revisions counts only grow (turns arrive), so
// takeTurns keeps it exact in O(1) per turn; a new revision recounts.
type pendingCache struct {
	ok    bool
	rev   int64 // the document revision counted against
	count map[string]int
	total int
	// top lists the busiest threads, most pending turns first (then by
	// id), at most maxPendingThreads+1 of them: PendingInfo names the
	// call's thread and maxPendingThreads others without looking at every
	// thread.
	top []threadCount
}

type threadCount struct {
	id string
	n  int
}

// above reports whether a ranks before b among the busiest threads.
func (a threadCount) above(b threadCount) bool {
	return a.n > b.n || a.n == b.n && a.id < b.id
}

// add counts one more pending turn of thread. Counts only grow, so a
// thread outside top can only enter it by passing its last entry, which
// keeps top exact.
func (c *pendingCache) add(thread string) {
	c.count[thread]++
	c.total++
	tc := threadCount{thread, c.count[thread]}
	i := len(c.top)
	for j, t := range c.top {
		if t.id == thread {
			i = j
			break
		}
	}
	switch {
	case i < len(c.top):
		c.top[i] = tc
	case len(c.top) < maxPendingThreads+1:
		c.top = append(c.top, tc)
	case tc.above(c.top[i-1]):
		i--
		c.top[i] = tc
	default:
		return
	}
	for ; i > 0 && c.top[i].above(c.top[i-1]); i-- {
		c.top[i], c.top[i-1] = c.top[i-1], c.top[i]
	}
}

// pending counts turns not yet reflected in the memory document, in total
// and per thread. The caller holds st.mu; the map is the caller's.
func (st *scopeState) pending() (total int, byThread map[string]int) {
	c := st.pendingCounts()
	return c.total, maps.Clone(c.count)
}

// pendingCounts returns the pending counts of the current document
// revision, counting them if needed: the cache, to be read only, and only
// while st.mu is held.
func (st *scopeState) pendingCounts() *pendingCache {
	c := &st.pend
	if c.ok && c.rev == st.docRev {
		return c
	}
	c.total, c.count = st.countPending()
	c.rev, c.ok, c.top = st.docRev, true, c.top[:0]
	for id, n := range c.count {
		tc := threadCount{id, n}
		i := len(c.top)
		for i > 0 && tc.above(c.top[i-1]) {
			i--
		}
		if i <= maxPendingThreads {
			if len(c.top) <= maxPendingThreads {
				c.top = append(c.top, threadCount{})
			}
			copy(c.top[i+1:], c.top[i:])
			c.top[i] = tc
		}
	}
	return c
}

// notePending counts a turn just added to st, when the cache is current.
func (st *scopeState) notePending(t *memory.Turn) {
	if c := &st.pend; c.ok && c.rev == st.docRev && t.Seq > st.doc.Watermarks[t.ThreadID] {
		c.add(t.ThreadID)
	}
}

// countPending counts the pending turns of every thread from scratch.
func (st *scopeState) countPending() (total int, byThread map[string]int) {
	byThread = make(map[string]int)
	for thread, positions := range st.Threads {
		wm := st.doc.Watermarks[thread]
		// positions are in Seq order: find the first turn above the watermark.
		i := sort.Search(len(positions), func(i int) bool { return st.Turns[positions[i]].Seq > wm })
		if n := len(positions) - i; n > 0 {
			byThread[thread] = n
			total += n
		}
	}
	return total, byThread
}
