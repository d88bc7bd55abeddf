package memory

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// locomoDir is the LoCoMo development split of the shared eval tools,
// beside the repository (it is not part of it).
const locomoDir = "../../shared/eval/data/locomo"

// locomoTexts returns every utterance of the LoCoMo development
// conversations, or skips when they are not beside the repository.
func locomoTexts(t *testing.T) []string {
	t.Helper()
	files, _ := filepath.Glob(filepath.Join(locomoDir, "*.json"))
	if len(files) == 0 {
		t.Skipf("no LoCoMo conversations in %s", locomoDir)
	}
	var texts []string
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var conv map[string]json.RawMessage
		if err := json.Unmarshal(data, &conv); err != nil {
			t.Fatal(err)
		}
		for k, v := range conv {
			if !strings.HasPrefix(k, "session_") || strings.HasSuffix(k, "date_time") {
				continue
			}
			var turns []struct{ Text string }
			if json.Unmarshal(v, &turns) != nil {
				continue
			}
			for _, tu := range turns {
				if tu.Text != "" {
					texts = append(texts, tu.Text)
				}
			}
		}
	}
	return texts
}

// TestSignalsFalsePositivesLoCoMo measures how often ordinary conversation
// (LoCoMo's chat between two friends, none of it correcting an assistant)
// is taken for a correction. Measured: 0 of 2,760 utterances.
func TestSignalsFalsePositivesLoCoMo(t *testing.T) {
	texts := locomoTexts(t)
	var hits []string
	for _, s := range texts {
		if DetectSignals([]Message{{Role: RoleUser, Content: s}}).Correction {
			hits = append(hits, s)
		}
	}
	rate := float64(len(hits)) / float64(len(texts))
	t.Logf("corrections found in %d of %d LoCoMo utterances (%.2f%%)", len(hits), len(texts), 100*rate)
	if rate > 0.005 {
		t.Errorf("false-positive rate %.2f%% over 0.5%%: %q", 100*rate, hits)
	}
}
