package memory

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/mnemo-mcp/mnemo/prompts"
)

// Consolidation with a language model: words alone miss near-duplicates
// that say the same thing differently ("uses Go" / "prefers Go for
// backend work"). Once a day per scope, in the update run after the
// regular update, the facts that look alike at a lower similarity than
// the automatic merge (llmClusterSimilarity) are grouped — at most
// MaxConsolidateClusters groups of at most MaxConsolidateClusterFacts —
// and the model is asked which of each group are one fact and for its
// wording (prompts.Consolidate). Its reply is parsed like the update
// reply and applied by the rules of the automatic merge: the survivor
// keeps the highest confidence, the earliest creation and every source;
// each fact merged away goes to RetiredFacts (restorable) with a
// FactMerged event; a correction is never merged with a non-correction.
// The call is counted in the scope's usage and skipped when the daily
// token budget is spent; the save keeps the previous version for
// rollback.

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

// SourceConsolidation is the source of the events of the consolidation
// pass with the model.
const SourceConsolidation = "consolidation"

// consolidationClusters groups the facts of d that look alike, as indexes
// into d.Facts: at most maxClusters groups of 2 to maxFacts facts, of one
// kind (corrections or not). A group holds at least one fact created or
// confirmed after since, so a group the model kept apart is not sent
// again until one of its facts changes. Facts are taken by confidence
// (highest first) then age (oldest first).
func consolidationClusters(d *Document, since time.Time, maxClusters, maxFacts int) [][]int {
	n := len(d.Facts)
	if n < 2 || maxClusters <= 0 || maxFacts < 2 {
		return nil
	}
	terms := make([]factTerms, n)
	byTerm := map[string][]int{}
	for i, f := range d.Facts {
		terms[i] = termsOf(f.Content)
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
	obj, err := findObject(reply, "merges")
	if err != nil {
		return nil, nil, err
	}
	var raw []json.RawMessage
	if isJSONNull(obj["merges"]) {
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
		content, _ = cleanText(strings.Join(strings.Fields(content), " "))
		switch {
		case !ok || content == "":
			notes = append(notes, fmt.Sprintf("merge %d has no content", i+1))
			continue
		case utf8.RuneCountInString(content) > updateMaxContentRunes:
			notes = append(notes, fmt.Sprintf("merge %d: content is over %d characters", i+1, updateMaxContentRunes))
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
	Clusters [][]Fact
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
func ApplyConsolidation(d *Document, merges []ConsolidateMerge, opt ApplyConsolidationOptions) (ConsolidateReport, []string) {
	if opt.Source == "" {
		opt.Source = SourceConsolidation
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
	red := redactor{on: opt.RedactSecrets}
	done := map[string]bool{}
	for n, m := range merges {
		var idx []int
		why := ""
		for _, id := range m.FactIDs {
			i := slices.IndexFunc(d.Facts, func(f Fact) bool { return f.ID == id })
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
		kt := termsOf(keep.Content)
		var ids []string
		for _, j := range idx[1:] {
			o := d.Facts[j]
			absorb(keep, kt, o, termsOf(o.Content))
			kt = termsOf(keep.Content)
			done[o.ID] = true
			ids = append(ids, o.ID)
		}
		before := seen[keep.ID]
		keep.Content = red.text(m.Content)
		if keep.Category != CategoryCorrection {
			keep.SourceError = ""
		}
		if keep.Content != before {
			d.AddFactEvent(FactEvent{FactID: keep.ID, Event: FactUpdated, At: opt.Now, Source: opt.Source, Content: keep.Content,
				Reason: fmt.Sprintf("reworded by the consolidation pass, merging %s (was %q)", strings.Join(ids, ", "), before)})
		}
		for _, j := range idx[1:] {
			o := d.Facts[j]
			rep.Merged[o.ID] = keep.ID
			d.RetiredFacts = archive(d.RetiredFacts, o, MaxRetiredFacts)
			d.AddFactEvent(FactEvent{FactID: o.ID, Event: FactMerged, At: opt.Now, Source: opt.Source, Into: keep.ID,
				Reason: fmt.Sprintf("the same fact as %s (consolidation pass), merged into it", keep.ID), Content: o.Content})
		}
	}
	if len(done) > 0 {
		d.Facts = slices.DeleteFunc(d.Facts, func(f Fact) bool { return done[f.ID] })
	}
	return rep, notes
}

// errConsolidationSkipped means the consolidation pass with the model did
// not run: done today already, nothing to group, or no model.
var errConsolidationSkipped = errors.New("consolidation pass skipped")

// ConsolidateWithLLM runs the consolidation pass with the model over a
// scope's memory, at most once a day (UTC): the groups of similar facts
// are sent in one call and the merges the model asks for are saved. It
// does nothing when there is no model, the pass ran today or nothing
// looks alike; a spent daily budget is an error wrapping ErrBudgetSpent,
// a failed call or an unusable reply an error (a bad reply still counts
// as today's pass). The caller holds the scope's update lock.
func (s *Service) consolidateWithLLM(ctx context.Context, scope Scope) (ConsolidateReport, error) {
	if s.llm == nil {
		return ConsolidateReport{}, errConsolidationSkipped
	}
	doc, err := s.store.LoadDocument(ctx, scope)
	if err != nil {
		return ConsolidateReport{}, fmt.Errorf("load memory for consolidation: %w", err)
	}
	now := s.now().UTC()
	if usageDay(doc.LLMConsolidatedAt) == usageDay(now) && !doc.LLMConsolidatedAt.IsZero() {
		return ConsolidateReport{}, errConsolidationSkipped
	}
	idx := consolidationClusters(doc, doc.LLMConsolidatedAt, MaxConsolidateClusters, MaxConsolidateClusterFacts)
	if len(idx) == 0 {
		return ConsolidateReport{}, errConsolidationSkipped
	}
	clusters := make([][]Fact, len(idx))
	data := prompts.ConsolidateData{Clusters: make([]prompts.ConsolidateCluster, len(idx))}
	for g, c := range idx {
		for _, i := range c {
			f := doc.Facts[i]
			clusters[g] = append(clusters[g], f)
			data.Clusters[g].Facts = append(data.Clusters[g].Facts, prompts.ConsolidateFact{ID: f.ID, Content: f.Content, Category: f.Category, Confidence: f.Confidence})
		}
	}
	prompt, err := prompts.Consolidate(data)
	if err != nil {
		return ConsolidateReport{}, fmt.Errorf("render consolidate prompt: %w", err)
	}
	if err := s.checkBudget(scope, doc); err != nil {
		return ConsolidateReport{}, err
	}
	reply, err := s.llm.Complete(ctx, CompletionRequest{Prompt: prompt, JSON: true})
	s.recordLLM(scope, reply, err)
	if err != nil {
		return ConsolidateReport{}, fmt.Errorf("ask llm for consolidation: %w", err)
	}
	merges, notes, perr := ParseConsolidation(reply.Text)
	var rep ConsolidateReport
	var usage []UsageDay
	_, err = s.store.UpdateDocument(WithActor(context.WithoutCancel(ctx), ActorUpdater), scope, func(d *Document) error {
		if perr == nil {
			var more []string
			rep, more = ApplyConsolidation(d, merges, ApplyConsolidationOptions{Clusters: clusters, Now: now, RedactSecrets: s.cfg.RedactSecrets})
			notes = append(notes, more...)
		}
		d.LLMConsolidatedAt = now
		usage = s.saveUsage(scope, d)
		return nil
	})
	if err != nil {
		return ConsolidateReport{}, fmt.Errorf("save consolidation: %w", err)
	}
	s.usage.commit(scope, usage)
	if perr != nil {
		return ConsolidateReport{}, fmt.Errorf("parse consolidation reply: %w", perr)
	}
	if len(notes) > 0 {
		s.log.Info("consolidation ignored parts of the model reply", "scope", scope.Key(), "notes", notes)
	}
	s.log.Info("memory consolidated by the model", "scope", scope.Key(), "groups", len(clusters), "merged", len(rep.Merged))
	if len(rep.Merged) > 0 {
		s.notifyChange(scope)
	}
	return rep, nil
}

// consolidateAfterUpdate runs the daily consolidation pass after an
// update run; its failure is logged, never the update's.
func (s *Service) consolidateAfterUpdate(ctx context.Context, scope Scope) {
	_, err := s.consolidateWithLLM(ctx, scope)
	switch {
	case err == nil, errors.Is(err, errConsolidationSkipped):
	case errors.Is(err, ErrBudgetSpent):
		s.log.Info("consolidation pass deferred: the daily token budget is spent", "scope", scope.Key())
	default:
		s.log.Warn("consolidation pass failed; memory is unchanged", "scope", scope.Key(), "err", err)
	}
}
