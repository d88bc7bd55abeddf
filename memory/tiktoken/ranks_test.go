package tiktoken

import (
	"maps"
	"testing"

	tkloader "github.com/pkoukk/tiktoken-go-loader"
)

// TestLoadRanksMatchesLoader: loadRanks reads, for every supported
// encoding, exactly the map tiktoken-go-loader's LoadTiktokenBpe returns.
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
			if len(got) != len(want) || !maps.Equal(got, want) {
				t.Errorf("loadRanks(%q) = %d ranks, want the loader's %d (equal: %v)", e.file, len(got), len(want), maps.Equal(got, want))
			}
		})
	}
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
