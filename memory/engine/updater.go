package engine

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/mnemo-mcp/mnemo/memory"
	"github.com/mnemo-mcp/mnemo/memory/update"
	"github.com/mnemo-mcp/mnemo/prompts"
)

// Batch bounds for one LLM update: a long backlog is processed in several
// calls, each saved (with its watermark) before the next, so progress
// survives a crash.
const (
	maxBatchTurns = 40
	maxBatchChars = 24000
)

// errAlreadyApplied means another process processed the same turns first.
var errAlreadyApplied = errors.New("turns already processed by another process")

// errTurnsForgotten means turns were removed from the log, or the scope
// deleted, while an update of them waited for the model: its reply may
// come from forgotten turns and is not saved.
var errTurnsForgotten = errors.New("turns forgotten during the update")

// threadReport is what updating one thread changed.
type threadReport struct {
	TurnsProcessed int
	update.ApplyReport
}

func (r *threadReport) merge(o update.ApplyReport, turns int) {
	r.TurnsProcessed += turns
	r.FactsAdded = append(r.FactsAdded, o.FactsAdded...)
	r.FactsRemoved = append(r.FactsRemoved, o.FactsRemoved...)
	r.FactsConfirmed = append(r.FactsConfirmed, o.FactsConfirmed...)
	r.SectionsUpdated = append(r.SectionsUpdated, o.SectionsUpdated...)
	r.Ignored = append(r.Ignored, o.Ignored...)
}

// updateThread sends the thread's pending turns to the LLM in batches and
// applies each reply to the memory document, advancing the thread's
// watermark in the same atomic save. A failed call or an unusable reply
// leaves the document untouched and the turns pending. The caller holds
// the scope's update lock.
func (s *Service) updateThread(ctx context.Context, scope memory.Scope, thread string) (*threadReport, error) {
	if s.llm == nil {
		return nil, memory.ErrNoLLM
	}
	// The caller holds the updater lock: read what every process
	// appended, announced or not, so one run covers all of it.
	s.invalidate(scope)
	rep := &threadReport{}
	for ctx.Err() == nil {
		batch, doc, err := s.pendingBatch(ctx, scope, thread)
		if err != nil {
			return rep, err
		}
		if len(batch) == 0 {
			if rep.TurnsProcessed > 0 {
				s.consolidateAfterUpdate(ctx, scope)
			}
			return rep, nil
		}
		applied, err := s.updateBatch(ctx, scope, thread, batch, doc)
		if errors.Is(err, errAlreadyApplied) {
			s.log.Info("turns were processed by another process; skipping", "scope", scope.Key(), "thread", thread)
			continue
		}
		if errors.Is(err, errTurnsForgotten) {
			s.log.Info("turns were forgotten while the model answered; the reply is dropped and what is left is read again", "scope", scope.Key(), "thread", thread)
			s.dropStates(func(sc memory.Scope) bool { return sc == scope })
			continue
		}
		if err != nil {
			return rep, err
		}
		rep.merge(applied, len(batch))
	}
	return rep, ctx.Err()
}

// pendingBatch returns the next batch of the thread's unprocessed turns and
// a snapshot of the document they will be applied to.
func (s *Service) pendingBatch(ctx context.Context, scope memory.Scope, thread string) ([]memory.Turn, *memory.Document, error) {
	st, err := s.loadedState(ctx, scope)
	if err != nil {
		return nil, nil, err
	}
	defer st.mu.Unlock()
	wm := st.doc.Watermarks[thread]
	var batch []memory.Turn
	chars := 0
	for _, p := range st.Threads[thread] {
		t := st.Turns[p]
		if t.Seq <= wm {
			continue
		}
		n := len(t.User) + len(t.Reply)
		if len(batch) > 0 && (len(batch) >= maxBatchTurns || chars+n > maxBatchChars) {
			break
		}
		batch = append(batch, *t)
		chars += n
	}
	return batch, st.doc.Clone(), nil
}

// updateBatch runs one LLM update over batch and saves the result.
func (s *Service) updateBatch(ctx context.Context, scope memory.Scope, thread string, batch []memory.Turn, doc *memory.Document) (update.ApplyReport, error) {
	var sig memory.Signals
	for _, t := range batch {
		sig = sig.Or(t.Signals)
	}
	prompt, err := prompts.Update(prompts.UpdateData{
		CurrentMemory: update.MemoryForPrompt(doc),
		Conversation:  update.ConversationForPrompt(batch),
		Correction:    sig.Correction,
		Reinforcement: sig.Reinforcement,
		Today:         s.now().UTC().Format("2006-01-02"),
	})
	if err != nil {
		return update.ApplyReport{}, fmt.Errorf("render update prompt: %w", err)
	}
	if err := s.checkBudget(scope, doc); err != nil {
		return update.ApplyReport{}, err
	}
	reply, err := s.llm.Complete(ctx, memory.CompletionRequest{Prompt: prompt, JSON: true,
		Retrying: func(reason string, failed int, wait time.Duration) {
			s.queue.note(scope, thread, failureNote{reason: reason, failed: failed, next: time.Now().Add(wait), endpoint: true})
		}})
	s.recordLLM(scope, reply, err)
	if err != nil {
		return update.ApplyReport{}, fmt.Errorf("ask llm for memory update: %w", err)
	}
	upd, err := update.ParseUpdate(reply.Text)
	if err != nil {
		return update.ApplyReport{}, fmt.Errorf("parse llm reply: %w", err)
	}
	if len(upd.Sections) == 0 && len(upd.NewFacts) == 0 && len(upd.FactsToRemove) == 0 && len(upd.Notes) > 0 {
		// Everything the model sent was invalid: keep the turns pending
		// rather than marking them processed with nothing learned.
		return update.ApplyReport{}, fmt.Errorf("parse llm reply: %w: nothing in it was usable (%s)", update.ErrBadReply, strings.Join(upd.Notes, "; "))
	}
	first, last := batch[0].Seq, batch[len(batch)-1].Seq
	if doc.Revision == 0 {
		// With no document saved yet, a deleted scope reads like this one
		// (revision 0, epoch 0): check that the turns are still there.
		left, err := s.store.ReadTurns(ctx, scope, first-1)
		if err != nil {
			return update.ApplyReport{}, fmt.Errorf("check the turns are still stored: %w", err)
		}
		if len(left) == 0 || left[0].ID != batch[0].ID {
			return update.ApplyReport{}, errTurnsForgotten
		}
	}
	var report update.ApplyReport
	var usage []memory.UsageDay
	_, err = s.store.UpdateDocument(memory.WithActor(context.WithoutCancel(ctx), memory.ActorUpdater), scope, func(d *memory.Document) error {
		if d.TurnLogEpoch != doc.TurnLogEpoch || d.Revision < doc.Revision {
			return errTurnsForgotten
		}
		if d.Watermarks[thread] >= first {
			return errAlreadyApplied
		}
		report = update.ApplyUpdate(d, upd, update.ApplyOptions{
			Source:              thread,
			Now:                 s.now().UTC(),
			ConfidenceThreshold: s.cfg.FactConfidenceThreshold,
			MaxFacts:            s.cfg.MaxFacts,
			MaxRemoveShare:      s.cfg.MaxRemoveShare,
			NewID:               s.newFactID,
			RedactSecrets:       s.cfg.RedactSecrets,
			ValidFrom:           batch[len(batch)-1].Time.UTC(),
		})
		s.maintain(d, scope)
		usage = s.saveUsage(scope, d)
		if d.Watermarks == nil {
			d.Watermarks = make(map[string]int64)
		}
		d.Watermarks[thread] = last
		return nil
	})
	if err != nil {
		return update.ApplyReport{}, fmt.Errorf("save memory update: %w", err)
	}
	s.usage.commit(scope, usage)
	s.notifyChange(scope)
	report.Ignored = append(upd.Notes, report.Ignored...)
	if len(report.Ignored) > 0 {
		s.log.Info("memory update ignored parts of the model reply", "scope", scope.Key(), "thread", thread, "notes", report.Ignored)
	}
	s.log.Info("memory updated", "scope", scope.Key(), "thread", thread, "turns", len(batch),
		"facts_added", len(report.FactsAdded), "facts_removed", len(report.FactsRemoved), "sections", report.SectionsUpdated)
	return report, nil
}

// shortReason makes an error fit a tool result: one line, bounded.
func shortReason(err error) string {
	msg := strings.Join(strings.Fields(err.Error()), " ")
	if len(msg) > 300 {
		msg = msg[:300] + "…"
	}
	return msg
}
