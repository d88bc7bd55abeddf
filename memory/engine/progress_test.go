package engine

import (
	"fmt"
	"sync"
	"testing"

	"github.com/mnemo-mcp/mnemo/memory"
)

// TestProgressOfLongLoads checks that loading a large turn log reports
// its indexing and, with no saved mid-term sessions, the placing of its
// exchanges, ending at the total; a small log reports nothing.
func TestProgressOfLongLoads(t *testing.T) {
	for _, tt := range []struct {
		turns      int
		wantStages []string
	}{
		{100, nil},
		{5000, []string{stageIndex, stageSessions}},
	} {
		t.Run(fmt.Sprint(tt.turns), func(t *testing.T) {
			store := newMemStore()
			scope := memory.Scope{UserID: "ana"}
			turns := make([]memory.Turn, tt.turns)
			for i := range turns {
				turns[i] = memory.Turn{ID: fmt.Sprintf("turn_%06d", i), ThreadID: fmt.Sprintf("t%d", i%50), User: fmt.Sprintf("question %d about sailing", i), Reply: "answer"}
			}
			if _, err := store.AppendTurns(t.Context(), scope, turns); err != nil {
				t.Fatal(err)
			}
			var mu sync.Mutex
			last := map[string][2]int{}
			var order []string
			s := newTestService(t, store, memory.DefaultConfig(), WithProgress(func(stage string, done, total int) {
				mu.Lock()
				defer mu.Unlock()
				prev, seen := last[stage]
				if !seen {
					order = append(order, stage)
				} else if done < prev[0] {
					t.Errorf("%s went back from %d to %d", stage, prev[0], done)
				}
				last[stage] = [2]int{done, total}
			}))
			if err := s.Preload(t.Context(), "ana", ""); err != nil {
				t.Fatal(err)
			}
			mu.Lock()
			defer mu.Unlock()
			if fmt.Sprint(order) != fmt.Sprint(tt.wantStages) {
				t.Errorf("stages = %q, want %q", order, tt.wantStages)
			}
			for stage, dt := range last {
				if dt[0] != dt[1] || dt[1] == 0 {
					t.Errorf("%s ended at %d of %d, want the total", stage, dt[0], dt[1])
				}
			}
		})
	}
}
