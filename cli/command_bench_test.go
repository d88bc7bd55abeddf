package cli

import (
	"bytes"
	"strings"
	"testing"
)

func TestRunBenchDrivesTheBinary(t *testing.T) {
	t.Parallel()
	bin := mnemoBinary(t)
	var out, errOut bytes.Buffer
	code := Run(t.Context(), []string{"bench", "-n", "30", "-m", "10", "--server", bin + " serve", "--data-dir", t.TempDir()}, func(string) string { return "" }, nil, &out, &errOut)
	if code != exitOK {
		t.Fatalf("mnemo bench = exit %d, stderr %q", code, errOut.String())
	}
	for _, want := range []string{"add_memory", "retrieve_memory", "p50 ms", "startup (spawn → initialize answer)", "first retrieve_memory after the restart"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("mnemo bench output lacks %q:\n%s", want, out.String())
		}
	}
}

func TestRunBenchRejectsBadFlags(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		args []string
	}{
		{"no exchanges", []string{"bench", "-n", "0"}},
		{"stray argument", []string{"bench", "extra"}},
		{"unknown flag", []string{"bench", "--nope"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var out, errOut bytes.Buffer
			if code := Run(t.Context(), tc.args, func(string) string { return "" }, nil, &out, &errOut); code != exitUsage {
				t.Errorf("run(%q) = %d, want %d (usage)", tc.args, code, exitUsage)
			}
		})
	}
}
