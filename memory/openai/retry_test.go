package openai

import (
	"context"
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/mnemo-mcp/mnemo/memory"
	"github.com/mnemo-mcp/mnemo/memory/openai/openaitest"
)

func TestCompleteTimeout(t *testing.T) {
	fake := openaitest.NewServer(t, openaitest.Reply{Block: true}, openaitest.Reply{Block: true})
	c, w := newTestClient(t, fake.URL, func(c *Config) {
		c.Timeout = 50 * time.Millisecond
		c.MaxRetries = 1
	})
	_, err := c.Complete(t.Context(), memory.CompletionRequest{Prompt: "hi"})
	if !errors.Is(err, memory.ErrLLMUnavailable) {
		t.Errorf("Complete() error = %v, want ErrLLMUnavailable", err)
	}
	if err != nil && !strings.Contains(err.Error(), "no reply within 50ms") {
		t.Errorf("Complete() error = %q, want it to name the timeout", err)
	}
	if errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("Complete() error = %v wraps DeadlineExceeded, but the caller's context did not end", err)
	}
	if got := len(fake.Requests()); got != 2 {
		t.Errorf("endpoint got %d requests, want 2", got)
	}
	if got := len(w.all()); got != 1 {
		t.Errorf("backoffs = %v, want 1", w.all())
	}
}

func TestCompleteContextEnds(t *testing.T) {
	t.Run("cancelled during backoff", func(t *testing.T) {
		fake := openaitest.NewServer(t, openaitest.Reply{Status: 500})
		c, _ := newTestClient(t, fake.URL, nil)
		ctx, cancel := context.WithCancel(t.Context())
		defer cancel()
		c.sleep = func(ctx context.Context, d time.Duration) error {
			cancel()
			return sleepCtx(ctx, time.Hour)
		}
		_, err := c.Complete(ctx, memory.CompletionRequest{Prompt: "hi"})
		if !errors.Is(err, context.Canceled) {
			t.Errorf("Complete() error = %v, want context.Canceled", err)
		}
		if got := len(fake.Requests()); got != 1 {
			t.Errorf("endpoint got %d requests, want 1", got)
		}
	})
	t.Run("cancelled during the request", func(t *testing.T) {
		ctx, cancel := context.WithCancel(t.Context())
		defer cancel()
		fake := openaitest.NewServer(t, openaitest.Reply{Block: true, Hook: cancel})
		c, w := newTestClient(t, fake.URL, nil)
		_, err := c.Complete(ctx, memory.CompletionRequest{Prompt: "hi"})
		if !errors.Is(err, context.Canceled) || errors.Is(err, memory.ErrLLMUnavailable) {
			t.Errorf("Complete() error = %v, want context.Canceled only", err)
		}
		if len(w.all()) != 0 {
			t.Errorf("backoffs = %v, want none", w.all())
		}
	})
	t.Run("cancelled before the call", func(t *testing.T) {
		ctx, cancel := context.WithCancel(t.Context())
		cancel()
		fake := openaitest.NewServer(t)
		c, _ := newTestClient(t, fake.URL, nil)
		if _, err := c.Complete(ctx, memory.CompletionRequest{Prompt: "hi"}); !errors.Is(err, context.Canceled) {
			t.Errorf("Complete() error = %v, want context.Canceled", err)
		}
	})
}

// TestCompleteRealWaits runs the real timers in a synctest bubble: the
// Retry-After wait, the per-attempt timeout and the exponential backoff all
// take exactly the fake time they should.
func TestCompleteRealWaits(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		rateLimited := openaitest.Error(t, 429, "requests", "rate_limit_exceeded", "", "slow down")
		rateLimited.Header = map[string]string{"Retry-After": "2"}
		fake := openaitest.NewInProcess(t, rateLimited, openaitest.Reply{Block: true}, ok(t, "done"))
		c, err := New(Config{
			BaseURL:    "http://llm.invalid/v1",
			APIKey:     testKey,
			HTTPClient: &http.Client{Transport: fake.Transport()},
		})
		if err != nil {
			t.Fatalf("New() error = %v", err)
		}
		c.jitter = func(ceiling time.Duration) time.Duration { return ceiling }

		start := time.Now()
		got, err := c.Complete(t.Context(), memory.CompletionRequest{Prompt: "hi"})
		if err != nil {
			t.Fatalf("Complete() error = %v", err)
		}
		if got.Text != "done" {
			t.Errorf("Complete() text = %q, want done", got.Text)
		}
		// Retry-After 2s, then a 60s attempt timeout, then the second backoff (2s).
		if elapsed, want := time.Since(start), 2*time.Second+DefaultTimeout+2*time.Second; elapsed != want {
			t.Errorf("Complete() took %v of fake time, want %v", elapsed, want)
		}
	})
}

func TestSleepCtx(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		start := time.Now()
		if err := sleepCtx(t.Context(), 2*time.Second); err != nil {
			t.Errorf("sleepCtx() error = %v", err)
		}
		if got := time.Since(start); got != 2*time.Second {
			t.Errorf("sleepCtx(2s) slept %v", got)
		}

		ctx, cancel := context.WithCancel(t.Context())
		time.AfterFunc(time.Second, cancel)
		start = time.Now()
		if err := sleepCtx(ctx, time.Hour); !errors.Is(err, context.Canceled) {
			t.Errorf("sleepCtx() error = %v, want context.Canceled", err)
		}
		if got := time.Since(start); got != time.Second {
			t.Errorf("cancelled sleepCtx returned after %v, want 1s", got)
		}
	})
}

func TestBackoff(t *testing.T) {
	c, err := New(Config{BaseBackoff: time.Second, MaxBackoff: 10 * time.Second})
	if err != nil {
		t.Fatalf("New() error = %v", err)
	}
	c.jitter = func(ceiling time.Duration) time.Duration { return ceiling }
	c.now = func() time.Time { return fixedNow }

	tests := []struct {
		retry      int
		retryAfter string
		want       time.Duration
	}{
		{0, "", time.Second},
		{1, "", 2 * time.Second},
		{3, "", 8 * time.Second},
		{4, "", 10 * time.Second},
		{1000, "", 10 * time.Second},
		{0, "3", 3 * time.Second},
		{0, "0", 0},
		{0, "9999999999999", 10 * time.Second},
		{0, fixedNow.Add(5 * time.Second).Format(http.TimeFormat), 5 * time.Second},
		{2, "soon", 4 * time.Second},
	}
	for _, tt := range tests {
		if got := c.backoff(tt.retry, tt.retryAfter); got != tt.want {
			t.Errorf("backoff(%d, %q) = %v, want %v", tt.retry, tt.retryAfter, got, tt.want)
		}
	}

	for range 100 {
		if d := fullJitter(time.Second); d < 0 || d > time.Second {
			t.Fatalf("fullJitter(1s) = %v, want within [0, 1s]", d)
		}
	}
}

func TestParseRetryAfter(t *testing.T) {
	tests := []struct {
		in     string
		want   time.Duration
		wantOK bool
	}{
		{"", 0, false},
		{"2", 2 * time.Second, true},
		{" 7 ", 7 * time.Second, true},
		{"-1", 0, false},
		{"1.5", 0, false},
		{fixedNow.Add(90 * time.Second).Format(http.TimeFormat), 90 * time.Second, true},
		{fixedNow.Add(-time.Minute).Format(http.TimeFormat), 0, true},
		{"Mon, 99 Foo 2026", 0, false},
	}
	for _, tt := range tests {
		got, ok := parseRetryAfter(tt.in, fixedNow)
		if got != tt.want || ok != tt.wantOK {
			t.Errorf("parseRetryAfter(%q) = %v, %v; want %v, %v", tt.in, got, ok, tt.want, tt.wantOK)
		}
	}
}

func TestCappedBody(t *testing.T) {
	tests := []struct {
		body    string
		limit   int64
		wantErr error
	}{
		{"hello", 5, nil},
		{"hello", 10, nil},
		{"hello", 4, errReplyTooLarge},
	}
	for _, tt := range tests {
		b := &cappedBody{rc: io.NopCloser(strings.NewReader(tt.body)), left: tt.limit}
		got, err := io.ReadAll(b)
		if !errors.Is(err, tt.wantErr) {
			t.Errorf("ReadAll(%q capped at %d) error = %v, want %v", tt.body, tt.limit, err, tt.wantErr)
		}
		if err == nil && string(got) != tt.body {
			t.Errorf("ReadAll(%q capped at %d) = %q", tt.body, tt.limit, got)
		}
	}
}
