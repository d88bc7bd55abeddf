package engine

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/mnemo-mcp/mnemo/memory"
)

// Flush runs the pending memory updates of a scope (or one thread) now,
// waiting up to flush_timeout, and reports exactly what changed. It
// answers at once when an update fails or the endpoint fails an attempt,
// and at flush_timeout with what is still running; unfinished work goes on
// in the background. Without a
// language model nothing can be extracted: it says so and leaves every turn
// pending, stored and searchable.
func (s *Service) Flush(ctx context.Context, req memory.FlushRequest) (*memory.FlushResult, error) {
	scope, err := s.resolveScope(req.UserID, req.AgentName)
	if err != nil {
		return nil, err
	}
	if req.ThreadID != "" {
		if err := memory.ValidateID("thread_id", req.ThreadID); err != nil {
			return nil, err
		}
	}
	res := &memory.FlushResult{Scope: scope, ThreadID: req.ThreadID, FactsAdded: []string{}, FactsRemoved: []string{}, SectionsUpdated: []string{}}

	st, err := s.loadedState(ctx, scope)
	if err != nil {
		return nil, err
	}
	var byThread map[string]int
	if s.llm != nil { // without a model no turn is pending: nothing to count
		_, byThread = st.pending()
	}
	// The pages stored since the last retrieval go into their mid-term
	// sessions now, which the next retrieval would do first.
	s.prepareToRank(ctx, st)
	st.mu.Unlock()

	ctx, cancel := context.WithTimeout(ctx, s.cfg.FlushTimeout)
	defer cancel()
	if s.llm == nil {
		if res.EmbeddingBacklog, err = s.awaitEmbeddings(ctx, scope); err != nil {
			return nil, err
		}
		return s.finishFlush(context.WithoutCancel(ctx), res, scope, req.ThreadID, nil)
	}
	threads := map[string]*queueEntry{}
	for t := range byThread {
		if req.ThreadID == "" || t == req.ThreadID {
			threads[t] = &queueEntry{scope: scope, thread: t}
		}
	}
	for _, e := range s.queue.take(scope, req.ThreadID) {
		threads[e.thread] = e // keeps its failures in a row, for the backoff
	}
	order := make([]string, 0, len(threads))
	for t := range threads {
		order = append(order, t)
	}
	sort.Strings(order)
	pendingTurns := 0 // for progress: turns processed of pending
	for _, t := range order {
		pendingTurns += byThread[t]
	}
	if len(order) == 0 {
		if res.EmbeddingBacklog, err = s.awaitEmbeddings(ctx, scope); err != nil {
			return nil, err
		}
		return s.finishFlush(context.WithoutCancel(ctx), res, scope, req.ThreadID, nil)
	}

	// The updates run in the background, on the service's context: the
	// wait below is bounded well under the clients' request time-outs,
	// and what is unfinished then goes on after the answer.
	failed, lastNote := s.queue.failedSignal(scope)
	events := make(chan flushEvent, 2*len(order))
	ok := s.queue.background(func(bg context.Context) {
		for i, thread := range order {
			// A failed run stays pending; the queue retries it with backoff.
			rep, err := s.queue.run(bg, threads[thread], false, runOptions{retry: true, started: func(seq uint64) {
				events <- flushEvent{thread: thread, index: i, start: true, seq: seq}
			}})
			events <- flushEvent{thread: thread, index: i, rep: rep, err: err}
		}
	})
	if !ok {
		return s.finishFlush(context.WithoutCancel(ctx), res, scope, req.ThreadID, map[string]string{req.ThreadID: "the server is shutting down"})
	}
	reasons := map[string]string{}
	running := map[string]uint64{} // thread → last note before it started
	finished := 0
	report := func(ev flushEvent) {
		if ev.start {
			running[ev.thread] = ev.seq
			if req.Progress != nil {
				req.Progress(res.TurnsProcessed, max(pendingTurns, res.TurnsProcessed),
					fmt.Sprintf("updating memory from thread %s (%d of %d)", ev.thread, ev.index+1, len(order)))
			}
			return
		}
		delete(running, ev.thread)
		finished++
		if ev.rep != nil {
			res.TurnsProcessed += ev.rep.TurnsProcessed
			res.FactsAdded = append(res.FactsAdded, ev.rep.FactsAdded...)
			res.FactsRemoved = append(res.FactsRemoved, ev.rep.FactsRemoved...)
			res.FactsConfirmed = append(res.FactsConfirmed, ev.rep.FactsConfirmed...)
			res.SectionsUpdated = appendNew(res.SectionsUpdated, ev.rep.SectionsUpdated...)
			res.Ignored = append(res.Ignored, ev.rep.Ignored...)
		}
		if ev.err != nil {
			reasons[ev.thread] = shortReason(ev.err)
			if errors.Is(ev.err, memory.ErrBudgetSpent) {
				reasons[ev.thread] = "deferred: the daily token budget is spent (daily_token_budget); it resumes tomorrow (UTC)"
			}
			if n, ok := s.queue.lastFailure(scope, ev.thread); ok && n.seq > lastNote {
				reasons[ev.thread] = n.String()
			}
		}
	}
	drain := func() {
		for {
			select {
			case ev := <-events:
				report(ev)
			default:
				return
			}
		}
	}
wait:
	for finished < len(order) && len(reasons) == 0 {
		select {
		case ev := <-events:
			report(ev)
		case <-failed:
			// An attempt failed and is retried in the background: say so
			// now rather than wait out the retries. The run's start is
			// already sent: it precedes any attempt.
			failed, _ = s.queue.failedSignal(scope)
			drain()
			for thread, since := range running {
				if n, ok := s.queue.lastFailure(scope, thread); ok && n.seq > since {
					reasons[thread] = n.String()
				}
			}
		case <-ctx.Done():
			// flush_timeout passed, or the client gave up.
			break wait
		}
	}
	// What finished meanwhile counts as finished.
	drain()
	for _, thread := range order[finished:] {
		res.Running = append(res.Running, thread)
		if reasons[thread] == "" {
			reasons[thread] = fmt.Sprintf("still being processed in the background after waiting %s (flush_timeout)", s.cfg.FlushTimeout)
		}
	}
	// After a failure or at the bound, only count the embedding backlog.
	embedCtx := ctx
	if len(res.Running) > 0 || len(reasons) > 0 {
		var stop context.CancelFunc
		embedCtx, stop = context.WithCancel(ctx)
		stop()
	}
	if res.EmbeddingBacklog, err = s.awaitEmbeddings(embedCtx, scope); err != nil {
		return nil, err
	}
	if req.Progress != nil {
		msg := "done"
		if len(res.Running) > 0 {
			msg = "still running in the background: " + strings.Join(res.Running, ", ")
		}
		req.Progress(res.TurnsProcessed, max(pendingTurns, res.TurnsProcessed), msg)
	}
	return s.finishFlush(context.WithoutCancel(ctx), res, scope, req.ThreadID, reasons)
}

// flushEvent is what the background run of a flush tells the waiting
// call: a thread started, or finished with its report or error.
type flushEvent struct {
	thread string
	index  int
	start  bool
	seq    uint64 // of the last failure noted before the start
	rep    *threadReport
	err    error
}

// finishFlush fills in what is still pending and why.
func (s *Service) finishFlush(ctx context.Context, res *memory.FlushResult, scope memory.Scope, thread string, reasons map[string]string) (*memory.FlushResult, error) {
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
	case s.llm == nil:
		res.Reason = "no extraction model is configured, and none is needed — the facts the host's model passes with add_memory " +
			"are kept at once, so nothing waits to be distilled, and every stored exchange is searchable"
	case pending == 0:
	case len(reasons) > 0:
		parts := make([]string, 0, len(reasons))
		for t, r := range reasons {
			parts = append(parts, "thread "+t+": "+r)
		}
		sort.Strings(parts)
		next := "will be retried in the background"
		if len(res.Running) > 0 {
			next = "the update goes on in the background"
		}
		res.Reason = fmt.Sprintf("%d turn(s) still pending and %s — %s", pending, next, strings.Join(parts, "; "))
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
