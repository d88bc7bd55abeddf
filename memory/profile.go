package memory

import (
	"context"
	"slices"
	"sort"
	"strings"
)

// ProfileRequest is one get_user_profile call.
type ProfileRequest struct {
	UserID                    string
	AgentName                 string
	IncludeKnowledge          bool
	IncludeAssistantKnowledge bool
}

// ProfileResult is the scope's long-term memory document plus its
// injection-formatted text.
type ProfileResult struct {
	Scope              Scope           `json:"scope"`
	Version            string          `json:"version"`
	LastUpdated        string          `json:"last_updated,omitempty"`
	User               UserSections    `json:"user"`
	History            HistorySections `json:"history"`
	Facts              []Fact          `json:"facts"`
	Knowledge          []Fact          `json:"knowledge,omitempty"`
	AssistantKnowledge []Fact          `json:"assistant_knowledge,omitempty"`
	StoredTurns        int             `json:"stored_turns"`
	Pending            PendingInfo     `json:"pending"`
	// BuiltFromFacts lists the profile sections built from the stored
	// facts and knowledge, by category, newest first: with no extraction
	// model nothing writes the sections above, and the facts the host's
	// model passes are the profile.
	BuiltFromFacts  []ProfileSection `json:"built_from_facts,omitempty"`
	Empty           bool             `json:"empty"`
	Injection       string           `json:"injection"`
	InjectionTokens int              `json:"injection_tokens"`
	// Usage is the model and embedding usage of the scope by day, with
	// the daily token budget.
	Usage ScopeUsage `json:"usage"`
	// PastFacts are facts a later conversation replaced, with their
	// validity interval, newest last; RetiredFacts those retired for not
	// being confirmed, or merged into another (restorable).
	PastFacts    []Fact `json:"past_facts,omitempty"`
	RetiredFacts []Fact `json:"retired_facts,omitempty"`
}

// Profile returns what is known about the user of a scope.
func (s *Service) Profile(ctx context.Context, req ProfileRequest) (*ProfileResult, error) {
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
	res := &ProfileResult{
		Scope:        scope,
		Version:      d.Version,
		User:         d.User,
		History:      d.History,
		Facts:        append([]Fact{}, d.Facts...),
		StoredTurns:  len(st.turns),
		Pending:      s.pendingInfo(st, ""),
		Usage:        s.usageOf(scope, d),
		PastFacts:    slices.Clone(d.PastFacts),
		RetiredFacts: slices.Clone(d.RetiredFacts),
	}
	if !d.LastUpdated.IsZero() {
		res.LastUpdated = d.LastUpdated.Format("2006-01-02T15:04:05Z07:00")
	}
	if req.IncludeKnowledge {
		res.Knowledge = append([]Fact{}, d.Knowledge...)
	}
	if req.IncludeAssistantKnowledge {
		res.AssistantKnowledge = append([]Fact{}, d.AssistantKnowledge...)
	}
	sections := profileSections(d)
	res.Empty = len(sections) == 0 && len(d.Facts) == 0 && len(d.Knowledge) == 0 && len(d.AssistantKnowledge) == 0
	if len(sections) == 0 && s.llm == nil {
		res.BuiltFromFacts = factProfile(d)
		if len(res.BuiltFromFacts) > 0 {
			// The facts are the sections now: not listed twice.
			in := injectionInput{Profile: res.BuiltFromFacts, Budget: s.cfg.MaxInjectionTokens}
			if req.IncludeAssistantKnowledge {
				in.AssistantKnowledge = newestFirst(d.AssistantKnowledge)
			}
			res.Injection, res.InjectionTokens = s.buildInjection(st, in)
			return res, nil
		}
	}
	hits := make([]FactHit, len(d.Facts))
	for i, f := range d.Facts {
		hits[i] = FactHit{Fact: f, Score: f.Confidence}
	}
	sort.SliceStable(hits, func(i, j int) bool { return hits[i].Confidence > hits[j].Confidence })
	in := injectionInput{Profile: sections, Facts: hits, Budget: s.cfg.MaxInjectionTokens}
	if req.IncludeKnowledge {
		in.UserKnowledge = newestFirst(d.Knowledge)
	}
	if req.IncludeAssistantKnowledge {
		in.AssistantKnowledge = newestFirst(d.AssistantKnowledge)
	}
	res.Injection, res.InjectionTokens = s.buildInjection(st, in)
	return res, nil
}

// newestFirst lists knowledge entries for the injection, the newest
// first: when the budget is short, the latest knowledge is kept.
func newestFirst(list []Fact) []FactHit {
	out := make([]FactHit, len(list))
	for i, f := range list {
		out[len(list)-1-i] = FactHit{Fact: f}
	}
	return out
}

// factSectionNames name the sections factProfile builds, by category.
var factSectionNames = map[string]string{
	CategoryPreference: "Preferences (built from facts)",
	CategoryKnowledge:  "What the user knows (built from facts)",
	CategoryContext:    "Context (built from facts)",
	CategoryBehavior:   "How the user works (built from facts)",
	CategoryGoal:       "Goals (built from facts)",
	CategoryCorrection: "Corrections (built from facts)",
}

// factProfile builds profile sections from the document's facts, one per
// category in the documented order, each listing its facts newest first
// (the injection's budget cuts the oldest), then one of the knowledge
// entries. Corrections say what went wrong.
func factProfile(d *Document) []ProfileSection {
	var out []ProfileSection
	for _, cat := range Categories {
		var facts []Fact
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
		out = append(out, ProfileSection{Name: factSectionNames[cat], Summary: strings.Join(parts, "; ") + ".", UpdatedAt: facts[0].CreatedAt})
	}
	if len(d.Knowledge) > 0 {
		parts := make([]string, 0, len(d.Knowledge))
		for _, k := range newestFirst(d.Knowledge) {
			parts = append(parts, strings.TrimRight(k.Content, ". "))
		}
		out = append(out, ProfileSection{Name: "Knowledge (built from facts)", Summary: strings.Join(parts, "; ") + "."})
	}
	return out
}
