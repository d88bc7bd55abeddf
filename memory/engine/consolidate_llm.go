package engine

import (
	"context"
	"errors"
	"fmt"

	"github.com/mnemo-mcp/mnemo/memory"
	"github.com/mnemo-mcp/mnemo/memory/update"
	"github.com/mnemo-mcp/mnemo/prompts"
)

// errConsolidationSkipped means the consolidation pass with the model did
// not run: done today already, nothing to group, or no model.
var errConsolidationSkipped = errors.New("consolidation pass skipped")

// consolidateWithLLM runs the consolidation pass with the model over a
// scope's memory, at most once a day (UTC): the groups of similar facts
// are sent in one call and the merges the model asks for are saved. It
// does nothing when there is no model, the pass ran today or nothing
// looks alike; a spent daily budget is an error wrapping ErrBudgetSpent,
// a failed call or an unusable reply an error (a bad reply still counts
// as today's pass). The caller holds the scope's update lock.
func (s *Service) consolidateWithLLM(ctx context.Context, scope memory.Scope) (update.ConsolidateReport, error) {
	if s.llm == nil {
		return update.ConsolidateReport{}, errConsolidationSkipped
	}
	doc, err := s.store.LoadDocument(ctx, scope)
	if err != nil {
		return update.ConsolidateReport{}, fmt.Errorf("load memory for consolidation: %w", err)
	}
	now := s.now().UTC()
	if memory.UsageDayOf(doc.LLMConsolidatedAt) == memory.UsageDayOf(now) && !doc.LLMConsolidatedAt.IsZero() {
		return update.ConsolidateReport{}, errConsolidationSkipped
	}
	idx := update.ConsolidationClusters(doc, doc.LLMConsolidatedAt, update.MaxConsolidateClusters, update.MaxConsolidateClusterFacts)
	if len(idx) == 0 {
		return update.ConsolidateReport{}, errConsolidationSkipped
	}
	clusters := make([][]memory.Fact, len(idx))
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
		return update.ConsolidateReport{}, fmt.Errorf("render consolidate prompt: %w", err)
	}
	if err := s.checkBudget(scope, doc); err != nil {
		return update.ConsolidateReport{}, err
	}
	reply, err := s.llm.Complete(ctx, memory.CompletionRequest{Prompt: prompt, JSON: true})
	s.recordLLM(scope, reply, err)
	if err != nil {
		return update.ConsolidateReport{}, fmt.Errorf("ask llm for consolidation: %w", err)
	}
	merges, notes, perr := update.ParseConsolidation(reply.Text)
	var rep update.ConsolidateReport
	var usage []memory.UsageDay
	_, err = s.store.UpdateDocument(context.WithoutCancel(ctx), scope, func(d *memory.Document) error {
		if perr == nil {
			var more []string
			rep, more = update.ApplyConsolidation(d, merges, update.ApplyConsolidationOptions{Clusters: clusters, Now: now, RedactSecrets: s.cfg.RedactSecrets})
			notes = append(notes, more...)
		}
		d.LLMConsolidatedAt = now
		usage = s.saveUsage(scope, d)
		return nil
	})
	if err != nil {
		return update.ConsolidateReport{}, fmt.Errorf("save consolidation: %w", err)
	}
	s.usage.commit(scope, usage)
	if perr != nil {
		return update.ConsolidateReport{}, fmt.Errorf("parse consolidation reply: %w", perr)
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
func (s *Service) consolidateAfterUpdate(ctx context.Context, scope memory.Scope) {
	_, err := s.consolidateWithLLM(ctx, scope)
	switch {
	case err == nil, errors.Is(err, errConsolidationSkipped):
	case errors.Is(err, memory.ErrBudgetSpent):
		s.log.Info("consolidation pass deferred: the daily token budget is spent", "scope", scope.Key())
	default:
		s.log.Warn("consolidation pass failed; memory is unchanged", "scope", scope.Key(), "err", err)
	}
}
