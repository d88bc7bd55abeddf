package storetest

import (
	"fmt"
	"runtime"
	"sync"
	"testing"

	"github.com/mnemo-mcp/mnemo/memory"
)

// testConcurrentAppend has 8 goroutines append 100 turns each, one per
// call, while two readers tail the log; see ConcurrentAppend.
func testConcurrentAppend(t *testing.T, s memory.Store) {
	ConcurrentAppend(t, []memory.Store{s}, memory.Scope{UserID: "busy", AgentName: "a"}, 8, 100)
}

// ConcurrentAppend has writers goroutines per store append perWriter turns
// each, one turn per call, to scope, while one reader per store tails the
// log with ReadTurns(last seen Seq). It checks that the Seqs handed out are
// exactly 1..N with no duplicate, that each returned Seq is stored with its
// turn, that each writer's turns keep their order, and that the readers
// never see a gap, a repeat or a reordering. Pass several stores opened on
// the same storage to test cross-instance locking.
func ConcurrentAppend(t *testing.T, stores []memory.Store, scope memory.Scope, writers, perWriter int) {
	t.Helper()
	total := int64(len(stores) * writers * perWriter)
	ctx := t.Context()

	var (
		mu    sync.Mutex
		bySeq = map[int64]string{} // seq → turn ID, as returned by AppendTurns
		write sync.WaitGroup
		read  sync.WaitGroup
		done  = make(chan struct{})
	)
	for si, s := range stores {
		for w := range writers {
			write.Go(func() {
				thread := fmt.Sprintf("s%d-w%d", si, w)
				for j := range perWriter {
					got, err := s.AppendTurns(ctx, scope, []memory.Turn{NewTurn(thread, j)})
					if err != nil || len(got) != 1 {
						t.Errorf("writer %s: AppendTurns #%d = %d turns, %v", thread, j, len(got), err)
						return
					}
					mu.Lock()
					if prev, dup := bySeq[got[0].Seq]; dup {
						t.Errorf("seq %d handed out twice: %s and %s", got[0].Seq, prev, got[0].ID)
					}
					bySeq[got[0].Seq] = got[0].ID
					mu.Unlock()
				}
			})
		}
		read.Go(func() { tail(t, s, scope, total, done) })
	}
	write.Wait()
	close(done)
	read.Wait()
	if t.Failed() {
		return
	}

	for _, s := range stores {
		all := MustReadTurns(t, s, scope, 0)
		CheckSeqs(t, all, 1, total)
		lastOf := map[string]int64{} // thread → last Seq seen
		for _, turn := range all {
			if id := bySeq[turn.Seq]; turn.ID != id {
				t.Fatalf("seq %d holds turn %s, but AppendTurns returned that seq for %s", turn.Seq, turn.ID, id)
			}
			if prev, ok := lastOf[turn.ThreadID]; ok && turn.Seq <= prev {
				t.Fatalf("thread %s: seq %d stored after %d", turn.ThreadID, turn.Seq, prev)
			}
			lastOf[turn.ThreadID] = turn.Seq
		}
	}
}

// tail polls ReadTurns(last seen) until it has seen total turns, and
// reports a gap, a repeat or an error. done is closed when every writer
// has returned; a poll after that must see everything.
func tail(t *testing.T, s memory.Store, scope memory.Scope, total int64, done <-chan struct{}) {
	last := int64(0)
	for {
		finished := false
		select {
		case <-done:
			finished = true
		default:
		}
		got, err := s.ReadTurns(t.Context(), scope, last)
		if err != nil {
			t.Errorf("reader: ReadTurns(%d) error: %v", last, err)
			return
		}
		for i, turn := range got {
			if want := last + int64(i) + 1; turn.Seq != want {
				t.Errorf("reader: ReadTurns(%d) returned seqs %v: seq %d where %d was due (a gap or a reordering)", last, Seqs(got), turn.Seq, want)
				return
			}
		}
		last += int64(len(got))
		switch {
		case last == total:
			return
		case finished:
			t.Errorf("reader: saw %d turns after all writers finished, want %d", last, total)
			return
		case len(got) == 0:
			runtime.Gosched()
		}
	}
}

// testConcurrentUpdate has 8 goroutines each run 10 updates that add one
// fact, while two readers load the document; see ConcurrentUpdate.
func testConcurrentUpdate(t *testing.T, s memory.Store) {
	ConcurrentUpdate(t, []memory.Store{s}, memory.Scope{UserID: "busy-doc"}, 8, 10)
}

// ConcurrentUpdate has writers goroutines per store run perWriter
// UpdateDocument calls each, every one adding one fact, while one reader
// per store loads the document. No update may be lost: the document ends
// with every fact, Revision equals the number of updates, each update
// returned a distinct Revision, and readers only ever see whole documents
// (one fact per revision) with non-decreasing revisions.
func ConcurrentUpdate(t *testing.T, stores []memory.Store, scope memory.Scope, writers, perWriter int) {
	t.Helper()
	total := len(stores) * writers * perWriter
	ctx := t.Context()
	var (
		mu    sync.Mutex
		revs  = map[int64]bool{}
		write sync.WaitGroup
		read  sync.WaitGroup
		done  = make(chan struct{})
	)
	for si, s := range stores {
		for w := range writers {
			write.Go(func() {
				for j := range perWriter {
					id := fmt.Sprintf("fact_s%dw%dn%d", si, w, j)
					d, err := s.UpdateDocument(ctx, scope, func(d *memory.Document) error {
						d.Facts = append(d.Facts, memory.Fact{ID: id, Content: id, Category: memory.CategoryContext, Confidence: 0.8})
						return nil
					})
					if err != nil {
						t.Errorf("UpdateDocument adding %s: %v", id, err)
						return
					}
					mu.Lock()
					if revs[d.Revision] {
						t.Errorf("revision %d returned twice", d.Revision)
					}
					revs[d.Revision] = true
					mu.Unlock()
				}
			})
		}
		read.Go(func() {
			prev := int64(-1)
			for {
				select {
				case <-done:
					return
				default:
				}
				d, err := s.LoadDocument(ctx, scope)
				if err != nil {
					t.Errorf("reader: LoadDocument error: %v", err)
					return
				}
				if d.Revision < prev || int64(len(d.Facts)) != d.Revision {
					t.Errorf("reader: revision %d with %d facts after revision %d; want non-decreasing revisions with one fact each", d.Revision, len(d.Facts), prev)
					return
				}
				prev = d.Revision
				runtime.Gosched()
			}
		})
	}
	write.Wait()
	close(done)
	read.Wait()

	for _, s := range stores {
		d := MustLoadDocument(t, s, scope)
		if d.Revision != int64(total) || len(d.Facts) != total {
			t.Errorf("after %d concurrent updates: revision %d with %d facts, want %d and %d (lost updates)", total, d.Revision, len(d.Facts), total, total)
		}
		seen := map[string]bool{}
		for _, f := range d.Facts {
			seen[f.ID] = true
		}
		for si := range stores {
			for w := range writers {
				for j := range perWriter {
					if id := fmt.Sprintf("fact_s%dw%dn%d", si, w, j); !seen[id] {
						t.Errorf("fact %s lost", id)
					}
				}
			}
		}
	}
}
