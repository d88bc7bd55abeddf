package engine_test

import (
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/mnemo-mcp/mnemo/internal/testutil"
	"github.com/mnemo-mcp/mnemo/memory"
	"github.com/mnemo-mcp/mnemo/memory/engine"
	"github.com/mnemo-mcp/mnemo/memory/files"
	"github.com/mnemo-mcp/mnemo/memory/openai"
	"github.com/mnemo-mcp/mnemo/memory/openai/openaitest"
	"github.com/mnemo-mcp/mnemo/memory/tiktoken"
)

// boundedService builds the production stack inside a synctest bubble:
// the file store, the OpenAI adapter with its default time-out and
// retries, reaching an in-process fake endpoint.
func boundedService(t *testing.T, fake *openaitest.Server) *engine.Service {
	t.Helper()
	logger := slog.New(slog.NewTextHandler(&testutil.LockedBuffer{}, nil))
	store, err := files.Open(t.TempDir(), files.WithLogger(logger))
	if err != nil {
		t.Fatalf("files.Open() = %v", err)
	}
	t.Cleanup(func() { store.Close() })
	counter, err := tiktoken.New("cl100k_base")
	if err != nil {
		t.Fatalf("tiktoken.New() = %v", err)
	}
	client, err := openai.New(openai.Config{
		BaseURL:    "http://fake.invalid/v1",
		Model:      "test-model",
		HTTPClient: &http.Client{Transport: fake.Transport()},
		Logger:     logger,
	})
	if err != nil {
		t.Fatalf("openai.New() = %v", err)
	}
	cfg := memory.DefaultConfig()
	cfg.DebounceSeconds = 300
	svc, err := engine.NewService(cfg, store, counter, engine.WithLLM(client), engine.WithLogger(logger))
	if err != nil {
		t.Fatalf("NewService() = %v", err)
	}
	return svc
}

// TestFlushIsBounded drives flush_memory against an endpoint that hangs
// and one that answers 500: the call answers within flush_timeout (fake
// time), well under a client's 60 s request time-out, says what is still
// running or why it failed, keeps the turns pending, and the update goes
// on in the background.
func TestFlushIsBounded(t *testing.T) {
	tests := []struct {
		name    string
		reply   func(t *testing.T) openaitest.Reply
		maxWait time.Duration // of fake time
		reason  []string
		running bool
	}{
		{
			name:    "hanging endpoint",
			reply:   func(*testing.T) openaitest.Reply { return openaitest.Reply{Block: true} },
			maxWait: memory.DefaultConfig().FlushTimeout,
			reason:  []string{"still being processed in the background after waiting 20s (flush_timeout)", "the update goes on in the background"},
			running: true,
		},
		{
			name:    "endpoint answering 500",
			reply:   func(t *testing.T) openaitest.Reply { return chatError(t, http.StatusInternalServerError, nil) },
			maxWait: 0, // at once: the first failed attempt is reported
			reason:  []string{"LLM endpoint failing: the endpoint failed (500", "1 attempt failed, next retry in"},
			running: true,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				fake := openaitest.NewInProcess(t)
				fake.Repeat(tt.reply(t))
				svc := boundedService(t, fake)
				if _, err := svc.Add(t.Context(), memory.AddRequest{ThreadID: "t1", UserInput: "I use Go at work.", AgentResponse: "Noted."}); err != nil {
					t.Fatalf("Add() = %v", err)
				}
				var mu sync.Mutex
				var progress []string
				start := time.Now()
				res, err := svc.Flush(t.Context(), memory.FlushRequest{Progress: func(done, total int, msg string) {
					mu.Lock()
					defer mu.Unlock()
					progress = append(progress, msg)
				}})
				waited := time.Since(start)
				if err != nil {
					t.Fatalf("Flush() = %v", err)
				}
				if waited > tt.maxWait {
					t.Errorf("Flush() answered after %s of fake time, want at most %s", waited, tt.maxWait)
				}
				if res.TurnsProcessed != 0 || res.Pending.Turns != 1 {
					t.Errorf("Flush() = processed %d, pending %d; want 0 and 1", res.TurnsProcessed, res.Pending.Turns)
				}
				for _, want := range tt.reason {
					if !strings.Contains(res.Reason, want) {
						t.Errorf("Reason = %q, want it to say %q", res.Reason, want)
					}
				}
				if got := strings.Join(res.Running, ","); tt.running && got != "t1" {
					t.Errorf("Running = %q, want t1", got)
				}
				mu.Lock()
				got := strings.Join(progress, " | ")
				mu.Unlock()
				if !strings.HasPrefix(got, "updating memory from thread t1") || !strings.Contains(got, "still running in the background: t1") {
					t.Errorf("progress = %q, want the thread's start and what still runs", got)
				}
				// The update went on after the answer: more requests reach
				// the endpoint while nobody waits.
				before := len(fake.ChatRequests())
				time.Sleep(2 * time.Minute)
				synctest.Wait()
				if tt.name == "endpoint answering 500" && len(fake.ChatRequests()) <= before {
					t.Errorf("no retry reached the endpoint after Flush() answered (%d requests)", before)
				}
				closeNow(svc)
			})
		})
	}
}
