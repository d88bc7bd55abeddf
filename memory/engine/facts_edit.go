package engine

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/mnemo-mcp/mnemo/memory"
	"github.com/mnemo-mcp/mnemo/memory/update"
)

// errNoChange aborts a document update that has nothing to save.
var errNoChange = errors.New("no change")

// manualReason says who made a manual change, for the fact history.
func manualReason(source, verb string) string {
	if source == memory.SourceCLI {
		return verb + " from the command line"
	}
	return verb + " manually"
}

// SaveFact stores a fact as the host's model (or the command line) states
// it, with source "manual" (or "cli"); no language model is needed. A fact
// whose content matches a stored one (ignoring case, spacing and a final
// full stop) is not stored again: the stored one is returned with
// Duplicate set. max_facts is enforced as for extracted facts.
func (s *Service) SaveFact(ctx context.Context, req memory.SaveFactRequest) (*memory.SaveFactResult, error) {
	scope, err := s.resolveScope(req.UserID, req.AgentName)
	if err != nil {
		return nil, err
	}
	ch, err := checkSave(&req)
	if err != nil {
		return nil, err
	}
	red := &memory.Redactor{On: s.cfg.RedactSecrets}
	content, cat, conf, source := red.Text(ch.content), ch.category, ch.confidence, ch.source
	res := &memory.SaveFactResult{Scope: scope, Redacted: red.Take()}
	key := update.FoldFactContent(update.ScrubUploads(content))
	_, err = s.store.UpdateDocument(ctx, scope, func(d *memory.Document) error {
		res.Evicted, res.Notes = nil, nil
		for i, f := range d.Facts {
			if update.FoldFactContent(f.Content) == key {
				res.Fact, res.Duplicate = f, true
				if !req.Pinned || f.Pinned {
					return errNoChange
				}
				// Saved again with pinned: the stored fact is pinned.
				d.Facts[i].Pinned = true
				res.Fact = d.Facts[i]
				d.AddFactEvent(memory.FactEvent{FactID: f.ID, Event: memory.FactUpdated, At: s.now().UTC(), Source: source,
					Reason: manualReason(source, "pinned"), Content: f.Content})
				return nil
			}
		}
		rep := update.ApplyUpdate(d, &update.Update{NewFacts: []update.NewFact{{Content: content, Category: cat, Confidence: conf}}}, update.ApplyOptions{
			Source:         source,
			Now:            s.now().UTC(),
			MaxFacts:       s.cfg.MaxFacts,
			MaxRemoveShare: s.cfg.MaxRemoveShare,
			NewID:          s.newFactID,
			CreatedReason:  manualReason(source, "saved"),
		})
		if len(rep.FactsAdded) == 0 && len(rep.FactsConfirmed) > 0 {
			// A near-duplicate: merged into the stored fact, which it
			// confirms (consolidate.go).
			i := slices.IndexFunc(d.Facts, func(f memory.Fact) bool { return f.ID == rep.FactsConfirmed[0] })
			if req.Pinned {
				d.Facts[i].Pinned = true
			}
			res.Fact, res.Duplicate = d.Facts[i], true
			res.Notes = append(rep.Ignored, fmt.Sprintf("nearly the same as fact %s: merged into it, which now counts as confirmed (confidence %v)", res.Fact.ID, res.Fact.Confidence))
			return nil
		}
		if len(rep.FactsAdded) == 0 {
			why := strings.Join(rep.Ignored, "; ")
			if strings.Contains(why, "over the limit") {
				return memory.Invalid("confidence", "the fact was not kept: memory holds the maximum of %d facts and none has a lower confidence than %v; raise confidence or forget a fact first",
					s.cfg.MaxFacts, conf)
			}
			return memory.Invalid("content", "the fact was not kept: %s", why)
		}
		for i, f := range d.Facts {
			if f.ID == rep.FactsAdded[0] {
				d.Facts[i].Pinned = req.Pinned
				res.Fact = d.Facts[i]
			}
		}
		res.Evicted, res.Notes = rep.FactsEvicted, rep.Ignored
		return nil
	})
	switch {
	case errors.Is(err, errNoChange):
		return res, nil
	case err != nil:
		return nil, fmt.Errorf("save fact in %s: %w", scope.Key(), err)
	}
	s.log.Info("fact saved", "scope", scope.Key(), "fact", res.Fact.ID, "source", source)
	s.notifyChange(scope)
	return res, nil
}

// UpdateFact changes a fact's content, category, confidence or pinned mark, keeping its
// id, creation time and source, and records the change in the fact
// history. A new wording is a correction: the fact takes the edit's time
// (CorrectedAt, ValidFrom) and keeps the wording it replaced (Replaced). A fact id the scope does not hold is an error wrapping
// ErrNotFound.
func (s *Service) UpdateFact(ctx context.Context, req memory.UpdateFactRequest) (*memory.UpdateFactResult, error) {
	scope, err := s.resolveScope(req.UserID, req.AgentName)
	if err != nil {
		return nil, err
	}
	ch, err := checkUpdate(&req)
	if err != nil {
		return nil, err
	}
	red := &memory.Redactor{On: s.cfg.RedactSecrets}
	content, cat, conf, source := red.Text(ch.content), ch.category, ch.confidence, ch.source
	res := &memory.UpdateFactResult{Scope: scope, Redacted: red.Take()}
	_, err = s.store.UpdateDocument(ctx, scope, func(d *memory.Document) error {
		i := slices.IndexFunc(d.Facts, func(f memory.Fact) bool { return f.ID == req.ID })
		if i < 0 {
			return memory.NotFound("no fact %q in the memory of %s; list_memories lists the fact ids", req.ID, scope.Key())
		}
		f := d.Facts[i]
		res.Previous, res.Changed = f, nil
		if req.Content != nil && content != f.Content {
			content = update.ScrubUploads(content)
			key := update.FoldFactContent(content)
			for _, o := range d.Facts {
				if o.ID != f.ID && update.FoldFactContent(o.Content) == key {
					return memory.Invalid("content", "fact %s already says this; forget %s instead of making it a duplicate", o.ID, f.ID)
				}
			}
			// A correction is what memory knows now: it takes the
			// edit's time, and keeps the wording it replaced, so that
			// an exchange still saying that is shown as superseded.
			now := s.now().UTC()
			f.Replaced, f.Content = f.Content, content
			f.CorrectedAt, f.ValidFrom = now, now
			res.Changed = append(res.Changed, "content")
		}
		if req.Category != nil && cat != f.Category {
			f.Category = cat
			if cat != memory.CategoryCorrection {
				f.SourceError = ""
			}
			res.Changed = append(res.Changed, "category")
		}
		if req.Confidence != nil && conf != f.Confidence {
			f.Confidence = conf
			res.Changed = append(res.Changed, "confidence")
		}
		if req.Pinned != nil && *req.Pinned != f.Pinned {
			f.Pinned = *req.Pinned
			res.Changed = append(res.Changed, "pinned")
		}
		res.Fact = f
		if len(res.Changed) == 0 {
			return errNoChange
		}
		d.Facts[i] = f
		d.AddFactEvent(memory.FactEvent{FactID: f.ID, Event: memory.FactUpdated, At: s.now().UTC(), Source: source,
			Reason: manualReason(source, "changed "+strings.Join(res.Changed, ", ")), Content: f.Content})
		return nil
	})
	switch {
	case errors.Is(err, errNoChange):
		res.Changed = []string{}
		return res, nil
	case err != nil:
		return nil, fmt.Errorf("update fact in %s: %w", scope.Key(), err)
	}
	s.log.Info("fact updated", "scope", scope.Key(), "fact", req.ID, "changed", res.Changed, "source", source)
	s.notifyChange(scope)
	return res, nil
}
