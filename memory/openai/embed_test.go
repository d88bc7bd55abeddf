package openai

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mnemo-mcp/mnemo/memory"
	"github.com/mnemo-mcp/mnemo/memory/openai/openaitest"
)

// newFakeEmbeddings is an embeddings endpoint that answers the scripted
// failures first (error bodies that echo the API key), then each request
// with reply, or by default each text with [len(text), request number], in
// reverse order (the index field orders them).
func newFakeEmbeddings(t *testing.T, reply func(openaitest.EmbedRequest) any, failures ...int) *openaitest.Server {
	t.Helper()
	f := openaitest.NewServer(t)
	for _, status := range failures {
		f.PushEmbed(openaitest.Reply{Status: status, Body: fmt.Sprintf(`{"error":{"message":"leaked %s","type":"fake_error"}}`, testKey)})
	}
	f.EmbedFunc = func(req openaitest.EmbedRequest) openaitest.Reply {
		if reply != nil {
			return openaitest.Reply{Body: openaitest.MustJSON(t, reply(req))}
		}
		n := len(f.Requests())
		vecs := make([][]float32, len(req.Input))
		for i, in := range req.Input {
			vecs[i] = []float32{float32(len(in)), float32(n)}
		}
		return openaitest.Embeddings(t, req.Model, vecs)
	}
	return f
}

func newTestEmbedder(t *testing.T, f *openaitest.Server, cfg EmbedConfig) *Embedder {
	t.Helper()
	cfg.BaseURL, cfg.APIKey = f.URL, testKey
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
			f := newFakeEmbeddings(t, nil)
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
			for i, req := range f.Requests() {
				r := req.Embed
				calls = append(calls, len(r.Input))
				if r.Model != "text-embedding-3-small" || r.Dimensions != tc.dims || req.Auth != "Bearer "+testKey {
					t.Errorf("request %d = model %q dimensions %d auth %q", i, r.Model, r.Dimensions, req.Auth)
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
		reply         func(openaitest.EmbedRequest) any
		wantErr       bool
		wantTransient bool
		wantCalls     int
	}{
		{"rate limit is retried", []int{429, 503}, nil, false, false, 3},
		{"outage gives up transient", []int{500, 500, 500, 500, 500}, nil, true, true, 5},
		{"bad key is not retried", []int{401}, nil, true, false, 1},
		{"missing vectors", nil, func(openaitest.EmbedRequest) any {
			return map[string]any{"data": []map[string]any{{"index": 0, "embedding": []float32{1}}}}
		}, true, false, 1},
		{"duplicate index", nil, func(openaitest.EmbedRequest) any {
			return map[string]any{"data": []map[string]any{{"index": 0, "embedding": []float32{1}}, {"index": 0, "embedding": []float32{2}}}}
		}, true, false, 1},
		{"ragged vectors", nil, func(openaitest.EmbedRequest) any {
			return map[string]any{"data": []map[string]any{{"index": 0, "embedding": []float32{1}}, {"index": 1, "embedding": []float32{2, 3}}}}
		}, true, false, 1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f := newFakeEmbeddings(t, tc.reply, tc.failures...)
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
			if got := len(f.Requests()); got != tc.wantCalls {
				t.Errorf("requests = %d, want %d", got, tc.wantCalls)
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
