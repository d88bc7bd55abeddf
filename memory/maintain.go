package memory

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"sync"
	"time"
)

// Maintenance keeps memory true over months, without a language model:
// near-duplicates are merged (consolidate.go), and a fact nobody has
// confirmed for fact_stale_after loses confidence slowly — halving every
// staleHalfLife(fact_stale_after) — until, below FactRetireBelow, it is
// retired to Document.RetiredFacts, from where RestoreFact brings it back.
// A correction that keeps being retrieved for a matching query counts as
// confirmed by that, so it does not decay while it stays relevant. Every
// change is a fact event and is saved through UpdateDocument, so the
// document it replaces is kept for rollback.
//
// It runs in every update of a thread (in the same save) and at the end
// of every flush_memory, the periodic pass of a server without a model.

// FactRetireBelow is the confidence below which a decaying fact is
// retired. It is well below fact_confidence_threshold (0.7 by default):
// a fact saved at 0.9 and never confirmed again is retired about
// fact_stale_after × 1.8 after it was last stated (180 days + 143 days
// by default).
const FactRetireBelow = 0.3

// staleHalfLife is how long a stale fact takes to lose half its
// confidence: half of fact_stale_after.
func staleHalfLife(staleAfter time.Duration) time.Duration { return staleAfter / 2 }

// MaintainOptions are the rules of one maintenance pass.
type MaintainOptions struct {
	Now time.Time
	// StaleAfter is fact_stale_after; DefaultFactStaleAfter when 0.
	StaleAfter time.Duration
	// Relevant maps a correction's id to when it was last retrieved for a
	// query it matched; later than its confirmation, it confirms it.
	Relevant map[string]time.Time
	// Source is recorded in the events.
	Source string
}

// MaintainReport says what a maintenance pass changed.
type MaintainReport struct {
	// Merged maps each fact merged away to the fact it was merged into.
	Merged map[string]string `json:"merged,omitempty"`
	// Decayed are the facts whose confidence fell.
	Decayed []string `json:"decayed,omitempty"`
	// Retired are the facts retired for not being confirmed.
	Retired []string `json:"retired,omitempty"`
}

// Changed reports whether the pass changed any fact.
func (r MaintainReport) Changed() bool {
	return len(r.Merged)+len(r.Decayed)+len(r.Retired) > 0
}

// SourceMaintenance is the source of the events of a maintenance pass.
const SourceMaintenance = "maintenance"

// Maintain runs one maintenance pass over d in place: consolidation, then
// staleness. Decay is counted from d.MaintainedAt, so passes may run at
// any rate; it sets d.MaintainedAt to opt.Now.
func Maintain(d *Document, opt MaintainOptions) MaintainReport {
	if opt.StaleAfter <= 0 {
		opt.StaleAfter = DefaultFactStaleAfter
	}
	if opt.Source == "" {
		opt.Source = SourceMaintenance
	}
	now := opt.Now
	rep := MaintainReport{Merged: Consolidate(d, now, opt.Source).Merged}
	if len(rep.Merged) == 0 {
		rep.Merged = nil
	}
	half := staleHalfLife(opt.StaleAfter).Hours()
	kept := d.Facts[:0]
	for _, f := range d.Facts {
		if at, ok := opt.Relevant[f.ID]; ok && f.Category == CategoryCorrection && at.After(f.Confirmed()) && !at.After(now) {
			f.LastConfirmed = at
		}
		staleFrom := f.Confirmed().Add(opt.StaleAfter)
		from := staleFrom
		if d.MaintainedAt.After(from) {
			from = d.MaintainedAt
		}
		if !now.After(from) {
			kept = append(kept, f)
			continue
		}
		old := f.Confidence
		f.Confidence = old * math.Exp2(-now.Sub(from).Hours()/half)
		if f.Confidence < FactRetireBelow {
			rep.Retired = append(rep.Retired, f.ID)
			d.RetiredFacts = archive(d.RetiredFacts, f, MaxRetiredFacts)
			d.AddFactEvent(FactEvent{FactID: f.ID, Event: FactRetired, At: now, Source: opt.Source, Content: f.Content, Confidence: round4(f.Confidence),
				Reason: fmt.Sprintf("not confirmed since %s: confidence fell below %v; restorable", f.Confirmed().Format(time.DateOnly), FactRetireBelow)})
			continue
		}
		rep.Decayed = append(rep.Decayed, f.ID)
		if math.Floor(f.Confidence*10) < math.Floor(old*10) {
			// One event per tenth lost, not one per pass.
			d.AddFactEvent(FactEvent{FactID: f.ID, Event: FactDecayed, At: now, Source: opt.Source, Content: f.Content, Confidence: round4(f.Confidence),
				Reason: fmt.Sprintf("not confirmed since %s", f.Confirmed().Format(time.DateOnly))})
		}
		kept = append(kept, f)
	}
	clear(d.Facts[len(kept):])
	d.Facts = kept
	d.MaintainedAt = now
	return rep
}

// relevance remembers, per scope, when each correction was last
// retrieved for a query it matched. It lives in memory only: after a
// restart, corrections count as relevant again from their next
// retrieval.
type relevance struct {
	mu sync.Mutex
	at map[string]map[string]time.Time
}

func (r *relevance) note(scope Scope, id string, at time.Time) {
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

func (r *relevance) of(scope Scope) map[string]time.Time {
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
func (s *Service) maintain(d *Document, scope Scope) MaintainReport {
	rep := Maintain(d, MaintainOptions{Now: s.now().UTC(), StaleAfter: s.cfg.FactStaleAfter, Relevant: s.relevant.of(scope)})
	if rep.Changed() {
		s.log.Info("memory maintained", "scope", scope.Key(), "merged", len(rep.Merged), "decayed", len(rep.Decayed), "retired", len(rep.Retired))
	}
	return rep
}

// Maintain runs a maintenance pass over a scope's memory now and, when it
// changed a fact, saves it with the usage counted since the last save;
// nothing to change saves nothing.
func (s *Service) Maintain(ctx context.Context, userID, agentName string) (MaintainReport, error) {
	scope, err := s.resolveScope(userID, agentName)
	if err != nil {
		return MaintainReport{}, err
	}
	return s.maintainScope(ctx, scope)
}

func (s *Service) maintainScope(ctx context.Context, scope Scope) (MaintainReport, error) {
	var rep MaintainReport
	var usage []UsageDay
	_, err := s.store.UpdateDocument(WithActor(ctx, ActorUpdater), scope, func(d *Document) error {
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
		return MaintainReport{}, nil
	case err != nil:
		return MaintainReport{}, fmt.Errorf("maintain memory of %s: %w", scope.Key(), err)
	}
	s.usage.commit(scope, usage)
	if rep.Changed() {
		s.notifyChange(scope)
	}
	return rep, nil
}

// RestoreFactRequest is one restore of a retired, merged or replaced fact.
type RestoreFactRequest struct {
	UserID    string
	AgentName string
	ID        string
	// Source is SourceManual (the default) or SourceCLI.
	Source string
}

// RestoreFactResult is the fact brought back.
type RestoreFactResult struct {
	Scope Scope `json:"scope"`
	Fact  Fact  `json:"fact"`
}

// RestoreFact brings a fact back from RetiredFacts or PastFacts into the
// current facts, confirmed now and with at least the confidence threshold,
// so that it is not retired again at once. A fact id that is in neither
// is an error wrapping ErrNotFound; one whose content a current fact
// already has is an error wrapping ErrInvalidInput.
func (s *Service) RestoreFact(ctx context.Context, req RestoreFactRequest) (*RestoreFactResult, error) {
	scope, err := s.resolveScope(req.UserID, req.AgentName)
	if err != nil {
		return nil, err
	}
	source := req.Source
	if source == "" {
		source = SourceManual
	}
	res := &RestoreFactResult{Scope: scope}
	_, err = s.store.UpdateDocument(ctx, scope, func(d *Document) error {
		now := s.now().UTC()
		var f Fact
		found := false
		for _, list := range []*[]Fact{&d.RetiredFacts, &d.PastFacts} {
			if i := slices.IndexFunc(*list, func(f Fact) bool { return f.ID == req.ID }); i >= 0 {
				f, found = (*list)[i], true
				*list = slices.Delete(*list, i, i+1)
				break
			}
		}
		if !found {
			return fmt.Errorf("%w: no retired, merged or replaced fact %q in the memory of %s; memory_history lists the events that name one", ErrNotFound, req.ID, scope.Key())
		}
		key, ft := foldFactContent(f.Content), termsOf(f.Content)
		for _, o := range d.Facts {
			if o.ID == f.ID || foldFactContent(o.Content) == key || nearDuplicate(f, ft, o, termsOf(o.Content)) {
				return invalid("id", "fact %s already says this (or nearly); nothing to restore", o.ID)
			}
		}
		f.ValidTo = time.Time{}
		f.LastConfirmed = now
		f.Confidence = max(f.Confidence, s.cfg.FactConfidenceThreshold)
		d.Facts = append(d.Facts, f)
		d.AddFactEvent(FactEvent{FactID: f.ID, Event: FactRestored, At: now, Source: source, Content: f.Content, Confidence: f.Confidence,
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
