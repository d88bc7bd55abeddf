package engine_test

import (
	"context"
	"os"
	"runtime"
	"runtime/pprof"
	"testing"

	"github.com/mnemo-mcp/mnemo/memory"
	"github.com/mnemo-mcp/mnemo/memory/engine"
	"github.com/mnemo-mcp/mnemo/memory/files"
)

func TestZZHeap(t *testing.T) {
	dir := os.Getenv("ZZDIR")
	if dir == "" {
		t.Skip()
	}
	b := &testing.B{}
	_ = b
	svc := newZZService(t, dir)
	if _, err := svc.Retrieve(context.Background(), memory.RetrieveRequest{ThreadID: "t0", Query: "When did we talk about the deployment?"}); err != nil {
		t.Fatal(err)
	}
	runtime.GC()
	f, _ := os.Create(os.Getenv("ZZOUT"))
	pprof.Lookup("heap").WriteTo(f, 0)
	f.Close()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	t.Logf("heap alloc %d MB, sys %d MB, total alloc %d MB", ms.HeapAlloc>>20, ms.HeapSys>>20, ms.TotalAlloc>>20)
	runtime.KeepAlive(svc)
	svc.Close(context.Background())
}

func newZZService(t *testing.T, dir string) *engine.Service {
	store, err := files.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { store.Close() })
	return engine.NewTestService(t, store, memory.DefaultConfig())
}
