package update

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mnemo-mcp/mnemo/memory"
	"github.com/mnemo-mcp/mnemo/memory/tiktoken"
	"github.com/mnemo-mcp/mnemo/prompts"
)

func TestParseConsolidation(t *testing.T) {
	tests := []struct {
		name      string
		reply     string
		want      []ConsolidateMerge
		notes     int
		wantError bool
	}{
		{"plain", `{"merges":[{"factIds":["a","b"],"content":"Uses  Go\n"}]}`, []ConsolidateMerge{{[]string{"a", "b"}, "Uses Go"}}, 0, false},
		{"around prose and thinking", "<think>{\"merges\":[{\"factIds\":[\"x\",\"y\"],\"content\":\"draft\"}]}</think>Here: {\"merges\":[{\"factIds\":[\"a\",\"a\",\"b\"],\"content\":\"Uses Go\"}]} done",
			[]ConsolidateMerge{{[]string{"a", "b"}, "Uses Go"}}, 0, false},
		{"empty", `{"merges":[]}`, nil, 0, false},
		{"null", `{"merges":null}`, nil, 0, false},
		{"bad entries", `{"merges":[1,{"factIds":["a"],"content":"x"},{"factIds":["a","b"],"content":""},{"factIds":["a",2,"b"],"content":"ok"}]}`,
			[]ConsolidateMerge{{[]string{"a", "b"}, "ok"}}, 3, false},
		{"too long", `{"merges":[{"factIds":["a","b"],"content":"` + strings.Repeat("x", memory.UpdateMaxContentRunes+1) + `"}]}`, nil, 1, false},
		{"not a list", `{"merges":{"factIds":["a","b"]}}`, nil, 0, true},
		{"truncated", `{"merges":[{"factIds":["a","b"],"content":"Uses`, nil, 0, true},
		{"prose", `they are all the same`, nil, 0, true},
		{"update reply", `{"newFacts":[],"factsToRemove":[]}`, nil, 0, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, notes, err := ParseConsolidation(tt.reply)
			if tt.wantError {
				if !errors.Is(err, ErrBadReply) {
					t.Errorf("ParseConsolidation() error = %v, want ErrBadReply", err)
				}
				return
			}
			if err != nil {
				t.Fatalf("ParseConsolidation() = %v", err)
			}
			if !slices.EqualFunc(got, tt.want, func(a, b ConsolidateMerge) bool { return a.Content == b.Content && slices.Equal(a.FactIDs, b.FactIDs) }) {
				t.Errorf("ParseConsolidation() = %+v, want %+v", got, tt.want)
			}
			if len(notes) != tt.notes {
				t.Errorf("notes = %q, want %d", notes, tt.notes)
			}
		})
	}
}

func FuzzParseConsolidation(f *testing.F) {
	f.Add(`{"merges":[{"factIds":["a","b"],"content":"Uses Go"}]}`)
	f.Add(`{"merges":[{"factIds":["a",`)
	f.Add(`<think>{"merges":[]}</think>{"merges":null}`)
	f.Fuzz(func(t *testing.T, reply string) {
		merges, _, err := ParseConsolidation(reply)
		if err != nil && len(merges) > 0 {
			t.Fatalf("merges with an error")
		}
		for _, m := range merges {
			if len(m.FactIDs) < 2 || m.Content == "" || len(m.FactIDs) > MaxConsolidateClusterFacts {
				t.Fatalf("merge %+v breaks the bounds", m)
			}
		}
	})
}

func TestApplyConsolidation(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	base := func() *memory.Document {
		d := memory.NewDocument()
		d.Facts = []memory.Fact{
			{ID: "a", Content: "Uses Go for backend services", Category: memory.CategoryPreference, Confidence: 0.8, CreatedAt: t0, Source: "t1"},
			{ID: "b", Content: "Writes backend services in Go", Category: memory.CategoryContext, Confidence: 0.9, CreatedAt: t0.Add(oneDay), Source: "t2"},
			{ID: "c", Content: "Never panic in Go services", Category: memory.CategoryCorrection, Confidence: 0.95, CreatedAt: t0, Source: "t3", SourceError: "panicked"},
			{ID: "d", Content: "Lives in Lisbon", Category: memory.CategoryContext, Confidence: 0.9, CreatedAt: t0, Source: "t4"},
		}
		return d
	}
	shown := func(d *memory.Document, groups ...[]string) [][]memory.Fact {
		var out [][]memory.Fact
		for _, g := range groups {
			var c []memory.Fact
			for _, id := range g {
				c = append(c, d.Facts[slices.IndexFunc(d.Facts, func(f memory.Fact) bool { return f.ID == id })])
			}
			out = append(out, c)
		}
		return out
	}
	tests := []struct {
		name     string
		groups   [][]string
		merges   []ConsolidateMerge
		edit     func(d *memory.Document)
		merged   map[string]string
		notes    int
		wantText string
	}{
		{"merge", [][]string{{"a", "b"}}, []ConsolidateMerge{{[]string{"a", "b"}, "Writes backend services in Go"}}, nil, map[string]string{"a": "b"}, 0, "Writes backend services in Go"},
		{"correction refused", [][]string{{"a", "b", "c"}}, []ConsolidateMerge{{[]string{"c", "a"}, "x"}}, nil, map[string]string{}, 1, ""},
		{"across groups refused", [][]string{{"a"}, {"b"}}, []ConsolidateMerge{{[]string{"a", "b"}, "x"}}, nil, map[string]string{}, 1, ""},
		{"not shown refused", [][]string{{"a", "b"}}, []ConsolidateMerge{{[]string{"a", "d"}, "x"}}, nil, map[string]string{}, 1, ""},
		{"changed since refused", [][]string{{"a", "b"}}, []ConsolidateMerge{{[]string{"a", "b"}, "x"}},
			func(d *memory.Document) { d.Facts[0].Content = "Uses Go 1.26" }, map[string]string{}, 1, ""},
		{"a fact merged once", [][]string{{"a", "b", "d"}}, []ConsolidateMerge{{[]string{"a", "b"}, "Writes Go"}, {[]string{"a", "d"}, "x"}}, nil, map[string]string{"a": "b"}, 1, "Writes Go"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := base()
			groups := shown(d, tt.groups...)
			if tt.edit != nil {
				tt.edit(d)
			}
			before := len(d.Facts)
			rep, notes := ApplyConsolidation(d, tt.merges, ApplyConsolidationOptions{Clusters: groups, Now: t0.Add(30 * oneDay)})
			if !mapsEqual(rep.Merged, tt.merged) {
				t.Errorf("merged = %v, want %v", rep.Merged, tt.merged)
			}
			if len(notes) != tt.notes {
				t.Errorf("notes = %q, want %d", notes, tt.notes)
			}
			if len(d.Facts) != before-len(tt.merged) || len(d.RetiredFacts) != len(tt.merged) {
				t.Errorf("%d facts, %d retired after %d merges", len(d.Facts), len(d.RetiredFacts), len(tt.merged))
			}
			if tt.wantText == "" {
				return
			}
			f := d.Facts[slices.IndexFunc(d.Facts, func(f memory.Fact) bool { return f.ID == "b" })]
			if f.Content != tt.wantText || f.Confidence != 0.9 || !f.CreatedAt.Equal(t0) || !slices.Equal(f.AllSources(), []string{"t2", "t1"}) {
				t.Errorf("survivor = %+v", f)
			}
		})
	}
}

func mapsEqual(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}

func TestConsolidationClustersBounded(t *testing.T) {
	d := memory.NewDocument()
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	topics := []string{"garden", "kitchen", "studio", "office", "garage", "attic", "cellar", "balcony", "porch", "shed"}
	for i, topic := range topics {
		for j, verb := range []string{"Grows tomatoes and basil in the", "Grows tomatoes and basil and mint in the", "Grows tomatoes and basil and chili in the",
			"Grows tomatoes and basil and thyme in the", "Grows tomatoes and basil and sage in the", "Grows tomatoes and basil and dill in the", "Grows tomatoes and basil and leek in the"} {
			d.Facts = append(d.Facts, memory.Fact{ID: topic + string(rune('a'+j)), Content: verb + " " + topic, Category: memory.CategoryContext, Confidence: 0.9, CreatedAt: t0.Add(time.Duration(i*10+j) * time.Hour)})
		}
	}
	d.Facts = append(d.Facts, memory.Fact{ID: "fix", Content: "Grows tomatoes and basil in the garden", Category: memory.CategoryCorrection, Confidence: 0.99, CreatedAt: t0})
	clusters := ConsolidationClusters(d, time.Time{}, MaxConsolidateClusters, MaxConsolidateClusterFacts)
	if len(clusters) != MaxConsolidateClusters {
		t.Errorf("%d clusters, want %d", len(clusters), MaxConsolidateClusters)
	}
	seen := map[int]bool{}
	for _, c := range clusters {
		if len(c) < 2 || len(c) > MaxConsolidateClusterFacts {
			t.Errorf("cluster of %d facts", len(c))
		}
		for _, i := range c {
			if seen[i] || d.Facts[i].Category == memory.CategoryCorrection {
				t.Errorf("fact %s twice or a correction among others", d.Facts[i].ID)
			}
			seen[i] = true
		}
	}
	if got := ConsolidationClusters(d, t0.Add(1000*time.Hour), MaxConsolidateClusters, MaxConsolidateClusterFacts); len(got) != 0 {
		t.Errorf("clusters of facts unchanged since the last pass = %d, want none", len(got))
	}
}

// TestConsolidationPassLoCoMo measures what the pass would send on the
// LoCoMo memory after the automatic merge: groups, facts and prompt
// tokens per memory, within the bounds.
func TestConsolidationPassLoCoMo(t *testing.T) {
	counter := rulesCounter(t)
	var memories, groups, facts, maxTokens, totalFacts int
	for ci, list := range locomoSpeakerFacts(t) {
		at := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
		d := memory.NewDocument()
		for i, c := range list {
			d.Facts = append(d.Facts, memory.Fact{ID: fmt.Sprintf("fact_%02d%06x", ci, i), Content: c, Category: memory.CategoryContext, Confidence: 0.8,
				CreatedAt: at.Add(time.Duration(i) * time.Hour)})
		}
		Consolidate(d, at, memory.SourceMaintenance)
		totalFacts += len(d.Facts)
		clusters := ConsolidationClusters(d, time.Time{}, MaxConsolidateClusters, MaxConsolidateClusterFacts)
		if len(clusters) > MaxConsolidateClusters {
			t.Fatalf("%d groups, over the bound", len(clusters))
		}
		data := prompts.ConsolidateData{}
		for _, c := range clusters {
			if len(c) < 2 || len(c) > MaxConsolidateClusterFacts {
				t.Fatalf("group of %d facts", len(c))
			}
			var pc prompts.ConsolidateCluster
			for _, i := range c {
				pc.Facts = append(pc.Facts, prompts.ConsolidateFact{ID: d.Facts[i].ID, Content: d.Facts[i].Content, Category: d.Facts[i].Category, Confidence: d.Facts[i].Confidence})
			}
			data.Clusters = append(data.Clusters, pc)
			facts += len(c)
		}
		memories++
		groups += len(clusters)
		if len(clusters) > 0 {
			p, err := prompts.Consolidate(data)
			if err != nil {
				t.Fatal(err)
			}
			maxTokens = max(maxTokens, counter.Count(p))
		}
	}
	t.Logf("LoCoMo: %d memories, %d facts after the automatic merge; the pass would send %d groups holding %d facts, at most %d prompt tokens per memory",
		memories, totalFacts, groups, facts, maxTokens)
}

const oneDay = 24 * time.Hour

func rulesCounter(tb testing.TB) memory.TokenCounter {
	tb.Helper()
	c, err := tiktoken.New("cl100k_base")
	if err != nil {
		tb.Fatalf("tiktoken.New() = %v", err)
	}
	return c
}
