package engine

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/mnemo-mcp/mnemo/memory"
	"github.com/mnemo-mcp/mnemo/memory/update"
)

// hostReason is the history reason of a fact the host's model passed.
func hostReason(thread string) string {
	return "stated by the assistant with the exchange it stored in thread " + thread
}

// checkHostFact checks one host fact as a caller's text: a fact that breaks
// the text rule, is empty or oversized, or has an unknown category or a
// confidence out of range is refused with the reason. It returns the fact
// to apply, or the refusal.
func checkHostFact(f memory.HostFact, red *memory.Redactor) (update.NewFact, string) {
	content := strings.TrimSpace(f.Content)
	cat := strings.ToLower(strings.TrimSpace(f.Category))
	switch {
	case content == "":
		return update.NewFact{}, "content is empty; state the fact as one short sentence"
	case memory.TextProblem(content) != "":
		return update.NewFact{}, "content " + memory.TextProblem(content)
	case memory.TextProblem(f.SourceError) != "":
		return update.NewFact{}, "source_error " + memory.TextProblem(f.SourceError)
	case utf8.RuneCountInString(content) > memory.MaxHostFactRunes:
		return update.NewFact{}, fmt.Sprintf("content is %d characters long; a fact is one short sentence under %d characters",
			utf8.RuneCountInString(content), memory.MaxHostFactRunes)
	case cat == "":
		cat = memory.CategoryContext
	case !memory.ValidCategory(cat):
		return update.NewFact{}, fmt.Sprintf("%q is not a category; use one of %s", f.Category, strings.Join(memory.Categories, ", "))
	}
	conf := f.Confidence
	switch {
	case conf == 0:
		conf = memory.DefaultManualConfidence
	case math.IsNaN(conf) || conf < 0 || conf > 1:
		return update.NewFact{}, fmt.Sprintf("confidence %v is not between 0 and 1", conf)
	}
	return update.NewFact{Content: red.Text(content), Category: cat, Confidence: conf, SourceError: red.Text(strings.TrimSpace(f.SourceError))}, ""
}

// applyHostFacts applies the host's facts to the scope's document, one at
// a time in one save, as the updater applies extracted ones: below the
// confidence threshold, about an uploaded file, or evicted at once by
// max_facts, a fact is refused; a fact already known is merged. The
// thread is the facts' source in the history; when, the time of the
// exchange they come with (zero: undated), is when they became true (a replayed or
// imported conversation dates its facts at the conversation, so that the
// newer of two statements is the one said later, not the one stored later).
func (s *Service) applyHostFacts(ctx context.Context, scope memory.Scope, thread string, facts []memory.HostFact, when time.Time, red *memory.Redactor) ([]memory.HostFactResult, error) {
	out := make([]memory.HostFactResult, len(facts))
	apply := make([]int, 0, len(facts))
	checked := make([]update.NewFact, len(facts))
	for i, f := range facts {
		out[i] = memory.HostFactResult{Content: strings.TrimSpace(f.Content), Status: memory.HostFactRefused}
		if i >= memory.MaxHostFacts {
			out[i].Reason = fmt.Sprintf("more than %d facts in one call; pass only the few that matter", memory.MaxHostFacts)
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
	_, err := s.store.UpdateDocument(ctx, scope, func(d *memory.Document) error {
		changed = false
		for _, i := range apply {
			nf := checked[i]
			out[i] = memory.HostFactResult{Content: nf.Content, Status: memory.HostFactRefused}
			if id := knownFact(d, nf.Content); id != "" {
				out[i].Status, out[i].FactID = memory.HostFactMerged, id
				continue
			}
			rep := update.ApplyUpdate(d, &update.Update{NewFacts: []update.NewFact{nf}}, update.ApplyOptions{
				Source:              thread,
				Now:                 s.now().UTC(),
				ValidFrom:           when,
				ConfidenceThreshold: s.cfg.FactConfidenceThreshold,
				MaxFacts:            s.cfg.MaxFacts,
				MaxRemoveShare:      s.cfg.MaxRemoveShare,
				NewID:               s.newFactID,
				CreatedReason:       hostReason(thread),
				RedactSecrets:       s.cfg.RedactSecrets,
			})
			if len(rep.FactsAdded) == 1 {
				out[i].Status, out[i].FactID = memory.HostFactKept, rep.FactsAdded[0]
				changed = true
				continue
			}
			if len(rep.FactsConfirmed) == 1 {
				// A near-duplicate: merged into the stored fact, which it
				// confirms (consolidate.go).
				out[i].Status, out[i].FactID = memory.HostFactMerged, rep.FactsConfirmed[0]
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
func knownFact(d *memory.Document, content string) string {
	key := update.FoldFactContent(update.ScrubUploads(content))
	for _, f := range d.Facts {
		if update.FoldFactContent(f.Content) == key {
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
