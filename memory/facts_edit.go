package memory

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
)

// Managing memory directly: the host's model (or the command line) saves,
// corrects and forgets facts and exchanges. Facts change through
// ApplyUpdate like the updater's, so deduplication, upload scrubbing,
// max_facts and the fact history follow the same rules.

// DefaultManualConfidence is the confidence of a saved fact that gives none.
const DefaultManualConfidence = 0.9

// errNoChange aborts a document update that has nothing to save.
var errNoChange = errors.New("no change")

// manualReason says who made a manual change, for the fact history.
func manualReason(source, verb string) string {
	if source == SourceCLI {
		return verb + " from the command line"
	}
	return verb + " manually"
}

// SaveFactRequest is one save_memory call: a fact to remember as given.
type SaveFactRequest struct {
	UserID    string
	AgentName string
	Content   string
	// Category is one of Categories; empty means CategoryContext.
	Category string
	// Confidence is in (0, 1]; 0 means DefaultManualConfidence.
	Confidence float64
	// Source is SourceManual (the default) or SourceCLI.
	Source string
}

// SaveFactResult is what SaveFact stored, or the fact that already said
// the same thing.
type SaveFactResult struct {
	Scope Scope `json:"scope"`
	Fact  Fact  `json:"fact"`
	// Duplicate is true when a fact with the same content was already
	// stored (Fact is that fact and nothing changed), or one that says
	// nearly the same (Fact is that fact, the new wording merged into it
	// and its confidence raised; Notes say so).
	Duplicate bool `json:"duplicate"`
	// Evicted are ids of facts dropped to stay within max_facts.
	Evicted []string `json:"evicted,omitempty"`
	// Notes say what was adjusted (for example upload sentences removed).
	Notes []string `json:"notes,omitempty"`
	// Redacted counts the secrets replaced by "[redacted: KIND]" in the
	// content, by kind.
	Redacted []Redaction `json:"redacted,omitempty"`
}

// SaveFact stores a fact as the host's model (or the command line) states
// it, with source "manual" (or "cli"); no language model is needed. A fact
// whose content matches a stored one (ignoring case, spacing and a final
// full stop) is not stored again: the stored one is returned with
// Duplicate set. max_facts is enforced as for extracted facts.
func (s *Service) SaveFact(ctx context.Context, req SaveFactRequest) (*SaveFactResult, error) {
	scope, err := s.resolveScope(req.UserID, req.AgentName)
	if err != nil {
		return nil, err
	}
	ch, err := checkSave(&req)
	if err != nil {
		return nil, err
	}
	red := &redactor{on: s.cfg.RedactSecrets}
	content, cat, conf, source := red.text(ch.content), ch.category, ch.confidence, ch.source
	res := &SaveFactResult{Scope: scope, Redacted: red.take()}
	key := foldFactContent(scrubUploads(content))
	_, err = s.store.UpdateDocument(ctx, scope, func(d *Document) error {
		res.Evicted, res.Notes = nil, nil
		for _, f := range d.Facts {
			if foldFactContent(f.Content) == key {
				res.Fact, res.Duplicate = f, true
				return errNoChange
			}
		}
		rep := ApplyUpdate(d, &Update{NewFacts: []NewFact{{Content: content, Category: cat, Confidence: conf}}}, ApplyOptions{
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
			i := slices.IndexFunc(d.Facts, func(f Fact) bool { return f.ID == rep.FactsConfirmed[0] })
			res.Fact, res.Duplicate = d.Facts[i], true
			res.Notes = append(rep.Ignored, fmt.Sprintf("nearly the same as fact %s: merged into it, which now counts as confirmed (confidence %v)", res.Fact.ID, res.Fact.Confidence))
			return nil
		}
		if len(rep.FactsAdded) == 0 {
			why := strings.Join(rep.Ignored, "; ")
			if strings.Contains(why, "over the limit") {
				return invalid("confidence", "the fact was not kept: memory holds the maximum of %d facts and none has a lower confidence than %v; raise confidence or forget a fact first",
					s.cfg.MaxFacts, conf)
			}
			return invalid("content", "the fact was not kept: %s", why)
		}
		for _, f := range d.Facts {
			if f.ID == rep.FactsAdded[0] {
				res.Fact = f
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

// UpdateFactRequest is one update_memory call. Nil fields are left as
// they are; at least one must be set.
type UpdateFactRequest struct {
	UserID     string
	AgentName  string
	ID         string
	Content    *string
	Category   *string
	Confidence *float64
	// Source is SourceManual (the default) or SourceCLI.
	Source string
}

// UpdateFactResult is the fact after the change and what it was before.
type UpdateFactResult struct {
	Scope    Scope    `json:"scope"`
	Fact     Fact     `json:"fact"`
	Previous Fact     `json:"previous"`
	Changed  []string `json:"changed"`
	// Redacted counts the secrets replaced by "[redacted: KIND]" in the
	// new content, by kind.
	Redacted []Redaction `json:"redacted,omitempty"`
}

// UpdateFact changes a fact's content, category or confidence, keeping its
// id, creation time and source, and records the change in the fact
// history. A fact id the scope does not hold is an error wrapping
// ErrNotFound.
func (s *Service) UpdateFact(ctx context.Context, req UpdateFactRequest) (*UpdateFactResult, error) {
	scope, err := s.resolveScope(req.UserID, req.AgentName)
	if err != nil {
		return nil, err
	}
	ch, err := checkUpdate(&req)
	if err != nil {
		return nil, err
	}
	red := &redactor{on: s.cfg.RedactSecrets}
	content, cat, conf, source := red.text(ch.content), ch.category, ch.confidence, ch.source
	res := &UpdateFactResult{Scope: scope, Redacted: red.take()}
	_, err = s.store.UpdateDocument(ctx, scope, func(d *Document) error {
		i := slices.IndexFunc(d.Facts, func(f Fact) bool { return f.ID == req.ID })
		if i < 0 {
			return notFound("no fact %q in the memory of %s; list_memories lists the fact ids", req.ID, scope.Key())
		}
		f := d.Facts[i]
		res.Previous, res.Changed = f, nil
		if req.Content != nil && content != f.Content {
			content = scrubUploads(content)
			key := foldFactContent(content)
			for _, o := range d.Facts {
				if o.ID != f.ID && foldFactContent(o.Content) == key {
					return invalid("content", "fact %s already says this; forget %s instead of making it a duplicate", o.ID, f.ID)
				}
			}
			f.Content = content
			res.Changed = append(res.Changed, "content")
		}
		if req.Category != nil && cat != f.Category {
			f.Category = cat
			if cat != CategoryCorrection {
				f.SourceError = ""
			}
			res.Changed = append(res.Changed, "category")
		}
		if req.Confidence != nil && conf != f.Confidence {
			f.Confidence = conf
			res.Changed = append(res.Changed, "confidence")
		}
		res.Fact = f
		if len(res.Changed) == 0 {
			return errNoChange
		}
		d.Facts[i] = f
		d.AddFactEvent(FactEvent{FactID: f.ID, Event: FactUpdated, At: s.now().UTC(), Source: source,
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
