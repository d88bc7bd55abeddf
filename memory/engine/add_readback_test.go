package engine_test

import (
	"context"
	"log/slog"
	"sync/atomic"
	"testing"

	"github.com/mnemo-mcp/mnemo/memory"
	"github.com/mnemo-mcp/mnemo/memory/engine"
	"github.com/mnemo-mcp/mnemo/memory/files"
	"github.com/mnemo-mcp/mnemo/memory/tiktoken"
)

func mustTokens(tb testing.TB) memory.TokenCounter {
	tb.Helper()
	c, err := tiktoken.New("cl100k_base")
	if err != nil {
		tb.Fatalf("tiktoken.New() = %v", err)
	}
	return c
}

// readCountingStore counts ReadTurns calls and, when interleave is set,
// appends a turn as another process would just before each AppendTurns.
type readCountingStore struct {
	memory.Store
	reads      atomic.Int64
	interleave bool
}

func (s *readCountingStore) ReadTurns(ctx context.Context, scope memory.Scope, after int64) ([]memory.Turn, error) {
	s.reads.Add(1)
	return s.Store.ReadTurns(ctx, scope, after)
}

func (s *readCountingStore) AppendTurns(ctx context.Context, scope memory.Scope, turns []memory.Turn) ([]memory.Turn, error) {
	if s.interleave {
		other := memory.Turn{ID: "turn_other_" + turns[0].ID, ThreadID: "other", Time: turns[0].Time, Stored: turns[0].Stored, User: "from another process"}
		if _, err := s.Store.AppendTurns(ctx, scope, []memory.Turn{other}); err != nil {
			return nil, err
		}
	}
	return s.Store.AppendTurns(ctx, scope, turns)
}

// TestAddReadsBackOnlyWhenNeeded: an add reads the log once (to tell a
// retry from a new exchange) when its turns follow the ones it read, and
// reads it again when another process appended in between, so that the
// answer counts that process's turns too.
func TestAddReadsBackOnlyWhenNeeded(t *testing.T) {
	tests := []struct {
		name       string
		interleave bool
		wantReads  int64
		wantTurns  int // pending turns after the second add
	}{
		{"alone", false, 1, 2},
		{"another process appended", true, 2, 4},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fs, err := files.Open(t.TempDir())
			if err != nil {
				t.Fatalf("files.Open() = %v", err)
			}
			t.Cleanup(func() { fs.Close() })
			store := &readCountingStore{Store: fs, interleave: tt.interleave}
			svc, err := engine.NewService(memory.DefaultConfig(), store, mustTokens(t), engine.WithLogger(slog.New(slog.DiscardHandler)))
			if err != nil {
				t.Fatalf("NewService() = %v", err)
			}
			t.Cleanup(func() { closeNow(svc) })
			if _, err := svc.Add(t.Context(), memory.AddRequest{ThreadID: "t", UserInput: "first question", AgentResponse: "first answer"}); err != nil {
				t.Fatalf("Add() = %v", err)
			}
			store.reads.Store(0)
			res, err := svc.Add(t.Context(), memory.AddRequest{ThreadID: "t", UserInput: "second question", AgentResponse: "second answer"})
			if err != nil {
				t.Fatalf("Add() = %v", err)
			}
			if got := store.reads.Load(); got != tt.wantReads {
				t.Errorf("Add() read the turn log %d times, want %d", got, tt.wantReads)
			}
			if res.Pending.Turns != tt.wantTurns {
				t.Errorf("Add().Pending.Turns = %d, want %d", res.Pending.Turns, tt.wantTurns)
			}
		})
	}
}
