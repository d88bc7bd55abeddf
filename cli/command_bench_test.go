package cli

import (
	"bytes"
	"strings"
	"testing"
	"time"
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
		{"clients over stdio", []string{"bench", "--clients", "4"}},
		{"no clients", []string{"bench", "--http", "--clients", "0"}},
		{"mix without clients", []string{"bench", "--http", "--mix", "add"}},
		{"unknown mix", []string{"bench", "--http", "--clients", "2", "--mix", "write"}},
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

func TestRunBenchClientsDrivesOneUser(t *testing.T) {
	t.Parallel()
	bin := mnemoBinary(t)
	tests := []struct {
		mix       string
		want, not []string
	}{
		{"both", []string{"add_memory", "retrieve_memory", "calls/s", "server cores", "client cores", "8 clients as one user"}, nil},
		{"add", []string{"add_memory", "calls/s"}, []string{"retrieve_memory  "}},
		{"retrieve", []string{"retrieve_memory", "calls/s"}, []string{"add_memory  "}},
	}
	for _, tc := range tests {
		t.Run(tc.mix, func(t *testing.T) {
			t.Parallel()
			var out, errOut bytes.Buffer
			args := []string{"bench", "--http", "--clients", "8", "--mix", tc.mix, "-n", "40", "-m", "16", "--server", bin + " serve", "--data-dir", t.TempDir()}
			if code := Run(t.Context(), args, func(string) string { return "" }, nil, &out, &errOut); code != exitOK {
				t.Fatalf("mnemo %q = exit %d, stderr %q", args, code, errOut.String())
			}
			for _, want := range tc.want {
				if !strings.Contains(out.String(), want) {
					t.Errorf("mnemo bench --mix %s output lacks %q:\n%s", tc.mix, want, out.String())
				}
			}
			for _, not := range tc.not {
				if strings.Contains(out.String(), not) {
					t.Errorf("mnemo bench --mix %s output has a row %q:\n%s", tc.mix, not, out.String())
				}
			}
		})
	}
}

func TestParseProcStat(t *testing.T) {
	t.Parallel()
	// A command name with spaces and a parenthesis, as /proc allows.
	stat := "4242 (mnemo (x) y) S 1 4242 4242 0 -1 4194560 900 0 0 0 250 75 0 0 20 0 9 0 123 456 789"
	got, err := parseProcStat(stat)
	if err != nil {
		t.Fatalf("parseProcStat() error = %v", err)
	}
	if want := 3250 * time.Millisecond; got != want {
		t.Errorf("parseProcStat() = %v, want %v (utime 250 + stime 75 ticks)", got, want)
	}
	for _, bad := range []string{"", "4242 mnemo S 1", "4242 (mnemo) S 1 2 3"} {
		if _, err := parseProcStat(bad); err == nil {
			t.Errorf("parseProcStat(%q) = nil error, want one", bad)
		}
	}
}
