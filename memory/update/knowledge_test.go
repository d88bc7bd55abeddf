package update

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mnemo-mcp/mnemo/memory"
)

func TestKnowledgeEvictionNeverDropsCorrectionFirst(t *testing.T) {
	base := time.Date(2026, 7, 1, 0, 0, 0, 0, time.UTC)
	k := func(id, cat string, age int) memory.Fact {
		return memory.Fact{ID: id, Content: id, Category: cat, CreatedAt: base.Add(time.Duration(age) * time.Hour)}
	}
	tests := []struct {
		name     string
		list     []memory.Fact
		capacity int
		want     []string // ids kept
		evicted  []string
	}{
		{"under capacity", []memory.Fact{k("a", memory.CategoryKnowledge, 0)}, 2, []string{"a"}, nil},
		{"oldest correction kept", []memory.Fact{k("c", memory.CategoryCorrection, 0), k("a", memory.CategoryKnowledge, 1), k("b", memory.CategoryKnowledge, 2)}, 2, []string{"c", "b"}, []string{"a"}},
		{"oldest plain goes", []memory.Fact{k("a", memory.CategoryKnowledge, 3), k("b", memory.CategoryKnowledge, 1), k("c", memory.CategoryCorrection, 2)}, 2, []string{"a", "c"}, []string{"b"}},
		{"corrections only when nothing else", []memory.Fact{k("c1", memory.CategoryCorrection, 1), k("a", memory.CategoryKnowledge, 5), k("c0", memory.CategoryCorrection, 0)}, 1, []string{"c1"}, []string{"a", "c0"}},
		{"no bound", []memory.Fact{k("a", memory.CategoryKnowledge, 0), k("b", memory.CategoryKnowledge, 1)}, 0, []string{"a", "b"}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var evicted []string
			got := EvictKnowledge(slices.Clone(tt.list), tt.capacity, func(f memory.Fact) { evicted = append(evicted, f.ID) })
			var ids []string
			for _, f := range got {
				ids = append(ids, f.ID)
			}
			if !slices.Equal(ids, tt.want) || !slices.Equal(evicted, tt.evicted) {
				t.Errorf("evictKnowledge() kept %v evicted %v, want kept %v evicted %v", ids, evicted, tt.want, tt.evicted)
			}
		})
	}
}

func TestApplyUpdateKnowledge(t *testing.T) {
	doc := memory.NewDocument()
	doc.Knowledge = []memory.Fact{{ID: "fact_00000001", Content: "Lives in Lisbon", Category: memory.CategoryKnowledge}}
	upd := &Update{
		UserKnowledge:      []NewFact{{Content: "lives in lisbon.", Category: memory.CategoryKnowledge}, {Content: "Uses Go 1.26, not 1.22", Category: memory.CategoryCorrection}, {Content: "Has a cat", Category: memory.CategoryKnowledge}},
		AssistantKnowledge: []NewFact{{Content: "The assistant recommended Alfama", Category: memory.CategoryKnowledge}},
	}
	n := 1
	rep := ApplyUpdate(doc, upd, ApplyOptions{MaxKnowledge: 2, NewID: func() string { n++; return fmt.Sprintf("fact_%08x", n) }, Now: time.Date(2026, 7, 1, 0, 0, 0, 0, time.UTC)})
	var got []string
	for _, f := range doc.Knowledge {
		got = append(got, f.Content)
	}
	if want := []string{"Uses Go 1.26, not 1.22", "Has a cat"}; !slices.Equal(got, want) {
		t.Errorf("Knowledge = %v, want %v (duplicate skipped, oldest plain entry evicted)", got, want)
	}
	if len(doc.AssistantKnowledge) != 1 || doc.AssistantKnowledge[0].ID == "" {
		t.Errorf("AssistantKnowledge = %+v, want the one entry with an id", doc.AssistantKnowledge)
	}
	if len(rep.Ignored) != 1 || !strings.Contains(rep.Ignored[0], "Lives in Lisbon") {
		t.Errorf("Ignored = %v, want the eviction noted", rep.Ignored)
	}
}
