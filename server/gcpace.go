package server

import (
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"sync"
)

// gcHeadroom is the least the heap may grow between two garbage
// collections of serve, whatever the GC percent: a collection marks the
// whole live heap, and with a small one (a LongMemEval history, ~8 MB)
// serveGCPercent alone let it grow by 3 MB, so a retrieval that encoded a
// long answer met a collection more often than not, and paid 3-5 ms of
// CPU for it.
const gcHeadroom = 16 << 20

// maxGCPercent bounds the percent gcPercentFor gives a nearly empty heap.
const maxGCPercent = 10000

// gcPercentFor returns the GC percent for a live heap of live bytes:
// base, or more when base's share of live is less than headroom.
func gcPercentFor(live uint64, base int, headroom uint64) int {
	if live == 0 {
		return maxGCPercent
	}
	p := int(min((100*headroom+live-1)/live, maxGCPercent))
	return max(base, p)
}

// gcPacer keeps the GC percent at gcPercentFor of the live heap, read
// again after each collection (by a finalizer re-armed each cycle).
type gcPacer struct {
	base     int
	headroom uint64

	mu      sync.Mutex
	stopped bool
	percent int
	live    []metrics.Sample
}

// gcSentinel is garbage made to be collected: its finalizer runs after a
// collection. Holding a pointer, it is never batched with other small
// objects (a tiny object's finalizer may not run).
type gcSentinel struct{ p *gcPacer }

// paceGC sets the GC percent to base, raised while the live heap is small
// so that it may grow by headroom between collections, until stop; stop
// leaves the percent last set.
func paceGC(base int, headroom uint64) (stop func()) {
	p := &gcPacer{base: base, headroom: headroom, live: []metrics.Sample{{Name: "/gc/heap/live:bytes"}}}
	p.adjust()
	p.arm()
	return func() {
		p.mu.Lock()
		p.stopped = true
		p.mu.Unlock()
	}
}

func (p *gcPacer) arm() {
	runtime.SetFinalizer(&gcSentinel{p}, func(s *gcSentinel) {
		if s.p.adjust() {
			s.p.arm()
		}
	})
}

// adjust sets the percent for the live heap now; it reports false once
// the pacer is stopped.
func (p *gcPacer) adjust() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.stopped {
		return false
	}
	metrics.Read(p.live)
	var live uint64
	if p.live[0].Value.Kind() == metrics.KindUint64 {
		live = p.live[0].Value.Uint64()
	}
	if pct := gcPercentFor(live, p.base, p.headroom); pct != p.percent {
		debug.SetGCPercent(pct)
		p.percent = pct
	}
	return true
}
