package prompts

import (
	"flag"
	"os"
	"path/filepath"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata")

// golden compares got with testdata/name.golden, or rewrites the file when
// the test runs with -update.
func golden(tb testing.TB, name, got string) {
	tb.Helper()
	path := filepath.Join("testdata", name+".golden")
	if *update {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			tb.Fatalf("write golden file: %v", err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		tb.Fatalf("read golden file (run go test ./prompts -update to create it): %v", err)
	}
	if got != string(want) {
		tb.Errorf("%s differs from %s (run go test ./prompts -update if the change is intended)\ngot:\n%s\nwant:\n%s", name, path, got, want)
	}
}
