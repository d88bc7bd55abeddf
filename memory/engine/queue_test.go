package engine

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/mnemo-mcp/mnemo/memory"
)

// TestQueueDebounce drives the queue alone, with fake work and the fake
// clock of a synctest bubble (time.Sleep there only advances that clock):
// when each thread's update runs, how often, and what a failure or a
// shutdown does to what is pending.
func TestQueueDebounce(t *testing.T) {
	const debounce = 30 * time.Second
	type turn struct {
		at     time.Duration // since the start
		thread string
	}
	// run is an update that should happen: its thread and the window of
	// time since the start in which it starts (one instant unless a
	// jittered backoff comes before it).
	type run struct {
		thread   string
		from, to time.Duration
	}
	tests := []struct {
		name    string
		turns   []turn
		fail    map[string]int // failed updates of a thread before one succeeds
		closeAt time.Duration  // 0: not closed before the work is done
		want    []run
		tiers   int // tier runs wanted: one after each update that succeeds
	}{
		{
			name:  "one turn runs once the thread is quiet",
			turns: []turn{{0, "a"}},
			want:  []run{{"a", debounce, debounce}},
			tiers: 1,
		},
		{
			name:  "each new turn rearms the timer: one update for the burst",
			turns: []turn{{0, "a"}, {10 * time.Second, "a"}, {25 * time.Second, "a"}},
			want:  []run{{"a", 25*time.Second + debounce, 25*time.Second + debounce}},
			tiers: 1,
		},
		{
			name:  "threads are debounced apart",
			turns: []turn{{0, "a"}, {10 * time.Second, "b"}, {20 * time.Second, "a"}},
			want:  []run{{"b", 10*time.Second + debounce, 10*time.Second + debounce}, {"a", 20*time.Second + debounce, 20*time.Second + debounce}},
			tiers: 2,
		},
		{
			name:  "a failed update is retried after a jittered backoff that new turns do not reset",
			turns: []turn{{0, "a"}, {40 * time.Second, "a"}},
			fail:  map[string]int{"a": 1},
			// backoff(0) is 30 s ± 20 %.
			want:  []run{{"a", debounce, debounce}, {"a", debounce + 24*time.Second, debounce + 36*time.Second}},
			tiers: 1,
		},
		{
			name:    "close runs what is pending at once",
			turns:   []turn{{0, "a"}, {5 * time.Second, "b"}},
			closeAt: 10 * time.Second,
			want:    []run{{"a", 10 * time.Second, 10 * time.Second}, {"b", 10 * time.Second, 10 * time.Second}},
			tiers:   2,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				start := time.Now()
				var (
					mu    sync.Mutex
					runs  []string // thread@elapsed
					got   []run
					tiers int
					fails = make(map[string]int)
				)
				for k, v := range tt.fail {
					fails[k] = v
				}
				q := newQueue(queueWork{
					ctx: t.Context(),
					log: slog.New(slog.DiscardHandler),
					update: func(_ context.Context, _ memory.Scope, thread string) (*threadReport, error) {
						mu.Lock()
						defer mu.Unlock()
						at := time.Since(start)
						got = append(got, run{thread, at, at})
						runs = append(runs, fmt.Sprintf("%s@%v", thread, at))
						if fails[thread] > 0 {
							fails[thread]--
							return nil, errors.New("model down")
						}
						return &threadReport{}, nil
					},
					tiers: func(context.Context, memory.Scope) error {
						mu.Lock()
						tiers++
						mu.Unlock()
						return nil
					},
				}, debounce, 2)
				scope := memory.Scope{UserID: memory.DefaultUserID}
				for _, tn := range tt.turns {
					time.Sleep(tn.at - time.Since(start))
					q.enqueue(scope, tn.thread, memory.Signals{})
				}
				if tt.closeAt > 0 {
					time.Sleep(tt.closeAt - time.Since(start))
				} else {
					time.Sleep(time.Hour)
				}
				q.close(t.Context())
				synctest.Wait()

				mu.Lock()
				defer mu.Unlock()
				if len(got) != len(tt.want) {
					t.Fatalf("updates ran %v, want %d", runs, len(tt.want))
				}
				// Runs at the same instant (close) may start in any order.
				if tt.closeAt > 0 && len(got) == 2 && got[0].thread > got[1].thread {
					got[0], got[1] = got[1], got[0]
				}
				for i, w := range tt.want {
					if g := got[i]; g.thread != w.thread || g.from < w.from || g.from > w.to {
						t.Errorf("update %d ran %s at %v, want %s between %v and %v (all: %v)", i, g.thread, g.from, w.thread, w.from, w.to, runs)
					}
				}
				if tiers != tt.tiers {
					t.Errorf("tier runs = %d, want %d", tiers, tt.tiers)
				}
			})
		})
	}
}
