package engine_test

import (
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/mnemo-mcp/mnemo/memory"
)

// restartDir, when set, is a data directory (say, one mnemo bench
// --data-dir filled) that BenchmarkRestart starts from, a copy of it,
// instead of a generated one.
var restartDir = flag.String("restartdir", "", "BenchmarkRestart: a data directory to restart on")

// BenchmarkRestart measures what a restart costs a host: opening the
// store, loading the scope — its turn log, page index snapshot and
// mid-term state, from a store closed cleanly — as serve does at start
// (Preload), and the first retrieval.
func BenchmarkRestart(b *testing.B) {
	sizes := benchSizes()
	if *restartDir != "" {
		sizes = []int{0}
	}
	for _, n := range sizes {
		b.Run(fmt.Sprintf("stored=%d", n), func(b *testing.B) {
			dir := filepath.Join(b.TempDir(), "data")
			if *restartDir != "" {
				if err := os.CopyFS(dir, os.DirFS(*restartDir)); err != nil {
					b.Fatal(err)
				}
			} else {
				svc := newBenchService(b, dir)
				fill(b, svc, n)
				svc.Close(context.Background())
			}
			req := memory.RetrieveRequest{ThreadID: "t0", Query: benchQueries(1)[0]}
			b.ResetTimer()
			var retained uint64
			for b.Loop() {
				svc := newBenchService(b, dir)
				if err := svc.Preload(context.Background(), "", ""); err != nil {
					b.Fatal(err)
				}
				if _, err := svc.Retrieve(context.Background(), req); err != nil {
					b.Fatal(err)
				}
				b.StopTimer()
				runtime.GC()
				var ms runtime.MemStats
				runtime.ReadMemStats(&ms)
				retained = max(retained, ms.HeapAlloc)
				svc.Close(context.Background())
				b.StartTimer()
			}
			b.ReportMetric(float64(retained)/(1<<20), "heap-MB")
		})
	}
}
