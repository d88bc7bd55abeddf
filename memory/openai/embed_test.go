package openai

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mnemo-mcp/mnemo/memory"
)

// embedRequest is the part of an embeddings request the tests assert on.
type embedRequest struct {
	Input      []string `json:"input"`
	Model      string   `json:"model"`
	Dimensions int      `json:"dimensions"`
}

// fakeEmbeddings is an OpenAI-compatible embeddings endpoint: it answers
// each text with [len(text), index of the request], in reverse order (the
// index field orders them), after the scripted failures.
type fakeEmbeddings struct {
	url string

	mu       sync.Mutex
	failures []int // statuses to answer first, one per request
	reply    func(req embedRequest) any
	got      []embedRequest
	auth     []string
}

func newFakeEmbeddings(t *testing.T, failures ...int) *fakeEmbeddings {
	t.Helper()
	f := &fakeEmbeddings{failures: failures}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/v1/embeddings" {
			http.NotFound(w, r)
			return
		}
		var req embedRequest
		if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
			http.Error(w, "bad json", http.StatusBadRequest)
			return
		}
		f.mu.Lock()
		f.got = append(f.got, req)
		f.auth = append(f.auth, r.Header.Get("Authorization"))
		n := len(f.got)
		status := 0
		if len(f.failures) > 0 {
			status, f.failures = f.failures[0], f.failures[1:]
		}
		reply := f.reply
		f.mu.Unlock()
		if status != 0 {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(status)
			fmt.Fprintf(w, `{"error":{"message":"leaked %s","type":"fake_error"}}`, testKey)
			return
		}
		var body any
		if reply != nil {
			body = reply(req)
		} else {
			var data []map[string]any
			for i := len(req.Input) - 1; i >= 0; i-- {
				data = append(data, map[string]any{"object": "embedding", "index": i, "embedding": []float32{float32(len(req.Input[i])), float32(n)}})
			}
			body = map[string]any{"object": "list", "data": data, "model": req.Model}
		}
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(body)
	}))
	t.Cleanup(srv.Close)
	f.url = srv.URL + "/v1"
	return f
}

func newTestEmbedder(t *testing.T, f *fakeEmbeddings, cfg EmbedConfig) *Embedder {
	t.Helper()
	cfg.BaseURL, cfg.APIKey = f.url, testKey
	cfg.Timeout = 5 * time.Second
	e, err := NewEmbedder(cfg)
	if err != nil {
		t.Fatalf("NewEmbedder() = %v", err)
	}
	e.c.sleep = func(ctx context.Context, _ time.Duration) error { return ctx.Err() }
	return e
}

func TestEmbedBatchesInOrder(t *testing.T) {
	tests := []struct {
		name      string
		texts     []string
		batch     int
		dims      int
		wantCalls []int // texts per request
		wantModel string
	}{
		{"one request", []string{"a", "bb", "ccc"}, 0, 0, []int{3}, "text-embedding-3-small"},
		{"split into batches", []string{"a", "bb", "ccc", "dddd", "eeeee"}, 2, 256, []int{2, 2, 1}, "text-embedding-3-small/256"},
		{"empty text is sent as a space", []string{"", "bb"}, 0, 0, []int{2}, "text-embedding-3-small"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f := newFakeEmbeddings(t)
			e := newTestEmbedder(t, f, EmbedConfig{BatchSize: tc.batch, Dimensions: tc.dims})
			got, err := e.Embed(t.Context(), slices.Clone(tc.texts))
			if err != nil {
				t.Fatalf("Embed() = %v", err)
			}
			if len(got) != len(tc.texts) {
				t.Fatalf("Embed() returned %d vectors, want %d", len(got), len(tc.texts))
			}
			for i, v := range got {
				if want := float32(max(len(tc.texts[i]), 1)); v[0] != want {
					t.Errorf("vector %d = %v, want it to start with %v (input order)", i, v, want)
				}
			}
			var calls []int
			for i, r := range f.got {
				calls = append(calls, len(r.Input))
				if r.Model != "text-embedding-3-small" || r.Dimensions != tc.dims || f.auth[i] != "Bearer "+testKey {
					t.Errorf("request %d = model %q dimensions %d auth %q", i, r.Model, r.Dimensions, f.auth[i])
				}
			}
			if !slices.Equal(calls, tc.wantCalls) {
				t.Errorf("texts per request = %v, want %v", calls, tc.wantCalls)
			}
			if e.Model() != tc.wantModel {
				t.Errorf("Model() = %q, want %q", e.Model(), tc.wantModel)
			}
		})
	}
}

func TestEmbedErrors(t *testing.T) {
	tests := []struct {
		name          string
		failures      []int
		reply         func(embedRequest) any
		wantErr       bool
		wantTransient bool
		wantCalls     int
	}{
		{"rate limit is retried", []int{429, 503}, nil, false, false, 3},
		{"outage gives up transient", []int{500, 500, 500, 500, 500}, nil, true, true, 5},
		{"bad key is not retried", []int{401}, nil, true, false, 1},
		{"missing vectors", nil, func(embedRequest) any {
			return map[string]any{"data": []map[string]any{{"index": 0, "embedding": []float32{1}}}}
		}, true, false, 1},
		{"duplicate index", nil, func(embedRequest) any {
			return map[string]any{"data": []map[string]any{{"index": 0, "embedding": []float32{1}}, {"index": 0, "embedding": []float32{2}}}}
		}, true, false, 1},
		{"ragged vectors", nil, func(embedRequest) any {
			return map[string]any{"data": []map[string]any{{"index": 0, "embedding": []float32{1}}, {"index": 1, "embedding": []float32{2, 3}}}}
		}, true, false, 1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f := newFakeEmbeddings(t, tc.failures...)
			f.reply = tc.reply
			e := newTestEmbedder(t, f, EmbedConfig{})
			_, err := e.Embed(t.Context(), []string{"one", "two"})
			if (err != nil) != tc.wantErr {
				t.Fatalf("Embed() = %v, want error %v", err, tc.wantErr)
			}
			if err != nil {
				if got := errors.Is(err, memory.ErrLLMUnavailable); got != tc.wantTransient {
					t.Errorf("Embed() = %v; transient %v, want %v", err, got, tc.wantTransient)
				}
				if strings.Contains(err.Error(), testKey) {
					t.Errorf("Embed() = %v, leaks the API key", err)
				}
			}
			if len(f.got) != tc.wantCalls {
				t.Errorf("requests = %d, want %d", len(f.got), tc.wantCalls)
			}
		})
	}
}

func TestNewEmbedderRejectsBadConfig(t *testing.T) {
	for _, cfg := range []EmbedConfig{
		{Config: Config{BaseURL: "not a url"}},
		{Dimensions: -1},
		{BatchSize: -5},
	} {
		if _, err := NewEmbedder(cfg); err == nil {
			t.Errorf("NewEmbedder(%+v) = nil error, want one", cfg)
		}
	}
}
