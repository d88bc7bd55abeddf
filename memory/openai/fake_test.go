package openai

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/mnemo-mcp/mnemo/memory/openai/openaitest"
)

// testKey is the API key of ordinary tests; the canary test uses its own.
const testKey = "sk-test-key-0001"

// testUsage is the token usage of the fake's chat replies.
var testUsage = openaitest.Usage{PromptTokens: 11, CompletionTokens: 7}

// ok is a successful chat reply with content.
func ok(tb testing.TB, content string) openaitest.Reply {
	tb.Helper()
	return openaitest.Chat(tb, content, testUsage)
}

// waits records the backoffs a Client asked for.
type waits struct {
	mu sync.Mutex
	d  []time.Duration
}

func (w *waits) all() []time.Duration {
	w.mu.Lock()
	defer w.mu.Unlock()
	return append([]time.Duration(nil), w.d...)
}

// fixedNow is the clock of tests that read HTTP-date Retry-After values.
var fixedNow = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

// newTestClient returns a Client for baseURL that records its backoffs
// instead of waiting and jitters to the full ceiling.
func newTestClient(tb testing.TB, baseURL string, mod func(*Config)) (*Client, *waits) {
	tb.Helper()
	cfg := Config{BaseURL: baseURL, APIKey: testKey, Model: "test-model"}
	if mod != nil {
		mod(&cfg)
	}
	c, err := New(cfg)
	if err != nil {
		tb.Fatalf("New() error = %v", err)
	}
	w := &waits{}
	c.sleep = func(ctx context.Context, d time.Duration) error {
		w.mu.Lock()
		w.d = append(w.d, d)
		w.mu.Unlock()
		return ctx.Err()
	}
	c.jitter = func(ceiling time.Duration) time.Duration { return ceiling }
	c.now = func() time.Time { return fixedNow }
	return c, w
}
