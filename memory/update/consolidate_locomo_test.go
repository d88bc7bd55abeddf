package update

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/mnemo-mcp/mnemo/memory"
	"github.com/mnemo-mcp/mnemo/memory/lexical"
)

// locomoSpeakerFacts returns, per LoCoMo conversation (one memory each),
// the fact-bearing utterances as the scripted extraction states them:
// each utterance's first sentence that speaks of the speaker ("I …", "my
// …"), prefixed with the speaker's name, in session order. It skips when
// the conversations are not beside the repository.
func locomoSpeakerFacts(t *testing.T) [][]string {
	t.Helper()
	files, _ := filepath.Glob(filepath.Join(locomoDir, "*.json"))
	if len(files) == 0 {
		t.Skipf("no LoCoMo conversations in %s", locomoDir)
	}
	var out [][]string
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var conv map[string]json.RawMessage
		if err := json.Unmarshal(data, &conv); err != nil {
			t.Fatal(err)
		}
		var keys []string
		for k := range conv {
			if strings.HasPrefix(k, "session_") && !strings.HasSuffix(k, "date_time") {
				keys = append(keys, k)
			}
		}
		sort.Slice(keys, func(i, j int) bool {
			var a, b int
			fmt.Sscanf(keys[i], "session_%d", &a)
			fmt.Sscanf(keys[j], "session_%d", &b)
			return a < b
		})
		var facts []string
		for _, k := range keys {
			var turns []struct {
				Speaker string `json:"speaker"`
				Text    string `json:"text"`
			}
			if json.Unmarshal(conv[k], &turns) != nil {
				continue
			}
			for _, tu := range turns {
				s := tu.Text
				if i := strings.IndexAny(s, ".!?"); i > 0 {
					s = s[:i]
				}
				low := " " + strings.ToLower(s) + " "
				if len(s) < 25 || len(s) > 200 || !(strings.Contains(low, " i ") || strings.Contains(low, " my ") || strings.Contains(low, " i'm ")) {
					continue
				}
				facts = append(facts, tu.Speaker+": "+strings.TrimSpace(s))
			}
		}
		out = append(out, facts)
	}
	return out
}

// reextract rewords a fact the way a second extraction of the same
// statement does (another conversation, a client retry): a subject
// prefix, different case and punctuation.
func reextract(s string) string {
	return "The user said that " + strings.ToLower(s[:1]) + s[1:] + "."
}

// TestConsolidateLoCoMo measures consolidation on memories built from the
// LoCoMo conversations by a scripted extraction (every first-person
// utterance a fact, every fourth stated again in other words later, as a
// second extraction or a client retry does): facts before and after, and
// whether fact retrieval finds each fact (or the one it was merged into)
// in the top 5 for a reworded query, before and after.
func TestConsolidateLoCoMo(t *testing.T) {
	convs := locomoSpeakerFacts(t)
	const topK = 5
	var offered, before, after, hitsBefore, hitsAfter, queries, natural int
	var elapsed time.Duration
	for ci, facts := range convs {
		at := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
		d := memory.NewDocument()
		keys := map[string]bool{}
		add := func(content string) {
			offered++
			if k := FoldFactContent(content); !keys[k] {
				keys[k] = true
				d.Facts = append(d.Facts, memory.Fact{ID: fmt.Sprintf("fact_%08x", len(d.Facts)), Content: content, Category: memory.CategoryContext,
					Confidence: 0.8, CreatedAt: at.Add(time.Duration(len(d.Facts)) * time.Hour), Source: fmt.Sprintf("c%d", ci)})
			}
		}
		for i, f := range facts {
			add(f)
			if i%4 == 3 {
				add(reextract(facts[i-2]))
			}
		}
		truth := slices.Clone(d.Facts)
		before += len(d.Facts)
		plain := d.Clone()
		start := time.Now()
		rep := Consolidate(d, at, memory.SourceMaintenance)
		elapsed += time.Since(start)
		after += len(d.Facts)
		for id := range rep.Merged {
			if !strings.HasPrefix(factByID(truth, id).Content, "The user said that") {
				natural++
			}
		}
		holder := func(id string) string {
			for {
				next, ok := rep.Merged[id]
				if !ok {
					return id
				}
				id = next
			}
		}
		search := func(doc *memory.Document, q string) []string {
			ix := lexical.New(lexical.Options{})
			for i, f := range doc.Facts {
				ix.Add(i, f.Content)
			}
			var ids []string
			for _, h := range ix.Search(q, topK, nil) {
				ids = append(ids, doc.Facts[h.ID].ID)
			}
			return ids
		}
		for _, f := range truth {
			if strings.HasPrefix(f.Content, "The user said that") {
				continue
			}
			q := paraphrase(f.Content)
			queries++
			if slices.Contains(search(plain, q), f.ID) {
				hitsBefore++
			}
			if slices.Contains(search(d, q), holder(f.ID)) {
				hitsAfter++
			}
		}
	}
	if before < 300 {
		t.Fatalf("only %d facts built; the measure needs at least 300", before)
	}
	t.Logf("LoCoMo: %d conversations, %d facts offered, %d stored before consolidation, %d after (%.1f%% fewer; %d merges between original statements); consolidation took %v in all",
		len(convs), offered, before, after, 100*float64(before-after)/float64(before), natural, elapsed)
	t.Logf("fact retrieval, top %d for a reworded query: %d of %d before (%.3f), %d of %d after (%.3f)",
		topK, hitsBefore, queries, float64(hitsBefore)/float64(queries), hitsAfter, queries, float64(hitsAfter)/float64(queries))
	if hitsAfter < hitsBefore {
		t.Errorf("retrieval after consolidation %d < before %d", hitsAfter, hitsBefore)
	}
	if after >= before {
		t.Errorf("consolidation merged nothing")
	}
}

func factByID(list []memory.Fact, id string) memory.Fact {
	for _, f := range list {
		if f.ID == id {
			return f
		}
	}
	return memory.Fact{}
}

// paraphrase rewords a fact into a query: its words in another order,
// every third one left out, without the speaker's name.
func paraphrase(s string) string {
	if _, rest, ok := strings.Cut(s, ": "); ok {
		s = rest
	}
	w := strings.Fields(s)
	var q []string
	for i := len(w) - 1; i >= 0; i-- {
		if i%3 != 1 {
			q = append(q, w[i])
		}
	}
	return strings.Join(q, " ") + "?"
}

// locomoDir is the LoCoMo development split of the shared eval tools,
// seen from this package's directory.
const locomoDir = "../../../shared/eval/data/locomo"
