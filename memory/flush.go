package memory

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
)

// FlushRequest is one flush_memory call: the scope, optionally one thread.
type FlushRequest struct {
	UserID    string
	AgentName string
	ThreadID  string
	// Progress, when set, is called before each thread is processed.
	Progress func(done, total int, message string)
}

// FlushResult reports what a flush did and what is still pending, and why.
type FlushResult struct {
	Scope          Scope    `json:"scope"`
	ThreadID       string   `json:"thread_id,omitempty"`
	TurnsProcessed int      `json:"turns_processed"`
	FactsAdded     []string `json:"facts_added"`
	FactsRemoved   []string `json:"facts_removed"`
	// FactsConfirmed are facts stated again by the conversations: their
	// confidence rose.
	FactsConfirmed []string `json:"facts_confirmed,omitempty"`
	// Maintenance is what the maintenance pass at the end of the flush
	// merged, decayed and retired (consolidation and staleness).
	Maintenance     *MaintainReport `json:"maintenance,omitempty"`
	SectionsUpdated []string        `json:"sections_updated"`
	Ignored         []string        `json:"ignored,omitempty"`
	Pending         PendingInfo     `json:"pending"`
	// EmbeddingBacklog is how many stored exchanges are not embedded yet
	// (vector retrieval only); they are ranked by words until they are.
	EmbeddingBacklog int `json:"embedding_backlog,omitempty"`
	// Reason says why turns are still pending, if any are.
	Reason string `json:"reason,omitempty"`
}

// Flush runs the pending memory updates of a scope (or one thread) now,
// waiting up to flush_timeout, and reports exactly what changed. Without a
// language model nothing can be extracted: it says so and leaves every turn
// pending, stored and searchable.
func (s *Service) Flush(ctx context.Context, req FlushRequest) (*FlushResult, error) {
	scope, err := s.resolveScope(req.UserID, req.AgentName)
	if err != nil {
		return nil, err
	}
	if req.ThreadID != "" {
		if err := ValidateID("thread_id", req.ThreadID); err != nil {
			return nil, err
		}
	}
	res := &FlushResult{Scope: scope, ThreadID: req.ThreadID, FactsAdded: []string{}, FactsRemoved: []string{}, SectionsUpdated: []string{}}

	st, err := s.loadedState(ctx, scope)
	if err != nil {
		return nil, err
	}
	_, byThread := st.pending()
	st.mu.Unlock()

	ctx, cancel := context.WithTimeout(ctx, s.cfg.FlushTimeout)
	defer cancel()
	if s.llm == nil {
		if res.EmbeddingBacklog, err = s.awaitEmbeddings(ctx, scope); err != nil {
			return nil, err
		}
		return s.finishFlush(context.WithoutCancel(ctx), res, scope, req.ThreadID, nil)
	}
	threads := map[string]bool{}
	for t := range byThread {
		if req.ThreadID == "" || t == req.ThreadID {
			threads[t] = true
		}
	}
	for _, e := range s.queue.take(scope, req.ThreadID) {
		threads[e.thread] = true
	}
	order := make([]string, 0, len(threads))
	for t := range threads {
		order = append(order, t)
	}
	sort.Strings(order)

	reasons := map[string]string{}
	for i, thread := range order {
		if req.Progress != nil {
			req.Progress(i, len(order), fmt.Sprintf("updating memory from thread %s", thread))
		}
		rep, err := s.queue.run(ctx, scope, thread, false)
		if rep != nil {
			res.TurnsProcessed += rep.TurnsProcessed
			res.FactsAdded = append(res.FactsAdded, rep.FactsAdded...)
			res.FactsRemoved = append(res.FactsRemoved, rep.FactsRemoved...)
			res.FactsConfirmed = append(res.FactsConfirmed, rep.FactsConfirmed...)
			res.SectionsUpdated = appendNew(res.SectionsUpdated, rep.SectionsUpdated...)
			res.Ignored = append(res.Ignored, rep.Ignored...)
		}
		if err != nil {
			switch {
			case errors.Is(err, ErrBudgetSpent):
				reasons[thread] = "deferred: the daily token budget is spent (daily_token_budget); it resumes tomorrow (UTC)"
			case errors.Is(err, context.DeadlineExceeded) || ctx.Err() != nil:
				reasons[thread] = fmt.Sprintf("flush timed out after %s", s.cfg.FlushTimeout)
			default:
				reasons[thread] = shortReason(err)
			}
			// The turns stay pending; the background queue retries them.
			s.queue.schedule(scope, thread, Signals{}, backoff(0), false)
		}
	}
	if res.EmbeddingBacklog, err = s.awaitEmbeddings(ctx, scope); err != nil {
		return nil, err
	}
	if req.Progress != nil {
		req.Progress(len(order), len(order), "done")
	}
	return s.finishFlush(context.WithoutCancel(ctx), res, scope, req.ThreadID, reasons)
}

// finishFlush fills in what is still pending and why.
func (s *Service) finishFlush(ctx context.Context, res *FlushResult, scope Scope, thread string, reasons map[string]string) (*FlushResult, error) {
	// The periodic pass: consolidation and staleness, also without a model.
	if m, err := s.maintainScope(ctx, scope); err != nil {
		s.log.Warn("memory maintenance failed; it runs again at the next update or flush", "scope", scope.Key(), "err", err)
	} else if m.Changed() {
		res.Maintenance = &m
	}
	st, err := s.loadedState(ctx, scope)
	if err != nil {
		return nil, err
	}
	res.Pending = s.pendingInfo(st, thread)
	st.mu.Unlock()
	pending := res.Pending.Turns
	if thread != "" {
		pending = res.Pending.Threads[thread]
	}
	switch {
	case pending == 0:
	case s.llm == nil:
		res.Reason = fmt.Sprintf("no LLM is configured, so nothing was extracted: %d turn(s) stay stored, searchable and pending until an OpenAI-compatible endpoint is configured (MNEMO_LLM_BASE_URL / OPENAI_API_KEY)", pending)
	case len(reasons) > 0:
		parts := make([]string, 0, len(reasons))
		for t, r := range reasons {
			parts = append(parts, "thread "+t+": "+r)
		}
		sort.Strings(parts)
		res.Reason = fmt.Sprintf("%d turn(s) still pending and will be retried in the background — %s", pending, strings.Join(parts, "; "))
	default:
		res.Reason = fmt.Sprintf("%d turn(s) arrived during the flush and are queued", pending)
	}
	if n := res.EmbeddingBacklog; n > 0 {
		why := "they are being embedded in the background"
		if s.breakerOpen() {
			why = "the embeddings endpoint is not answering (check MNEMO_EMBEDDING_BASE_URL); it is retried in the background"
		}
		res.Reason = strings.TrimPrefix(res.Reason+"; ", "; ") + fmt.Sprintf("%d stored exchange(s) not embedded yet and ranked by words only until they are: %s", n, why)
	}
	return res, nil
}

// appendNew appends the values not yet in list.
func appendNew(list []string, values ...string) []string {
	for _, v := range values {
		found := false
		for _, x := range list {
			if x == v {
				found = true
				break
			}
		}
		if !found {
			list = append(list, v)
		}
	}
	return list
}
