package tiktoken

import (
	"math/rand/v2"
	"runtime"
	"runtime/metrics"
	"strings"
	"testing"

	tkloader "github.com/pkoukk/tiktoken-go-loader"
)

// TestLoadRanksMatchesLoader: loadRanks reads, for every supported
// encoding, exactly the ranks of the map tiktoken-go-loader's
// LoadTiktokenBpe returns: every token with its rank, and nothing else
// (each token cut short or grown by a byte is a token only when the map
// says so).
func TestLoadRanksMatchesLoader(t *testing.T) {
	for name, e := range encodings {
		t.Run(name, func(t *testing.T) {
			got, err := loadRanks(e.file)
			if err != nil {
				t.Fatalf("loadRanks(%q) error = %v", e.file, err)
			}
			want, err := tkloader.NewOfflineLoader().LoadTiktokenBpe(e.file)
			if err != nil {
				t.Fatal(err)
			}
			if got.len() != len(want) {
				t.Errorf("loadRanks(%q) = %d ranks, want the loader's %d", e.file, got.len(), len(want))
			}
			bad := 0
			check := func(s string) {
				r, ok := got.get(s)
				wr, wok := want[s]
				if (ok != wok || r != wr) && bad < 10 {
					bad++
					t.Errorf("get(%q) = %d, %v; the loader's map has %d, %v", s, r, ok, wr, wok)
				}
			}
			for tok := range want {
				check(tok)
				check(tok[:len(tok)-1])
				check(tok + "e")
				check(" " + tok)
			}
			check("")
			check(strings.Repeat("a", maxTokenLen+1))
		})
	}
}

// TestRankTable: put replaces the rank of a token put before, as a map
// assignment does; a token the table does not hold is not found, even
// where its bytes are a prefix or a part of one that is; and put refuses
// what a slot cannot hold and more tokens than the table was made for.
func TestRankTable(t *testing.T) {
	all := "abcab" + "abc" + "x"
	tab, err := newRankTable(all, 3)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range []struct{ start, end, rank int }{{0, 3, 7}, {3, 5, 8}, {5, 8, 9}} {
		if err := tab.put(p.start, p.end, p.rank); err != nil {
			t.Fatalf("put(%d, %d, %d) = %v", p.start, p.end, p.rank, err)
		}
	}
	for _, c := range []struct {
		s    string
		rank int
		ok   bool
	}{{"abc", 9, true}, {"ab", 8, true}, {"a", 0, false}, {"bc", 0, false}, {"abca", 0, false}, {"x", 0, false}, {"", 0, false}} {
		if r, ok := tab.get(c.s); r != c.rank || ok != c.ok {
			t.Errorf("get(%q) = %d, %v, want %d, %v", c.s, r, ok, c.rank, c.ok)
		}
	}
	if tab.len() != 2 {
		t.Errorf("len() = %d after putting abc twice and ab, want 2", tab.len())
	}
	for _, p := range []struct{ start, end, rank int }{{8, 8, 1}, {8, 9, -1}, {8, 9, maxRank + 1}} {
		if err := tab.put(p.start, p.end, p.rank); err == nil {
			t.Errorf("put(%d, %d, %d) = nil, want an error", p.start, p.end, p.rank)
		}
	}
	long := strings.Repeat("y", maxTokenLen+1)
	big, err := newRankTable(long, 1)
	if err != nil {
		t.Fatal(err)
	}
	if err := big.put(0, len(long), 1); err == nil {
		t.Errorf("put of a %d-byte token = nil, want an error", len(long))
	}
	full, err := newRankTable(strings.Repeat("z", 64), 4)
	if err != nil {
		t.Fatal(err)
	}
	var putErr error
	for i := 1; i <= 64 && putErr == nil; i++ {
		putErr = full.put(0, i, i)
	}
	if putErr == nil || full.len() > int(full.mask/2+1) {
		t.Errorf("a table made for 4 tokens took %d, the last put = %v; want an error once it is half full", full.len(), putErr)
	}
}

// FuzzRankTable: a table of random tokens answers every lookup as a map
// of the same tokens does.
func FuzzRankTable(f *testing.F) {
	f.Add(uint64(1), "abcab", "ab")
	f.Add(uint64(2), "hello world", "lo w")
	f.Fuzz(func(t *testing.T, seed uint64, all, probe string) {
		if len(all) == 0 || len(all) > 4096 {
			return
		}
		rng := rand.New(rand.NewPCG(seed, 1))
		n := 1 + rng.IntN(64)
		tab, err := newRankTable(all, n)
		if err != nil {
			t.Fatal(err)
		}
		want := make(map[string]int, n)
		for i := 0; i < n; i++ {
			start := rng.IntN(len(all))
			end := start + 1 + rng.IntN(min(len(all)-start, 16))
			rank := rng.IntN(maxRank + 1)
			if err := tab.put(start, end, rank); err != nil {
				t.Fatal(err)
			}
			want[all[start:end]] = rank
		}
		if tab.len() != len(want) {
			t.Fatalf("len() = %d, want %d", tab.len(), len(want))
		}
		for _, s := range []string{probe, all, all[:len(all)/2]} {
			r, ok := tab.get(s)
			if wr, wok := want[s]; ok != wok || r != wr {
				t.Fatalf("get(%q) = %d, %v, want %d, %v", s, r, ok, wr, wok)
			}
		}
		for s, wr := range want {
			if r, ok := tab.get(s); !ok || r != wr {
				t.Fatalf("get(%q) = %d, %v, want %d", s, r, ok, wr)
			}
		}
	})
}

// BenchmarkGCWithRanks measures the CPU a garbage collection spends with
// an encoding's ranks loaded, which every GC cycle of a server carries
// (gc-cpu-ms/op, from runtime/metrics: the wall time of runtime.GC
// depends on what else the machine runs). With the ranks in a
// map[string]int a cycle took 1.98 ms of CPU, with none 0.23 ms.
func BenchmarkGCWithRanks(b *testing.B) {
	ranks, err := loadRanks(encodings[CL100kBase].file)
	if err != nil {
		b.Fatal(err)
	}
	gcCPU := []metrics.Sample{{Name: "/cpu/classes/gc/total:cpu-seconds"}}
	runtime.GC()
	metrics.Read(gcCPU)
	start := gcCPU[0].Value.Float64()
	for b.Loop() {
		runtime.GC()
	}
	metrics.Read(gcCPU)
	b.ReportMetric((gcCPU[0].Value.Float64()-start)*1e3/float64(b.N), "gc-cpu-ms/op")
	runtime.KeepAlive(ranks)
}

// BenchmarkLoadRanks measures what loading an encoding costs a start,
// with tiktoken-go-loader's own loader for comparison.
func BenchmarkLoadRanks(b *testing.B) {
	file := encodings[CL100kBase].file
	b.Run("loadRanks", func(b *testing.B) {
		for b.Loop() {
			if _, err := loadRanks(file); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("tiktoken-go-loader", func(b *testing.B) {
		for b.Loop() {
			if _, err := tkloader.NewOfflineLoader().LoadTiktokenBpe(file); err != nil {
				b.Fatal(err)
			}
		}
	})
}
