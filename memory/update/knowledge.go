package update

import (
	"slices"

	"github.com/mnemo-mcp/mnemo/memory"
)

// knowledge adds the update's knowledge entries to the document's user
// and assistant knowledge lists. An entry whose content is already in its
// list is skipped. Over MaxKnowledge, entries are evicted oldest first,
// passing over corrections: a correction is evicted only when every entry
// of the list is a correction (then the oldest one). Evictions are noted
// in the report.
func (a *applier) knowledge(u *Update) {
	for _, f := range slices.Concat(a.doc.Knowledge, a.doc.AssistantKnowledge) {
		a.taken[f.ID] = true
	}
	a.doc.Knowledge = a.addKnowledge("user knowledge", a.doc.Knowledge, u.UserKnowledge)
	a.doc.AssistantKnowledge = a.addKnowledge("assistant knowledge", a.doc.AssistantKnowledge, u.AssistantKnowledge)
}

func (a *applier) addKnowledge(name string, list []memory.Fact, add []NewFact) []memory.Fact {
	for _, nf := range add {
		nf.Content = a.text(name, nf.Content)
		key := FoldFactContent(nf.Content)
		if key == "" || slices.ContainsFunc(list, func(f memory.Fact) bool { return FoldFactContent(f.Content) == key }) {
			continue
		}
		list = append(list, memory.Fact{ID: a.newID(), Content: nf.Content, Category: nf.Category, Confidence: nf.Confidence, CreatedAt: a.now, Source: a.opt.Source})
	}
	return EvictKnowledge(list, a.opt.MaxKnowledge, func(f memory.Fact) {
		a.ignore("%s over capacity %d: evicted %q", name, a.opt.MaxKnowledge, f.Content)
	})
}

// EvictKnowledge cuts list to capacity entries (0 means no bound): the oldest
// non-correction entry goes first; corrections go, oldest first, only when
// nothing else is left. The order of the entries kept is unchanged.
func EvictKnowledge(list []memory.Fact, capacity int, evicted func(memory.Fact)) []memory.Fact {
	for capacity > 0 && len(list) > capacity {
		victim := -1
		for i, f := range list {
			if f.Category != memory.CategoryCorrection && (victim < 0 || f.CreatedAt.Before(list[victim].CreatedAt)) {
				victim = i
			}
		}
		if victim < 0 {
			victim = 0
			for i, f := range list {
				if f.CreatedAt.Before(list[victim].CreatedAt) {
					victim = i
				}
			}
		}
		evicted(list[victim])
		list = slices.Delete(list, victim, victim+1)
	}
	return list
}
