package openai

import (
	"cmp"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"
)

// testKey is the API key of ordinary tests; the canary test uses its own.
const testKey = "sk-test-key-0001"

// step is one scripted reply of the fake endpoint.
type step struct {
	status int               // 0 means 200
	body   string            // raw body
	header map[string]string // extra response headers
	block  bool              // hold the reply until the request ends
	hangup bool              // close the connection without replying
	hook   func()            // runs when the request arrives
}

// wireRequest is the part of a chat completion request the tests assert on.
type wireRequest struct {
	Model    string `json:"model"`
	Messages []struct {
		Role    string `json:"role"`
		Content string `json:"content"`
	} `json:"messages"`
	ResponseFormat *struct {
		Type string `json:"type"`
	} `json:"response_format"`
	MaxTokens           int      `json:"max_tokens"`
	MaxCompletionTokens int      `json:"max_completion_tokens"`
	Temperature         *float64 `json:"temperature"`
}

// seen is one request the fake received.
type seen struct {
	auth string
	req  wireRequest
}

// fakeEndpoint speaks the OpenAI chat completions API from a script: each
// request takes the next step; a request past the end fails the test.
type fakeEndpoint struct {
	t       testing.TB
	url     string
	release chan struct{}

	mu     sync.Mutex
	script []step
	got    []seen
}

// newScript returns a fake with no server, for in-process transports.
func newScript(t testing.TB, script ...step) *fakeEndpoint {
	t.Helper()
	f := &fakeEndpoint{t: t, script: script, release: make(chan struct{})}
	t.Cleanup(func() { close(f.release) })
	return f
}

// newFake returns a fake served by an httptest.Server; f.url is its base URL.
func newFake(t testing.TB, script ...step) *fakeEndpoint {
	t.Helper()
	srv := httptest.NewServer(nil)
	t.Cleanup(srv.Close) // registered first so it runs after release
	f := newScript(t, script...)
	srv.Config.Handler = f
	f.url = srv.URL + "/v1"
	return f
}

// requests returns what the fake has received so far.
func (f *fakeEndpoint) requests() []seen {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]seen(nil), f.got...)
}

// ServeHTTP implements http.Handler.
func (f *fakeEndpoint) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost || r.URL.Path != "/v1/chat/completions" {
		f.t.Errorf("request %s %s, want POST /v1/chat/completions", r.Method, r.URL.Path)
		http.NotFound(w, r)
		return
	}
	var wr wireRequest
	if err := json.NewDecoder(r.Body).Decode(&wr); err != nil {
		f.t.Errorf("decode request: %v", err)
	}
	f.mu.Lock()
	f.got = append(f.got, seen{auth: r.Header.Get("Authorization"), req: wr})
	if len(f.script) == 0 {
		n := len(f.got)
		f.mu.Unlock()
		f.t.Errorf("unexpected request %d: script exhausted", n)
		http.Error(w, "script exhausted", http.StatusTeapot)
		return
	}
	s := f.script[0]
	f.script = f.script[1:]
	f.mu.Unlock()

	if s.hook != nil {
		s.hook()
	}
	switch {
	case s.hangup:
		conn, _, err := http.NewResponseController(w).Hijack()
		if err != nil {
			f.t.Errorf("hijack: %v", err)
			return
		}
		conn.Close()
		return
	case s.block:
		select {
		case <-r.Context().Done():
		case <-f.release:
		}
		return
	}
	for k, v := range s.header {
		w.Header().Set(k, v)
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(cmp.Or(s.status, http.StatusOK))
	io.WriteString(w, s.body)
}

// handlerTransport serves requests in process, for synctest bubbles where
// loopback network I/O would keep fake time from advancing.
type handlerTransport struct{ h http.Handler }

func (t handlerTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	rec := httptest.NewRecorder()
	t.h.ServeHTTP(rec, r)
	if err := r.Context().Err(); err != nil {
		return nil, err
	}
	return rec.Result(), nil
}

// mustJSON marshals v or fails the test.
func mustJSON(tb testing.TB, v any) string {
	tb.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		tb.Fatalf("marshal: %v", err)
	}
	return string(b)
}

// replyBody is a chat completion with one choice; reasoning, when set, goes
// in reasoning_content as thinking models send it.
func replyBody(tb testing.TB, content, reasoning, finish string) string {
	tb.Helper()
	msg := map[string]any{"role": "assistant", "content": content}
	if reasoning != "" {
		msg["reasoning_content"] = reasoning
	}
	return mustJSON(tb, map[string]any{
		"id": "chatcmpl-1", "object": "chat.completion", "created": 1, "model": "test-model",
		"choices": []any{map[string]any{"index": 0, "message": msg, "finish_reason": finish}},
		"usage":   map[string]int{"prompt_tokens": 11, "completion_tokens": 7, "total_tokens": 18},
	})
}

// ok is a successful step replying content.
func ok(tb testing.TB, content string) step {
	return step{body: replyBody(tb, content, "", "stop")}
}

// apiErr is an OpenAI-style error step.
func apiErr(tb testing.TB, status int, typ, code, param, message string) step {
	e := map[string]any{"message": message, "type": typ, "code": code}
	if code == "" {
		e["code"] = nil
	}
	if param != "" {
		e["param"] = param
	}
	return step{status: status, body: mustJSON(tb, map[string]any{"error": e})}
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
