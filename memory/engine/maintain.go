package engine

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/mnemo-mcp/mnemo/memory"
	"github.com/mnemo-mcp/mnemo/memory/update"
)

// relevance remembers, per scope, when each correction was last
// retrieved for a query it matched. It lives in memory only: after a
// restart, corrections count as relevant again from their next
// retrieval.
type relevance struct {
	mu sync.Mutex
	at map[string]map[string]time.Time
}

func (r *relevance) note(scope memory.Scope, id string, at time.Time) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.at == nil {
		r.at = make(map[string]map[string]time.Time)
	}
	m := r.at[scope.Key()]
	if m == nil {
		m = make(map[string]time.Time)
		r.at[scope.Key()] = m
	}
	m[id] = at
}

func (r *relevance) of(scope memory.Scope) map[string]time.Time {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := make(map[string]time.Time, len(r.at[scope.Key()]))
	for k, v := range r.at[scope.Key()] {
		out[k] = v
	}
	return out
}

// maintain runs a maintenance pass over d for scope, inside an
// UpdateDocument.
func (s *Service) maintain(d *memory.Document, scope memory.Scope) memory.MaintainReport {
	rep := update.Maintain(d, update.MaintainOptions{Now: s.now().UTC(), StaleAfter: s.cfg.FactStaleAfter, Relevant: s.relevant.of(scope)})
	if rep.Changed() {
		s.log.Info("memory maintained", "scope", scope.Key(), "merged", len(rep.Merged), "decayed", len(rep.Decayed), "retired", len(rep.Retired))
	}
	return rep
}

// Maintain runs a maintenance pass over a scope's memory now and, when it
// changed a fact, saves it with the usage counted since the last save;
// nothing to change saves nothing.
func (s *Service) Maintain(ctx context.Context, userID, agentName string) (memory.MaintainReport, error) {
	scope, err := s.resolveScope(userID, agentName)
	if err != nil {
		return memory.MaintainReport{}, err
	}
	return s.maintainScope(ctx, scope)
}

func (s *Service) maintainScope(ctx context.Context, scope memory.Scope) (memory.MaintainReport, error) {
	var rep memory.MaintainReport
	var usage []memory.UsageDay
	_, err := s.store.UpdateDocument(memory.WithActor(ctx, memory.ActorUpdater), scope, func(d *memory.Document) error {
		if d.Revision == 0 && len(d.Facts) == 0 {
			return errNoChange // nothing stored: no document is created
		}
		rep = s.maintain(d, scope)
		usage = s.saveUsage(scope, d)
		if !rep.Changed() {
			// Usage alone is not saved: a failed update leaves memory.json
			// as it was; its counts go with the next save.
			return errNoChange
		}
		return nil
	})
	switch {
	case errors.Is(err, errNoChange):
		return memory.MaintainReport{}, nil
	case err != nil:
		return memory.MaintainReport{}, fmt.Errorf("maintain memory of %s: %w", scope.Key(), err)
	}
	s.usage.commit(scope, usage)
	if rep.Changed() {
		s.notifyChange(scope)
	}
	return rep, nil
}

// RestoreFact brings a fact back from RetiredFacts or PastFacts into the
// current facts, confirmed now and with at least the confidence threshold,
// so that it is not retired again at once. A fact id that is in neither
// is an error wrapping ErrNotFound; one whose content a current fact
// already has is an error wrapping ErrInvalidInput.
func (s *Service) RestoreFact(ctx context.Context, req memory.RestoreFactRequest) (*memory.RestoreFactResult, error) {
	scope, err := s.resolveScope(req.UserID, req.AgentName)
	if err != nil {
		return nil, err
	}
	source := req.Source
	if source == "" {
		source = memory.SourceManual
	}
	res := &memory.RestoreFactResult{Scope: scope}
	_, err = s.store.UpdateDocument(ctx, scope, func(d *memory.Document) error {
		now := s.now().UTC()
		var f memory.Fact
		found := false
		for _, list := range []*[]memory.Fact{&d.RetiredFacts, &d.PastFacts} {
			if i := slices.IndexFunc(*list, func(f memory.Fact) bool { return f.ID == req.ID }); i >= 0 {
				f, found = (*list)[i], true
				*list = slices.Delete(*list, i, i+1)
				break
			}
		}
		if !found {
			return fmt.Errorf("%w: no retired, merged or replaced fact %q in the memory of %s; memory_history lists the events that name one", memory.ErrNotFound, req.ID, scope.Key())
		}
		key, ft := update.FoldFactContent(f.Content), update.TermsOf(f.Content)
		for _, o := range d.Facts {
			if o.ID == f.ID || update.FoldFactContent(o.Content) == key || update.NearDuplicate(f, ft, o, update.TermsOf(o.Content)) {
				return memory.Invalid("id", "fact %s already says this (or nearly); nothing to restore", o.ID)
			}
		}
		f.ValidTo = time.Time{}
		f.LastConfirmed = now
		f.Confidence = max(f.Confidence, s.cfg.FactConfidenceThreshold)
		d.Facts = append(d.Facts, f)
		d.AddFactEvent(memory.FactEvent{FactID: f.ID, Event: memory.FactRestored, At: now, Source: source, Content: f.Content, Confidence: f.Confidence,
			Reason: manualReason(source, "restored")})
		res.Fact = f
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("restore fact in %s: %w", scope.Key(), err)
	}
	s.log.Info("fact restored", "scope", scope.Key(), "fact", req.ID, "source", source)
	s.notifyChange(scope)
	return res, nil
}
