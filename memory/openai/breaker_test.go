package openai

import (
	"context"
	"log/slog"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/mnemo-mcp/mnemo/memory"
	"github.com/mnemo-mcp/mnemo/memory/engine"
	"github.com/mnemo-mcp/mnemo/memory/files"
	"github.com/mnemo-mcp/mnemo/memory/openai/openaitest"
)

func TestEmbeddingErrorsNameTheEmbeddingSettings(t *testing.T) {
	tests := []struct {
		name  string
		reply func(tb testing.TB) openaitest.Reply
		want  string
	}{
		{"connection lost", func(testing.TB) openaitest.Reply { return openaitest.Reply{Hangup: true} }, "MNEMO_EMBEDDING_BASE_URL"},
		{"key rejected", func(tb testing.TB) openaitest.Reply {
			return openaitest.Error(tb, 401, "invalid_request_error", "invalid_api_key", "", "bad key")
		}, "MNEMO_EMBEDDING_API_KEY"},
		{"model not found", func(tb testing.TB) openaitest.Reply {
			return openaitest.Error(tb, 404, "invalid_request_error", "model_not_found", "", "The model does not exist")
		}, "MNEMO_EMBEDDING_MODEL"},
		{"no embeddings API", func(tb testing.TB) openaitest.Reply {
			return openaitest.Error(tb, 404, "not_found", "", "", "no route")
		}, "no embeddings API at the base URL (404 not_found): check MNEMO_EMBEDDING_BASE_URL"},
		{"not JSON", func(testing.TB) openaitest.Reply { return openaitest.Reply{Body: "<html>hello</html>"} }, "not embeddings JSON: check that MNEMO_EMBEDDING_BASE_URL"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			srv := openaitest.NewServer(t)
			srv.PushEmbed(tc.reply(t))
			e, err := NewEmbedder(EmbedConfig{Config: Config{BaseURL: srv.URL, APIKey: testKey, Model: "embed-model", MaxRetries: -1}})
			if err != nil {
				t.Fatal(err)
			}
			_, err = e.Embed(t.Context(), []string{"hello"})
			if err == nil || !strings.Contains(err.Error(), tc.want) || strings.Contains(err.Error(), "MNEMO_LLM_") {
				t.Errorf("Embed() error = %v, want it to name %q and no LLM setting", err, tc.want)
			}
		})
	}
}

// runeCounter counts a rune as a token.
type runeCounter struct{}

func (runeCounter) Count(s string) int { return len([]rune(s)) }

// TestServiceFallsBackToWordsWhileTheEndpointIsDown drives the memory
// service through this adapter against a fake endpoint that fails: the
// first retrieval's failure opens the breaker, later retrievals send no
// request, probes back off, and the endpoint's return closes the breaker.
func TestServiceFallsBackToWordsWhileTheEndpointIsDown(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var down atomic.Bool
		down.Store(true)
		var queries atomic.Int32 // requests that carry a retrieval query
		srv := openaitest.NewInProcess(t)
		srv.EmbedFunc = func(req openaitest.EmbedRequest) openaitest.Reply {
			if strings.HasPrefix(req.Input[0], "query: ") && req.Input[0] != "query: mnemo" {
				queries.Add(1)
			}
			if down.Load() {
				return openaitest.Error(t, 503, "server_error", "", "", "overloaded")
			}
			vecs := make([][]float32, len(req.Input))
			for i, in := range req.Input {
				vecs[i] = []float32{1, 0.01}
				if strings.Contains(in, "puppy") || strings.Contains(in, "hound") || strings.Contains(in, "pet") {
					vecs[i] = []float32{0.01, 1}
				}
			}
			return openaitest.Embeddings(t, "embed-model", vecs)
		}
		e, err := NewEmbedder(EmbedConfig{Config: Config{BaseURL: "http://fake.invalid/v1", Model: "embed-model",
			MaxRetries: -1, HTTPClient: &http.Client{Transport: srv.Transport()}}})
		if err != nil {
			t.Fatal(err)
		}
		store, err := files.Open(t.TempDir())
		if err != nil {
			t.Fatal(err)
		}
		defer store.Close()
		cfg := memory.DefaultConfig()
		cfg.EmbeddingQueryPrefix = "query: "
		svc, err := engine.NewService(cfg, store, runeCounter{}, engine.WithEmbedder(e), engine.WithLogger(slog.New(slog.DiscardHandler)))
		if err != nil {
			t.Fatal(err)
		}
		defer svc.Close(context.Background())
		ctx := t.Context()
		for _, u := range []string{"We adopted a puppy", "The hound sleeps all day", "My car broke down"} {
			if _, err := svc.Add(ctx, memory.AddRequest{UserInput: u, AgentResponse: "ok"}); err != nil {
				t.Fatal(err)
			}
		}
		retrieve := func(q string) []string {
			t.Helper()
			res, err := svc.Retrieve(ctx, memory.RetrieveRequest{Query: q, MaxResults: 5})
			if err != nil {
				t.Fatalf("Retrieve() = %v", err)
			}
			var out []string
			for _, p := range res.Pages {
				out = append(out, p.User)
			}
			return out
		}

		for _, q := range []string{"my puppy", "the puppy again", "puppy once more"} {
			if got := retrieve(q); len(got) == 0 || got[0] != "We adopted a puppy" {
				t.Errorf("Retrieve(%q) with the endpoint down = %q, want the lexical match first", q, got)
			}
		}
		if n := queries.Load(); n > 1 {
			t.Errorf("%d query requests with the endpoint down, want at most the first before the breaker opened", n)
		}

		down.Store(false)
		time.Sleep(2 * time.Minute)
		synctest.Wait()
		res, err := svc.Flush(ctx, memory.FlushRequest{})
		if err != nil || res.EmbeddingBacklog != 0 {
			t.Fatalf("Flush() = %+v, %v; want every page embedded once the endpoint is back", res, err)
		}
		if got := retrieve("any pets?"); len(got) < 2 || got[0] == "My car broke down" || got[1] == "My car broke down" {
			t.Errorf("Retrieve(pets) after recovery = %q, want the two dog pages first (by vector)", got)
		}
	})
}
