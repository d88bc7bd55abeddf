package update

import (
	"cmp"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/mnemo-mcp/mnemo/memory"
)

// llmClusterSimilarity is the similarity (factSimilarity: the Dice
// coefficient of index terms, same numbers and negations) at and above
// which two facts are shown to the model together: below
// mergeSimilarity, so the model judges what the rule left apart. Facts
// that differ in a number or a negation are never shown together.
const llmClusterSimilarity = 0.5

// Bounds of one consolidation pass with the model.
const (
	MaxConsolidateClusters     = 8
	MaxConsolidateClusterFacts = 6
	consolidateMaxMerges       = 64
)

// ConsolidationClusters groups the facts of d that look alike, as indexes
// into d.Facts: at most maxClusters groups of 2 to maxFacts facts, of one
// kind (corrections or not). A group holds at least one fact created or
// confirmed after since, so a group the model kept apart is not sent
// again until one of its facts changes. Facts are taken by confidence
// (highest first) then age (oldest first).
func ConsolidationClusters(d *memory.Document, since time.Time, maxClusters, maxFacts int) [][]int {
	n := len(d.Facts)
	if n < 2 || maxClusters <= 0 || maxFacts < 2 {
		return nil
	}
	terms := make([]factTerms, n)
	byTerm := map[string][]int{}
	for i, f := range d.Facts {
		terms[i] = TermsOf(f.Content)
		for _, t := range terms[i].terms {
			byTerm[t] = append(byTerm[t], i)
		}
	}
	fresh := func(i int) bool {
		f := &d.Facts[i]
		return f.CreatedAt.After(since) || f.Confirmed().After(since)
	}
	order := make([]int, n)
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(i, j int) int {
		if c := cmp.Compare(d.Facts[j].Confidence, d.Facts[i].Confidence); c != 0 {
			return c
		}
		return d.Facts[i].CreatedAt.Compare(d.Facts[j].CreatedAt)
	})
	used := make([]bool, n)
	var clusters [][]int
	for _, i := range order {
		if used[i] || len(clusters) == maxClusters {
			continue
		}
		type cand struct {
			j   int
			sim float64
		}
		var cands []cand
		seen := map[int]bool{i: true}
		for _, t := range terms[i].terms {
			for _, j := range byTerm[t] {
				if seen[j] || used[j] {
					continue
				}
				seen[j] = true
				if !mergeable(d.Facts[i].Category, d.Facts[j].Category) {
					continue
				}
				if sim := factSimilarity(terms[i], terms[j]); sim >= llmClusterSimilarity {
					cands = append(cands, cand{j, sim})
				}
			}
		}
		if len(cands) == 0 {
			continue
		}
		slices.SortFunc(cands, func(a, b cand) int {
			if c := cmp.Compare(b.sim, a.sim); c != 0 {
				return c
			}
			return cmp.Compare(a.j, b.j)
		})
		c := []int{i}
		for _, x := range cands[:min(len(cands), maxFacts-1)] {
			c = append(c, x.j)
		}
		if !slices.ContainsFunc(c, fresh) {
			continue
		}
		for _, j := range c {
			used[j] = true
		}
		clusters = append(clusters, c)
	}
	return clusters
}

// ConsolidateMerge is one merge the model asked for: the facts FactIDs
// are one fact, worded Content.
type ConsolidateMerge struct {
	FactIDs []string
	Content string
}

// ParseConsolidation reads the model's reply to the consolidation prompt:
// the first JSON object with "merges" (reasoning traces and text around it
// ignored). Entries that are not a merge of at least two fact ids with a
// content are left out and described in the notes. A reply without such
// an object, truncated or over the size limit is an error wrapping
// ErrBadReply.
func ParseConsolidation(reply string) ([]ConsolidateMerge, []string, error) {
	obj, err := FindObject(reply, "merges")
	if err != nil {
		return nil, nil, err
	}
	var raw []json.RawMessage
	if IsJSONNull(obj["merges"]) {
		return nil, nil, nil
	}
	if jsonKind(obj["merges"]) != '[' || json.Unmarshal(obj["merges"], &raw) != nil {
		return nil, nil, fmt.Errorf("parse reply: \"merges\" is not a list: %w", ErrBadReply)
	}
	var merges []ConsolidateMerge
	var notes []string
	for i, r := range raw {
		if len(merges) == consolidateMaxMerges {
			notes = append(notes, fmt.Sprintf("merges beyond the first %d ignored", consolidateMaxMerges))
			break
		}
		var e struct {
			FactIDs []json.RawMessage `json:"factIds"`
			Content json.RawMessage   `json:"content"`
		}
		if jsonKind(r) != '{' || json.Unmarshal(r, &e) != nil {
			notes = append(notes, fmt.Sprintf("merge %d is not an object", i+1))
			continue
		}
		content, ok := jsonString(e.Content)
		content, _ = memory.CleanText(strings.Join(strings.Fields(content), " "))
		switch {
		case !ok || content == "":
			notes = append(notes, fmt.Sprintf("merge %d has no content", i+1))
			continue
		case utf8.RuneCountInString(content) > memory.UpdateMaxContentRunes:
			notes = append(notes, fmt.Sprintf("merge %d: content is over %d characters", i+1, memory.UpdateMaxContentRunes))
			continue
		}
		var ids []string
		for _, rid := range e.FactIDs {
			if id, ok := jsonString(rid); ok && id != "" && !slices.Contains(ids, id) && len(ids) < MaxConsolidateClusterFacts {
				ids = append(ids, id)
			}
		}
		if len(ids) < 2 {
			notes = append(notes, fmt.Sprintf("merge %d names fewer than two facts", i+1))
			continue
		}
		merges = append(merges, ConsolidateMerge{FactIDs: ids, Content: content})
	}
	return merges, notes, nil
}

// ApplyConsolidationOptions are the rules of applying a consolidation
// reply.
type ApplyConsolidationOptions struct {
	// Clusters are the groups the model was shown, as fact ids with the
	// content it saw: a merge must stay within one group, and a fact whose
	// content changed since is not merged.
	Clusters [][]memory.Fact
	Now      time.Time
	Source   string
	// RedactSecrets redacts secrets in the merged contents.
	RedactSecrets bool
}

// ApplyConsolidation applies merges to d in place. For each merge, the
// fact of highest confidence (then the oldest) survives, absorbs the
// others (highest confidence, earliest creation, every source) and takes
// the model's wording, with a FactUpdated event when the wording changed;
// each other fact moves to RetiredFacts with a FactMerged event. A merge
// that crosses groups, names a fact that is gone or changed, or mixes a
// correction with a non-correction is left out and described in the notes.
func ApplyConsolidation(d *memory.Document, merges []ConsolidateMerge, opt ApplyConsolidationOptions) (ConsolidateReport, []string) {
	if opt.Source == "" {
		opt.Source = memory.SourceConsolidation
	}
	rep := ConsolidateReport{Merged: map[string]string{}}
	var notes []string
	group := map[string]int{}
	seen := map[string]string{}
	for g, c := range opt.Clusters {
		for _, f := range c {
			group[f.ID] = g
			seen[f.ID] = f.Content
		}
	}
	red := memory.Redactor{On: opt.RedactSecrets}
	done := map[string]bool{}
	for n, m := range merges {
		var idx []int
		why := ""
		for _, id := range m.FactIDs {
			i := slices.IndexFunc(d.Facts, func(f memory.Fact) bool { return f.ID == id })
			g, shown := group[id]
			switch {
			case !shown:
				why = fmt.Sprintf("fact %s was not shown", id)
			case g != group[m.FactIDs[0]]:
				why = fmt.Sprintf("fact %s is in another group", id)
			case i < 0 || done[id]:
				why = fmt.Sprintf("fact %s is gone", id)
			case d.Facts[i].Content != seen[id]:
				why = fmt.Sprintf("fact %s changed since", id)
			case len(idx) > 0 && !mergeable(d.Facts[idx[0]].Category, d.Facts[i].Category):
				why = "a correction is only merged with corrections"
			}
			if why != "" {
				break
			}
			idx = append(idx, i)
		}
		if why != "" {
			notes = append(notes, fmt.Sprintf("merge %d ignored: %s", n+1, why))
			continue
		}
		slices.SortFunc(idx, func(a, b int) int {
			if c := cmp.Compare(d.Facts[b].Confidence, d.Facts[a].Confidence); c != 0 {
				return c
			}
			return d.Facts[a].CreatedAt.Compare(d.Facts[b].CreatedAt)
		})
		keep := &d.Facts[idx[0]]
		kt := TermsOf(keep.Content)
		var ids []string
		for _, j := range idx[1:] {
			o := d.Facts[j]
			absorb(keep, kt, o, TermsOf(o.Content))
			kt = TermsOf(keep.Content)
			done[o.ID] = true
			ids = append(ids, o.ID)
		}
		before := seen[keep.ID]
		keep.Content = red.Text(m.Content)
		if keep.Category != memory.CategoryCorrection {
			keep.SourceError = ""
		}
		if keep.Content != before {
			d.AddFactEvent(memory.FactEvent{FactID: keep.ID, Event: memory.FactUpdated, At: opt.Now, Source: opt.Source, Content: keep.Content,
				Reason: fmt.Sprintf("reworded by the consolidation pass, merging %s", strings.Join(ids, ", "))})
		}
		for _, j := range idx[1:] {
			o := d.Facts[j]
			rep.Merged[o.ID] = keep.ID
			d.RetiredFacts = archive(d.RetiredFacts, o, MaxRetiredFacts)
			d.AddFactEvent(memory.FactEvent{FactID: o.ID, Event: memory.FactMerged, At: opt.Now, Source: opt.Source, Into: keep.ID,
				Reason: fmt.Sprintf("the same fact as %s (consolidation pass), merged into it", keep.ID), Content: o.Content})
		}
	}
	if len(done) > 0 {
		d.Facts = slices.DeleteFunc(d.Facts, func(f memory.Fact) bool { return done[f.ID] })
	}
	return rep, notes
}
