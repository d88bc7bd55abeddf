package memory

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strings"
	"unicode/utf8"
)

// Limits on the facts the host's model passes with an exchange.
const (
	// MaxHostFacts is the most facts one add_memory call may carry; the
	// rest are refused. An exchange rarely holds more than a few.
	MaxHostFacts = 20
	// MaxHostFactRunes bounds one fact's content: a fact is one short
	// sentence, not a summary of the exchange.
	MaxHostFactRunes = 500
)

// Outcomes of a host fact.
const (
	HostFactKept    = "kept"
	HostFactMerged  = "merged"
	HostFactRefused = "refused"
)

// HostFact is a fact the host's model distilled from the exchange it
// stores with add_memory: it takes the same path as the facts a language
// model extracts (threshold, de-duplication, limits, history).
type HostFact struct {
	Content  string
	Category string
	// Confidence is in (0, 1]; 0 means DefaultManualConfidence.
	Confidence float64
	// SourceError is what went wrong; kept on correction facts only.
	SourceError string
}

// HostFactResult says what became of one host fact.
type HostFactResult struct {
	Content string `json:"content"`
	// Status is kept (a new fact), merged (the fact was known already:
	// FactID is the known one) or refused (Reason says why).
	Status string `json:"status"`
	FactID string `json:"fact_id,omitempty"`
	Reason string `json:"reason,omitempty"`
}

// hostReason is the history reason of a fact the host's model passed.
func hostReason(thread string) string {
	return "stated by the assistant with the exchange it stored in thread " + thread
}

// checkHostFact checks one host fact as a caller's text: a fact that breaks
// the text rule, is empty or oversized, or has an unknown category or a
// confidence out of range is refused with the reason. It returns the fact
// to apply, or the refusal.
func checkHostFact(f HostFact, red *redactor) (NewFact, string) {
	content := strings.TrimSpace(f.Content)
	cat := strings.ToLower(strings.TrimSpace(f.Category))
	switch {
	case content == "":
		return NewFact{}, "content is empty; state the fact as one short sentence"
	case textProblem(content) != "":
		return NewFact{}, "content " + textProblem(content)
	case textProblem(f.SourceError) != "":
		return NewFact{}, "source_error " + textProblem(f.SourceError)
	case utf8.RuneCountInString(content) > MaxHostFactRunes:
		return NewFact{}, fmt.Sprintf("content is %d characters long; a fact is one short sentence under %d characters",
			utf8.RuneCountInString(content), MaxHostFactRunes)
	case cat == "":
		cat = CategoryContext
	case !ValidCategory(cat):
		return NewFact{}, fmt.Sprintf("%q is not a category; use one of %s", f.Category, strings.Join(Categories, ", "))
	}
	conf := f.Confidence
	switch {
	case conf == 0:
		conf = DefaultManualConfidence
	case math.IsNaN(conf) || conf < 0 || conf > 1:
		return NewFact{}, fmt.Sprintf("confidence %v is not between 0 and 1", conf)
	}
	return NewFact{Content: red.text(content), Category: cat, Confidence: conf, SourceError: red.text(strings.TrimSpace(f.SourceError))}, ""
}

// applyHostFacts applies the host's facts to the scope's document, one at
// a time in one save, as the updater applies extracted ones: below the
// confidence threshold, about an uploaded file, or evicted at once by
// max_facts, a fact is refused; a fact already known is merged. The
// thread is the facts' source in the history.
func (s *Service) applyHostFacts(ctx context.Context, scope Scope, thread string, facts []HostFact, red *redactor) ([]HostFactResult, error) {
	out := make([]HostFactResult, len(facts))
	apply := make([]int, 0, len(facts))
	checked := make([]NewFact, len(facts))
	for i, f := range facts {
		out[i] = HostFactResult{Content: strings.TrimSpace(f.Content), Status: HostFactRefused}
		if i >= MaxHostFacts {
			out[i].Reason = fmt.Sprintf("more than %d facts in one call; pass only the few that matter", MaxHostFacts)
			continue
		}
		nf, why := checkHostFact(f, red)
		if why != "" {
			out[i].Reason = why
			continue
		}
		out[i].Content, checked[i] = nf.Content, nf
		apply = append(apply, i)
	}
	if len(apply) == 0 {
		return out, nil
	}
	changed := false
	_, err := s.store.UpdateDocument(ctx, scope, func(d *Document) error {
		changed = false
		for _, i := range apply {
			nf := checked[i]
			out[i] = HostFactResult{Content: nf.Content, Status: HostFactRefused}
			if id := knownFact(d, nf.Content); id != "" {
				out[i].Status, out[i].FactID = HostFactMerged, id
				continue
			}
			rep := ApplyUpdate(d, &Update{NewFacts: []NewFact{nf}}, ApplyOptions{
				Source:              thread,
				Now:                 s.now().UTC(),
				ConfidenceThreshold: s.cfg.FactConfidenceThreshold,
				MaxFacts:            s.cfg.MaxFacts,
				MaxRemoveShare:      s.cfg.MaxRemoveShare,
				NewID:               s.newFactID,
				CreatedReason:       hostReason(thread),
				RedactSecrets:       s.cfg.RedactSecrets,
			})
			if len(rep.FactsAdded) == 1 {
				out[i].Status, out[i].FactID = HostFactKept, rep.FactsAdded[0]
				changed = true
				continue
			}
			if len(rep.FactsConfirmed) == 1 {
				// A near-duplicate: merged into the stored fact, which it
				// confirms (consolidate.go).
				out[i].Status, out[i].FactID = HostFactMerged, rep.FactsConfirmed[0]
				changed = true
				continue
			}
			out[i].Reason = hostRefusal(rep.Ignored)
			if len(rep.FactsEvicted) > 0 {
				changed = true
			}
		}
		if !changed {
			return errNoChange
		}
		return nil
	})
	switch {
	case errors.Is(err, errNoChange):
	case err != nil:
		return nil, fmt.Errorf("save facts in %s: %w", scope.Key(), err)
	default:
		s.notifyChange(scope)
		s.log.Info("facts passed with an exchange", "scope", scope.Key(), "thread", thread, "facts", len(facts))
	}
	return out, nil
}

// knownFact returns the id of the document's fact with the same content
// (as de-duplication compares it), or "".
func knownFact(d *Document, content string) string {
	key := foldFactContent(scrubUploads(content))
	for _, f := range d.Facts {
		if foldFactContent(f.Content) == key {
			return f.ID
		}
	}
	return ""
}

// hostRefusal turns the applier's notes on one fact into a reason for the
// model, without the note's "new fact "…": " prefix.
func hostRefusal(notes []string) string {
	if len(notes) == 0 {
		return "not kept"
	}
	parts := make([]string, len(notes))
	for i, n := range notes {
		if j := strings.Index(n, "\": "); strings.HasPrefix(n, "new fact \"") && j > 0 {
			n = n[j+3:]
		}
		parts[i] = n
	}
	reason := strings.Join(parts, "; ")
	if strings.Contains(reason, "over the limit") {
		reason += " (memory holds its maximum of facts and this one has the lowest confidence)"
	}
	return reason
}
