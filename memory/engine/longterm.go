package engine

import (
	"context"
	"fmt"
	"slices"

	"github.com/mnemo-mcp/mnemo/memory"
	"github.com/mnemo-mcp/mnemo/memory/tiers"
	"github.com/mnemo-mcp/mnemo/memory/update"
	"github.com/mnemo-mcp/mnemo/prompts"
)

// Tier work bounds for one background run.
const (
	// maxSummariesPerRun bounds the sessions summarised by the language
	// model in one run; the rest wait for the next.
	maxSummariesPerRun = 8
	// summaryPages is how many of a session's latest pages its summary
	// prompt shows.
	summaryPages = 20
	// maxPromotionsPerRun bounds the hot sessions analysed in one run.
	maxPromotionsPerRun = 4
	// minSummaryPages is the size at which a session is first summarised
	// by the model: below it, the extractive summary (the words of the
	// exchanges themselves) is as good, and most sessions stay that small,
	// so this keeps the model calls per exchange low.
	minSummaryPages = 4
)

// runTiers does the mid-term and long-term work that needs the language
// model, for one scope: summaries and keywords of sessions that are new
// enough (minSummaryPages) or have doubled since they were summarised,
// then the analysis of hot sessions into the profile and knowledge. The
// update queue runs it after a thread's update, and right away when a
// retrieval makes a session hot (queue.tiers); both are bounded and
// drained on Close like the updates. Failures are logged, returned, and
// retried by a later run.
func (s *Service) runTiers(ctx context.Context, scope memory.Scope) error {
	if s.llm == nil {
		return nil
	}
	var failed error
	if err := s.summarizeSessions(ctx, scope); err != nil {
		s.log.Warn("mid-term session summary failed; the extractive summary stays", "scope", scope.Key(), "err", err)
		failed = err
	}
	for range maxPromotionsPerRun {
		done, err := s.promoteHot(ctx, scope)
		if err != nil {
			s.log.Warn("long-term analysis of a hot session failed; it is retried later", "scope", scope.Key(), "err", err)
			return err
		}
		if !done {
			break
		}
	}
	return failed
}

// summaryJob is one session to summarise, snapshotted under the lock.
type summaryJob struct {
	num, pages   int
	id, dialogue string
}

// summarizeSessions asks the language model for the summary and keywords
// of the sessions that need them.
func (s *Service) summarizeSessions(ctx context.Context, scope memory.Scope) error {
	st, err := s.loadedState(ctx, scope)
	if err != nil {
		return err
	}
	var jobs []summaryJob
	if s.ensureMidTerm(ctx, st) != nil {
		nums := make([]int, 0, len(st.midTerm.Sessions))
		for num, ses := range st.midTerm.Sessions {
			if len(ses.Pages) >= max(minSummaryPages, 2*ses.SummarizedPages) {
				nums = append(nums, num)
			}
		}
		slices.Sort(nums)
		for _, num := range nums[:min(len(nums), maxSummariesPerRun)] {
			ses := st.midTerm.Sessions[num]
			from := max(0, len(ses.Pages)-summaryPages)
			turns := make([]memory.Turn, 0, len(ses.Pages)-from)
			for _, pg := range ses.Pages[from:] {
				turns = append(turns, *st.Turns[pg.Pos])
			}
			jobs = append(jobs, summaryJob{num: num, pages: len(ses.Pages), id: ses.ID, dialogue: update.ConversationForPrompt(turns)})
		}
	}
	st.mu.Unlock()

	for _, j := range jobs {
		prompt, err := prompts.SessionSummary(prompts.SessionSummaryData{Conversation: j.dialogue, MaxKeywords: tiers.MidTermKeywords})
		if err != nil {
			return err
		}
		reply, err := s.llm.Complete(ctx, memory.CompletionRequest{Prompt: prompt, JSON: true})
		s.recordLLM(scope, reply, err)
		if err != nil {
			return fmt.Errorf("ask llm for session summary: %w", err)
		}
		summary, keywords, perr := tiers.ParseSessionSummary(reply.Text)
		// The model's words follow the text rule like every other text
		// that enters memory.
		red := memory.Redactor{On: s.cfg.RedactSecrets}
		summary, _ = memory.CleanText(summary)
		summary = red.Text(summary)
		for i := range keywords {
			keywords[i], _ = memory.CleanText(keywords[i])
			keywords[i] = red.Text(keywords[i])
		}
		st, err := s.loadedState(ctx, scope)
		if err != nil {
			return err
		}
		if st.midTerm != nil {
			if ses := st.midTerm.Sessions[j.num]; ses != nil && ses.ID == j.id {
				// An unusable reply is not asked again until the session
				// doubles; the extractive summary stays meanwhile.
				ses.SummarizedPages = j.pages
				if perr == nil {
					ses.Summary = tiers.ClipRunes(summary, 4*tiers.MidTermSummaryRunes)
					ses.SetKeywords(keywords)
					ses.LLMSummary = true
					st.midTerm.Reindex(ses)
				}
				st.midTerm.Dirty = true
			}
		}
		st.mu.Unlock()
		if perr != nil {
			return perr
		}
	}
	return nil
}

// promoteHot analyses the unanalysed pages of the hottest session when
// its heat has reached mid_term_heat_threshold: the language model reads
// them for profile sections, user knowledge and assistant knowledge, which
// are applied through ApplyUpdate and Store.UpdateDocument, the one way
// long-term memory changes. Then the pages are marked analysed and the
// session's heat contributors reset: visits and interactions to zero, last
// visit to now. It reports whether a session was analysed.
func (s *Service) promoteHot(ctx context.Context, scope memory.Scope) (bool, error) {
	st, err := s.loadedState(ctx, scope)
	if err != nil {
		return false, err
	}
	var (
		ses   *memory.MidTermSession
		heat  float64
		batch []memory.Turn
		doc   *memory.Document
	)
	ses, heat = s.ensureMidTerm(ctx, st).Hottest(s.now(), s.heatWeights())
	if ses == nil || heat < s.cfg.MidTermHeatThreshold && !ses.Due {
		st.mu.Unlock()
		return false, nil
	}
	num, id := ses.Num, ses.ID
	for _, pg := range ses.Pages {
		if !pg.Analyzed && len(batch) < maxBatchTurns {
			batch = append(batch, *st.Turns[pg.Pos])
		}
	}
	doc = st.doc.Clone()
	st.mu.Unlock()

	prompt, err := prompts.SessionAnalysis(prompts.SessionAnalysisData{
		CurrentProfile: update.ProfileForPrompt(doc),
		Conversation:   update.ConversationForPrompt(batch),
		// Facts count as known too, so that the analysis does not store
		// them again as knowledge.
		KnownUserKnowledge:      update.KnowledgeLines(slices.Concat(doc.Knowledge, doc.Facts)),
		KnownAssistantKnowledge: update.KnowledgeLines(doc.AssistantKnowledge),
	})
	if err != nil {
		return false, err
	}
	reply, err := s.llm.Complete(ctx, memory.CompletionRequest{Prompt: prompt, JSON: true})
	s.recordLLM(scope, reply, err)
	if err != nil {
		return false, fmt.Errorf("ask llm to analyse session %s: %w", id, err)
	}
	upd, err := tiers.ParseAnalysis(reply.Text)
	if err != nil {
		return false, err
	}
	_, err = s.store.UpdateDocument(memory.WithActor(context.WithoutCancel(ctx), memory.ActorUpdater), scope, func(d *memory.Document) error {
		update.ApplyUpdate(d, upd, update.ApplyOptions{
			Source:              "mid-term " + id,
			CreatedReason:       "analysed from mid-term session " + id,
			Now:                 s.now().UTC(),
			ConfidenceThreshold: s.cfg.FactConfidenceThreshold,
			MaxFacts:            s.cfg.MaxFacts,
			MaxRemoveShare:      s.cfg.MaxRemoveShare,
			NewID:               s.newFactID,
			RedactSecrets:       s.cfg.RedactSecrets,
			MaxKnowledge:        s.cfg.LongTermKnowledgeCapacity,
		})
		return nil
	})
	if err != nil {
		return false, fmt.Errorf("save session analysis: %w", err)
	}
	s.notifyChange(scope)

	st, err = s.loadedState(ctx, scope)
	if err != nil {
		return true, err
	}
	defer st.mu.Unlock()
	if cur := st.midTerm.Sessions[num]; cur != nil && cur.ID == id {
		done := make(map[string]bool, len(batch))
		for _, t := range batch {
			done[t.ID] = true
		}
		for i := range cur.Pages {
			if done[cur.Pages[i].TurnID] {
				cur.Pages[i].Analyzed = true
			}
		}
		cur.Visits, cur.Interactions, cur.Due = 0, 0, false
		cur.LastVisit = s.now()
		st.midTerm.Dirty = true
		s.saveMidTermSoon(st)
	}
	s.log.Info("mid-term session analysed into long-term memory", "scope", scope.Key(), "session", id,
		"heat", update.Round4(heat), "pages", len(batch), "user_knowledge", len(upd.UserKnowledge), "assistant_knowledge", len(upd.AssistantKnowledge))
	return true, nil
}
