package redact

import (
	"os"
	"strings"
	"testing"
)

// TestOrdinaryCorpus measures false positives over testdata/ordinary.txt,
// ordinary technical text (code, logs, configuration, recipes, chat)
// with no secret in it: no line may be redacted.
func TestOrdinaryCorpus(t *testing.T) {
	data, err := os.ReadFile("testdata/ordinary.txt")
	if err != nil {
		t.Fatal(err)
	}
	lines, flagged := 0, 0
	for _, line := range strings.Split(string(data), "\n") {
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		lines++
		if got, found := Text(line); len(found) > 0 {
			flagged++
			t.Errorf("false positive %v: %q -> %q", Kinds(found), line, got)
		}
	}
	t.Logf("false positives: %d of %d lines", flagged, lines)
}
