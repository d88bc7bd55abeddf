package engine

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"sync"
	"time"

	"github.com/mnemo-mcp/mnemo/memory"
)

// queueKey identifies pending work: one thread of one scope (DeerFlow's
// (thread, user, agent) key).
type queueKey struct {
	scope  string
	thread string
}

// queueEntry is a thread with turns waiting for the updater. The turns
// themselves are not held here: they are the thread's turns above its
// watermark in the durable turn log, so a crash loses no work.
type queueEntry struct {
	scope    memory.Scope
	thread   string
	signals  memory.Signals
	timer    *time.Timer
	attempts int // failed updates in a row, for backoff
}

// queueWork is the work the queue runs, as functions, so that the
// debouncer does not depend on the Service and can be driven alone.
type queueWork struct {
	// ctx is the context of background runs; its owner cancels it when
	// the grace period at shutdown is over.
	ctx context.Context
	// update brings one thread of a scope up to date.
	update func(ctx context.Context, scope memory.Scope, thread string) (*threadReport, error)
	// tiers runs the scope's tier work; the queue runs it after each
	// successful update and on request (queue.tiers).
	tiers func(ctx context.Context, scope memory.Scope) error
	log   *slog.Logger
	// lock, when set, takes the scope's updater lock shared with other
	// processes (ScopeLocker.TryLockScope); ok false means another
	// process holds it.
	lock func(ctx context.Context, scope memory.Scope) (unlock func(), ok bool, err error)
}

// errUpdatingElsewhere means another process holds the scope's updater
// lock: it is running the scope's pending work, which it reads from the
// store when it runs.
var errUpdatingElsewhere = errors.New("another process is updating this memory")

// lockPoll is how often a flush asks again for an updater lock another
// process holds.
const lockPoll = 50 * time.Millisecond

// lockShared takes the scope's updater lock shared with other processes,
// when the store has one. With wait it asks again until ctx ends (a flush
// waits for the other process's update, then runs what is left);
// without, it returns errUpdatingElsewhere at once when the lock is held.
func (q *queue) lockShared(ctx context.Context, scope memory.Scope, wait bool) (func(), error) {
	if q.work.lock == nil {
		return func() {}, nil
	}
	for {
		unlock, ok, err := q.work.lock(ctx, scope)
		switch {
		case err != nil:
			return nil, fmt.Errorf("take the updater lock of %s: %w", scope.Key(), err)
		case ok:
			return unlock, nil
		case !wait:
			return nil, errUpdatingElsewhere
		}
		t := time.NewTimer(lockPoll)
		select {
		case <-ctx.Done():
			t.Stop()
			return nil, fmt.Errorf("wait for the update another process runs on %s: %w", scope.Key(), ctx.Err())
		case <-t.C:
		}
	}
}

// queue debounces pending work per thread and runs it with bounded
// parallelism, one update at a time per scope.
type queue struct {
	work     queueWork
	debounce time.Duration

	mu      sync.Mutex
	entries map[queueKey]*queueEntry
	closed  bool
	running sync.WaitGroup

	sem chan struct{} // bounds scopes updated in parallel
	// scopeLocks serialise updates per scope; channels rather than
	// mutexes so that a waiting flush can give up when its context ends.
	scopeLocks map[string]chan struct{}
	lastErrors map[queueKey]failureNote // survives the entry, for reports
	// failed is closed (and replaced) whenever a failure of the scope is
	// noted, so that a waiting flush can answer at once.
	failedCh map[string]chan struct{}
	noteSeq  uint64

	// tierPending marks scopes whose tier work is scheduled (tiers);
	// tierRetry holds, per scope whose last tier run failed, the failures
	// in a row and the time before which no new run starts.
	tierPending map[string]bool
	tierRetry   map[string]tierBackoff
}

// failureNote is the last failure of one thread's update: why, how many
// attempts failed in a row, and when the next one is due.
type failureNote struct {
	reason string
	failed int
	next   time.Time
	// endpoint is set when the model's endpoint failed (an outage, a
	// timeout), rather than its reply.
	endpoint bool
	seq      uint64 // order of notes, across scopes
}

// String says what failed and what happens next, in one line.
func (n failureNote) String() string {
	s := "the update failed: " + n.reason
	if n.endpoint {
		s = "LLM endpoint failing: " + n.reason
	}
	if n.failed > 0 {
		s += fmt.Sprintf(", %s failed", plural(n.failed, "attempt"))
	}
	if wait := time.Until(n.next); !n.next.IsZero() && wait > 0 {
		if wait >= time.Second {
			wait = wait.Round(time.Second)
		}
		s += ", next retry in " + wait.Round(time.Millisecond).String()
	}
	return s
}

// plural formats n with noun, adding an s unless n is 1.
func plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}

type tierBackoff struct {
	failures int
	until    time.Time
}

func newQueue(work queueWork, debounce time.Duration, parallel int) *queue {
	return &queue{
		work:       work,
		debounce:   debounce,
		entries:    make(map[queueKey]*queueEntry),
		sem:        make(chan struct{}, parallel),
		scopeLocks: make(map[string]chan struct{}),
		lastErrors: make(map[queueKey]failureNote),
		failedCh:   make(map[string]chan struct{}),

		tierPending: make(map[string]bool),
		tierRetry:   make(map[string]tierBackoff),
	}
}

// tiers runs the scope's tier work (runTiers: session summaries, analysis
// of hot sessions) now, in the background: a retrieval that makes a
// session hot does not wait for the next update of a thread. A scope has
// at most one such run waiting; after a failed run, new ones wait out the
// same backoff as failed updates, so a model that is down is not asked on
// every retrieval.
func (q *queue) tiers(scope memory.Scope) {
	key := scope.Key()
	q.mu.Lock()
	if q.closed || q.tierPending[key] || time.Now().Before(q.tierRetry[key].until) {
		q.mu.Unlock()
		return
	}
	q.tierPending[key] = true
	q.running.Add(1)
	q.mu.Unlock()
	go func() {
		defer q.running.Done()
		ctx := q.work.ctx
		release, err := q.acquire(ctx, scope, true)
		q.mu.Lock()
		delete(q.tierPending, key)
		q.mu.Unlock()
		if err != nil {
			return
		}
		defer release()
		unlock, err := q.lockShared(ctx, scope, false)
		if err != nil {
			// Another process runs the scope's work (or the storage is
			// down): a later run catches up.
			return
		}
		defer unlock()
		err = q.work.tiers(ctx, scope)
		q.mu.Lock()
		defer q.mu.Unlock()
		if err == nil {
			delete(q.tierRetry, key)
			return
		}
		b := q.tierRetry[key]
		q.tierRetry[key] = tierBackoff{failures: b.failures + 1, until: time.Now().Add(backoff(b.failures))}
	}()
}

// enqueue records new pending turns for a thread and (re)arms its timer:
// the update runs once the thread has been quiet for the debounce time.
// Signals are ORed with those already pending.
func (q *queue) enqueue(scope memory.Scope, thread string, sig memory.Signals) {
	q.schedule(scope, thread, sig, q.debounce, false)
}

func (q *queue) schedule(scope memory.Scope, thread string, sig memory.Signals, delay time.Duration, retry bool) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.closed {
		return
	}
	key := queueKey{scope.Key(), thread}
	e, ok := q.entries[key]
	if !ok {
		e = &queueEntry{scope: scope, thread: thread}
		q.entries[key] = e
	}
	e.signals = e.signals.Or(sig)
	if e.attempts > 0 && !retry {
		// A failing thread keeps its backoff; new turns do not hammer the endpoint.
		return
	}
	if e.timer != nil {
		e.timer.Stop()
	}
	e.timer = time.AfterFunc(delay, func() { q.fire(key, e) })
}

// fire runs a due entry in the background.
func (q *queue) fire(key queueKey, e *queueEntry) {
	q.mu.Lock()
	if q.closed || q.entries[key] != e {
		q.mu.Unlock()
		return
	}
	delete(q.entries, key)
	q.running.Add(1)
	q.mu.Unlock()
	go func() {
		defer q.running.Done()
		_, _ = q.run(q.work.ctx, e, true, runOptions{retry: true})
	}()
}

// failed re-arms an entry whose update failed, with capped exponential
// backoff and jitter; its turns stay pending on disk meanwhile.
func (q *queue) failed(e *queueEntry, err error) {
	q.work.log.Warn("memory update failed; will retry", "scope", e.scope.Key(), "thread", e.thread, "attempt", e.attempts+1, "err", err)
	delay := backoff(e.attempts)
	q.note(e.scope, e.thread, failureNote{reason: shortReason(err), failed: e.attempts + 1, next: time.Now().Add(delay),
		endpoint: errors.Is(err, memory.ErrLLMUnavailable) || errors.Is(err, context.DeadlineExceeded)})
	q.mu.Lock()
	key := queueKey{e.scope.Key(), e.thread}
	if cur, ok := q.entries[key]; ok {
		// New turns arrived meanwhile; keep their entry, carry the failure.
		cur.attempts = max(cur.attempts, e.attempts+1)
		q.mu.Unlock()
		return
	}
	e.attempts++
	q.entries[key] = e
	q.mu.Unlock()
	q.schedule(e.scope, e.thread, memory.Signals{}, delay, true)
}

// backoff is 30 s doubling per failure up to 30 min, with ±20 % jitter.
func backoff(attempts int) time.Duration {
	d := 30 * time.Second << min(attempts, 6)
	d = min(d, 30*time.Minute)
	return time.Duration(float64(d) * (0.8 + 0.4*rand.Float64()))
}

// take removes and returns the entries of a scope (one thread when thread
// is not empty), stopping their timers: the caller runs them now.
func (q *queue) take(scope memory.Scope, thread string) []*queueEntry {
	q.mu.Lock()
	defer q.mu.Unlock()
	var out []*queueEntry
	for k, e := range q.entries {
		if k.scope == scope.Key() && (thread == "" || k.thread == thread) {
			e.timer.Stop()
			delete(q.entries, k)
			out = append(out, e)
		}
	}
	return out
}

// failures returns why the last update of each failing thread of a scope
// failed.
func (q *queue) failures(scope memory.Scope) map[string]string {
	q.mu.Lock()
	defer q.mu.Unlock()
	var out map[string]string
	for k, n := range q.lastErrors {
		if k.scope == scope.Key() {
			if out == nil {
				out = make(map[string]string)
			}
			out[k.thread] = n.reason
		}
	}
	return out
}

// note records a failure of one thread's update (a failed run, or a failed
// attempt the LLM retries within the run) and wakes whoever waits on the
// scope's failures.
func (q *queue) note(scope memory.Scope, thread string, n failureNote) {
	q.mu.Lock()
	defer q.mu.Unlock()
	k := queueKey{scope.Key(), thread}
	q.noteSeq++
	n.seq = q.noteSeq
	q.lastErrors[k] = n
	if ch, ok := q.failedCh[k.scope]; ok {
		close(ch)
		delete(q.failedCh, k.scope)
	}
}

// failedSignal returns a channel closed at the next failure noted for
// the scope, and the sequence number of the last note so far.
func (q *queue) failedSignal(scope memory.Scope) (<-chan struct{}, uint64) {
	q.mu.Lock()
	defer q.mu.Unlock()
	ch, ok := q.failedCh[scope.Key()]
	if !ok {
		ch = make(chan struct{})
		q.failedCh[scope.Key()] = ch
	}
	return ch, q.noteSeq
}

// lastFailure returns the failure last noted for a thread of the scope.
func (q *queue) lastFailure(scope memory.Scope, thread string) (failureNote, bool) {
	q.mu.Lock()
	defer q.mu.Unlock()
	n, ok := q.lastErrors[queueKey{scope.Key(), thread}]
	return n, ok
}

// background runs fn on the queue's background context, as work that
// close waits for; it reports false, running nothing, once closed.
func (q *queue) background(fn func(ctx context.Context)) bool {
	q.mu.Lock()
	if q.closed {
		q.mu.Unlock()
		return false
	}
	q.running.Add(1)
	q.mu.Unlock()
	go func() {
		defer q.running.Done()
		fn(q.work.ctx)
	}()
	return true
}

// lockScopes takes the update lock of every scope, in the order given,
// and returns what releases them; when ctx ends first it releases those
// it took and returns ctx's error.
func (q *queue) lockScopes(ctx context.Context, scopes []memory.Scope) (func(), error) {
	for i, sc := range scopes {
		select {
		case q.scopeLock(sc) <- struct{}{}:
		case <-ctx.Done():
			for _, h := range scopes[:i] {
				<-q.scopeLock(h)
			}
			return nil, ctx.Err()
		}
	}
	return func() {
		for _, sc := range scopes {
			<-q.scopeLock(sc)
		}
	}, nil
}

// drop removes the pending entries and the recorded failures of the
// scopes whose key match accepts, stopping their timers.
func (q *queue) drop(match func(scopeKey string) bool) {
	q.mu.Lock()
	defer q.mu.Unlock()
	for k, e := range q.entries {
		if match(k.scope) {
			e.timer.Stop()
			delete(q.entries, k)
		}
	}
	for k := range q.lastErrors {
		if match(k.scope) {
			delete(q.lastErrors, k)
		}
	}
}

// scopeLock returns the one-slot semaphore that serialises updates of one
// scope.
func (q *queue) scopeLock(scope memory.Scope) chan struct{} {
	q.mu.Lock()
	defer q.mu.Unlock()
	m, ok := q.scopeLocks[scope.Key()]
	if !ok {
		m = make(chan struct{}, 1)
		q.scopeLocks[scope.Key()] = m
	}
	return m
}

// acquire takes the scope's update lock and, for background work
// (bounded), then a slot of the parallelism limit, so that a scope waiting
// on itself never holds a slot another scope could use. It returns what
// releases them, or why it gave up (ctx ended).
func (q *queue) acquire(ctx context.Context, scope memory.Scope, bounded bool) (func(), error) {
	lock := q.scopeLock(scope)
	select {
	case lock <- struct{}{}:
	case <-ctx.Done():
		return nil, fmt.Errorf("wait for running update of %s: %w", scope.Key(), ctx.Err())
	}
	if bounded {
		select {
		case q.sem <- struct{}{}:
		case <-ctx.Done():
			<-lock
			return nil, fmt.Errorf("wait for an update slot: %w", ctx.Err())
		}
	}
	return func() {
		if bounded {
			<-q.sem
		}
		<-lock
	}, nil
}

// run updates one thread of a scope, waiting for any update of the same
// scope that is in progress (a flush during an update is queued behind
// it, not dropped). Background runs (bounded) also take a slot of the
// parallelism limit, after the scope lock, so a scope waiting on itself
// never holds a slot another scope could use.
func (q *queue) run(ctx context.Context, e *queueEntry, bounded bool, opt runOptions) (*threadReport, error) {
	scope, thread := e.scope, e.thread
	release, err := q.acquire(ctx, scope, bounded)
	if err != nil {
		if opt.retry && ctx.Err() == nil {
			q.failed(e, err)
		}
		return nil, err
	}
	defer release()
	unlock, err := q.lockShared(ctx, scope, !bounded)
	switch {
	case errors.Is(err, errUpdatingElsewhere) && opt.retry:
		// The process holding the lock reads every pending turn when it
		// runs; look again after the debounce in case it read before
		// ours arrived. No model call is made for turns it covered.
		q.schedule(scope, thread, e.signals, q.debounce, false)
		return nil, err
	case err != nil:
		if opt.retry && ctx.Err() == nil && !errors.Is(err, errUpdatingElsewhere) {
			q.failed(e, err)
		}
		return nil, err
	}
	defer unlock()
	if opt.started != nil {
		q.mu.Lock()
		seq := q.noteSeq
		q.mu.Unlock()
		opt.started(seq)
	}
	rep, err := q.work.update(ctx, scope, thread)
	if err == nil {
		// Tier failures are logged and retried by a later run; the
		// thread's update itself succeeded.
		_ = q.work.tiers(ctx, scope)
	}
	switch {
	case err == nil:
		q.mu.Lock()
		_, hadFailed := q.lastErrors[queueKey{scope.Key(), thread}]
		delete(q.lastErrors, queueKey{scope.Key(), thread})
		q.mu.Unlock()
		if hadFailed {
			q.work.log.Info("memory update succeeded after failing; the model answers again", "scope", scope.Key(), "thread", thread)
		}
	case opt.retry && ctx.Err() == nil:
		// Noted while the scope is still locked, so that a flush waiting
		// behind this run never takes this failure for its own.
		q.failed(e, err)
	}
	return rep, err
}

// runOptions adjust one run of the queue.
type runOptions struct {
	// retry reschedules a failed run with backoff and notes the failure.
	retry bool
	// started is called once the scope is locked, with the sequence
	// number of the last failure noted so far.
	started func(seq uint64)
}

// close stops taking work and runs what is pending until ctx ends; what
// is left stays pending in the turn log for the next start.
func (q *queue) close(ctx context.Context) {
	q.mu.Lock()
	q.closed = true
	entries := make([]*queueEntry, 0, len(q.entries))
	for k, e := range q.entries {
		e.timer.Stop()
		delete(q.entries, k)
		entries = append(entries, e)
	}
	q.mu.Unlock()
	for _, e := range entries {
		if ctx.Err() != nil {
			break
		}
		if _, err := q.run(ctx, e, false, runOptions{}); err != nil {
			q.work.log.Warn("memory update at shutdown failed; turns stay pending", "scope", e.scope.Key(), "thread", e.thread, "err", err)
		}
	}
	done := make(chan struct{})
	go func() { q.running.Wait(); close(done) }()
	select {
	case <-done:
	case <-ctx.Done():
	}
}
