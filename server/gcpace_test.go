package server

import (
	"runtime"
	"runtime/debug"
	"testing"
	"time"
)

func TestGCPercentFor(t *testing.T) {
	const mb = 1 << 20
	for _, c := range []struct {
		live     uint64
		base     int
		headroom uint64
		want     int
	}{
		{live: 8 * mb, base: 35, headroom: 16 * mb, want: 200},     // a LongMemEval history: 16 MB of growth
		{live: 40 * mb, base: 35, headroom: 16 * mb, want: 40},     // 16 MB is 40%
		{live: 46 * mb, base: 35, headroom: 16 * mb, want: 35},     // 35% of it is 16.1 MB: base holds
		{live: 127 * mb, base: 35, headroom: 16 * mb, want: 35},    // 100,000 exchanges: base holds
		{live: 3 * mb, base: 35, headroom: 16 * mb, want: 534},     // rounded up
		{live: 1, base: 35, headroom: 16 * mb, want: maxGCPercent}, // bounded
		{live: 0, base: 35, headroom: 16 * mb, want: maxGCPercent}, // nothing live yet
		{live: 8 * mb, base: 35, headroom: 0, want: 35},            // no headroom: base
		{live: 8 * mb, base: 400, headroom: 16 * mb, want: 400},    // a base above the headroom's share
	} {
		if got := gcPercentFor(c.live, c.base, c.headroom); got != c.want {
			t.Errorf("gcPercentFor(%d, %d, %d) = %d, want %d", c.live, c.base, c.headroom, got, c.want)
		}
	}
}

// TestPaceGCFollowsTheHeap: the pacer sets the percent at once and again
// after collections, as the live heap changes, and leaves it alone once
// stopped.
func TestPaceGCFollowsTheHeap(t *testing.T) {
	old := debug.SetGCPercent(100)
	defer debug.SetGCPercent(old)
	percent := func() int { p := debug.SetGCPercent(-1); debug.SetGCPercent(p); return p }
	// waitFor collects until the percent is want: the pacer adjusts on
	// the finalizer goroutine, after a collection.
	waitFor := func(what string, want func(int) bool) {
		t.Helper()
		deadline := time.Now().Add(10 * time.Second)
		for !want(percent()) {
			if time.Now().After(deadline) {
				t.Fatalf("%s: the GC percent is %d", what, percent())
			}
			runtime.GC()
			time.Sleep(time.Millisecond)
		}
	}
	stop := paceGC(35, 1<<40) // a headroom no heap here reaches: the bound
	waitFor("a small heap", func(p int) bool { return p == maxGCPercent })

	// A heap of 64 MB live with a 16 MB headroom: base 35 holds.
	stop()
	stop = paceGC(35, 16<<20)
	big := make([]*[1 << 20]byte, 64)
	for i := range big {
		big[i] = new([1 << 20]byte)
	}
	waitFor("64 MB live", func(p int) bool { return p == 35 })
	runtime.KeepAlive(big)
	big = nil
	waitFor("the 64 MB let go", func(p int) bool { return p > 35 })

	stop()
	debug.SetGCPercent(77)
	for i := 0; i < 3; i++ {
		runtime.GC()
	}
	time.Sleep(10 * time.Millisecond)
	if p := percent(); p != 77 {
		t.Errorf("after stop the pacer set the percent to %d", p)
	}
}
