package engine

import (
	"context"
	"slices"
	"sort"
	"strings"

	"github.com/mnemo-mcp/mnemo/memory"
	"github.com/mnemo-mcp/mnemo/memory/recall"
)

// Profile returns what is known about the user of a scope.
func (s *Service) Profile(ctx context.Context, req memory.ProfileRequest) (*memory.ProfileResult, error) {
	scope, err := s.resolveScope(req.UserID, req.AgentName)
	if err != nil {
		return nil, err
	}
	st, err := s.loadedState(ctx, scope)
	if err != nil {
		return nil, err
	}
	defer st.mu.Unlock()
	d := st.doc
	res := &memory.ProfileResult{
		Scope:        scope,
		Version:      d.Version,
		User:         d.User,
		History:      d.History,
		Facts:        append([]memory.Fact{}, d.Facts...),
		StoredTurns:  len(st.Turns),
		Pending:      s.pendingInfo(st, ""),
		Usage:        s.usageOf(scope, d),
		PastFacts:    slices.Clone(d.PastFacts),
		RetiredFacts: slices.Clone(d.RetiredFacts),
	}
	if !d.LastUpdated.IsZero() {
		res.LastUpdated = d.LastUpdated.Format("2006-01-02T15:04:05Z07:00")
	}
	if req.IncludeKnowledge {
		res.Knowledge = append([]memory.Fact{}, d.Knowledge...)
	}
	if req.IncludeAssistantKnowledge {
		res.AssistantKnowledge = append([]memory.Fact{}, d.AssistantKnowledge...)
	}
	sections := profileSections(d)
	res.Empty = len(sections) == 0 && len(d.Facts) == 0 && len(d.Knowledge) == 0 && len(d.AssistantKnowledge) == 0
	if len(sections) == 0 && s.llm == nil {
		res.BuiltFromFacts = factProfile(d)
		if len(res.BuiltFromFacts) > 0 {
			// The facts are the sections now: not listed twice.
			in := recall.InjectionInput{Profile: res.BuiltFromFacts, Budget: s.cfg.MaxInjectionTokens}
			if req.IncludeAssistantKnowledge {
				in.AssistantKnowledge = newestFirst(d.AssistantKnowledge)
			}
			res.Injection, res.InjectionTokens = recall.BuildInjection(s.tokenCounter(st), in)
			return res, nil
		}
	}
	hits := make([]memory.FactHit, len(d.Facts))
	for i, f := range d.Facts {
		hits[i] = memory.FactHit{Fact: f, Score: f.Confidence}
	}
	sort.SliceStable(hits, func(i, j int) bool { return hits[i].Confidence > hits[j].Confidence })
	in := recall.InjectionInput{Profile: sections, Facts: hits, Budget: s.cfg.MaxInjectionTokens}
	if req.IncludeKnowledge {
		in.UserKnowledge = newestFirst(d.Knowledge)
	}
	if req.IncludeAssistantKnowledge {
		in.AssistantKnowledge = newestFirst(d.AssistantKnowledge)
	}
	res.Injection, res.InjectionTokens = recall.BuildInjection(s.tokenCounter(st), in)
	return res, nil
}

// newestFirst lists knowledge entries for the injection, the newest
// first: when the budget is short, the latest knowledge is kept.
func newestFirst(list []memory.Fact) []memory.FactHit {
	out := make([]memory.FactHit, len(list))
	for i, f := range list {
		out[len(list)-1-i] = memory.FactHit{Fact: f}
	}
	return out
}

// factSectionNames name the sections factProfile builds, by category.
var factSectionNames = map[string]string{
	memory.CategoryPreference: "Preferences (built from facts)",
	memory.CategoryKnowledge:  "What the user knows (built from facts)",
	memory.CategoryContext:    "Context (built from facts)",
	memory.CategoryBehavior:   "How the user works (built from facts)",
	memory.CategoryGoal:       "Goals (built from facts)",
	memory.CategoryCorrection: "Corrections (built from facts)",
}

// factProfile builds profile sections from the document's facts, one per
// category in the documented order, each listing its facts newest first
// (the injection's budget cuts the oldest), then one of the knowledge
// entries. Corrections say what went wrong.
func factProfile(d *memory.Document) []memory.ProfileSection {
	var out []memory.ProfileSection
	for _, cat := range memory.Categories {
		var facts []memory.Fact
		for _, f := range d.Facts {
			if f.Category == cat {
				facts = append(facts, f)
			}
		}
		if len(facts) == 0 {
			continue
		}
		sort.SliceStable(facts, func(i, j int) bool { return facts[i].CreatedAt.After(facts[j].CreatedAt) })
		parts := make([]string, len(facts))
		for i, f := range facts {
			parts[i] = strings.TrimRight(f.Content, ". ")
			if f.SourceError != "" {
				parts[i] += " (not: " + strings.TrimRight(f.SourceError, ". ") + ")"
			}
		}
		out = append(out, memory.ProfileSection{Name: factSectionNames[cat], Summary: strings.Join(parts, "; ") + ".", UpdatedAt: facts[0].CreatedAt})
	}
	if len(d.Knowledge) > 0 {
		parts := make([]string, 0, len(d.Knowledge))
		for _, k := range newestFirst(d.Knowledge) {
			parts = append(parts, strings.TrimRight(k.Content, ". "))
		}
		out = append(out, memory.ProfileSection{Name: "Knowledge (built from facts)", Summary: strings.Join(parts, "; ") + "."})
	}
	return out
}
