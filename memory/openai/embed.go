package openai

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	goopenai "github.com/sashabaranov/go-openai"

	"github.com/mnemo-mcp/mnemo/memory"
)

// Embedding defaults.
const (
	DefaultEmbeddingModel = "text-embedding-3-small"
	DefaultEmbedBatch     = 96
)

// EmbedConfig configures an Embedder. Config.Model is the embedding model
// (default text-embedding-3-small); the other Config fields work as for
// Client.
type EmbedConfig struct {
	Config
	// Dimensions asks the model for shorter vectors (text-embedding-3 and
	// later); 0 means the model's own size.
	Dimensions int
	// BatchSize bounds the texts sent in one request; default 96.
	BatchSize int
}

// Embedder is a memory.Embedder backed by an OpenAI-compatible embeddings
// endpoint. It is safe for concurrent use.
type Embedder struct {
	c     *Client
	dims  int
	batch int
}

var _ memory.Embedder = (*Embedder)(nil)

// NewEmbedder returns an Embedder for cfg after applying defaults. It fails
// on the same configuration errors as New, or a negative size.
func NewEmbedder(cfg EmbedConfig) (*Embedder, error) {
	if cfg.Dimensions < 0 || cfg.BatchSize < 0 {
		return nil, errors.New("new openai embedder: dimensions and batch size must not be negative")
	}
	cfg.Model = cmp.Or(strings.TrimSpace(cfg.Model), DefaultEmbeddingModel)
	c, err := New(cfg.Config)
	if err != nil {
		return nil, err
	}
	c.names = embeddingSettings
	return &Embedder{c: c, dims: cfg.Dimensions, batch: cmp.Or(cfg.BatchSize, DefaultEmbedBatch)}, nil
}

// Model returns the model name, with the requested dimensions when set
// ("text-embedding-3-small/256"): vectors of another Model are not
// comparable.
func (e *Embedder) Model() string {
	if e.dims > 0 {
		return e.c.model + "/" + strconv.Itoa(e.dims)
	}
	return e.c.model
}

// Embed returns one vector per text, in order, sending at most BatchSize
// texts per request. Errors wrap memory.ErrLLMUnavailable when a later
// retry may succeed (rate limit, server error, timeout, connection
// failure); a reply with missing, extra or ragged vectors is an error. No
// error contains the API key or a raw response body.
func (e *Embedder) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	out := make([][]float32, 0, len(texts))
	for chunk := range slices.Chunk(texts, e.batch) {
		vecs, err := e.embedBatch(ctx, chunk)
		if err != nil {
			return nil, err
		}
		out = append(out, vecs...)
	}
	for _, v := range out {
		if len(v) != len(out[0]) {
			return nil, fmt.Errorf("embed with %s: the endpoint returned vectors of different lengths (%d and %d)", e.c.model, len(out[0]), len(v))
		}
	}
	return out, nil
}

// embedBatch sends one request, with the Client's retries and backoff.
func (e *Embedder) embedBatch(ctx context.Context, texts []string) ([][]float32, error) {
	c := e.c
	for i, t := range texts {
		if strings.TrimSpace(t) == "" {
			texts[i] = " " // endpoints reject empty input
		}
	}
	for attempt, retries := 1, 0; ; attempt++ {
		resp, err := e.attempt(ctx, texts)
		if err == nil {
			return e.vectors(resp, len(texts))
		}
		if ctxErr := ctx.Err(); ctxErr != nil {
			return nil, fmt.Errorf("embed with %s: %w", c.model, ctxErr)
		}
		var fe *failure
		if !errors.As(err, &fe) {
			return nil, fmt.Errorf("embed with %s: %w", c.model, err)
		}
		if !fe.retry || retries >= c.maxRetries {
			if attempt > 1 && fe.transient {
				return nil, fmt.Errorf("embed with %s: gave up after %d attempts: %w", c.model, attempt, fe)
			}
			return nil, fmt.Errorf("embed with %s: %w", c.model, fe)
		}
		wait := c.backoff(retries, fe.retryAfter)
		c.log.Warn("embedding request failed; retrying",
			"model", c.model, "attempt", attempt, "status", fe.status, "wait", wait, "error", fe.msg)
		if err := c.sleep(ctx, wait); err != nil {
			return nil, fmt.Errorf("embed with %s: stopped before retrying (%s): %w", c.model, fe.msg, err)
		}
		retries++
	}
}

func (e *Embedder) attempt(ctx context.Context, texts []string) (goopenai.EmbeddingResponse, error) {
	c := e.c
	actx, cancel := context.WithTimeout(ctx, c.timeout)
	defer cancel()
	rec := &exchange{}
	actx = context.WithValue(actx, exchangeKey{}, rec)
	resp, err := c.api.CreateEmbeddings(actx, goopenai.EmbeddingRequest{
		Input:          texts,
		Model:          goopenai.EmbeddingModel(c.model),
		Dimensions:     e.dims,
		EncodingFormat: goopenai.EmbeddingEncodingFormatFloat,
	})
	if err == nil {
		return resp, nil
	}
	if ctx.Err() != nil {
		return resp, ctx.Err()
	}
	f := classify(err, rec, errors.Is(actx.Err(), context.DeadlineExceeded), c.timeout, c.model, c.names)
	f.msg = c.redactString(f.msg)
	return resp, f
}

// vectors puts the reply's vectors in input order and checks there is
// exactly one per input.
func (e *Embedder) vectors(resp goopenai.EmbeddingResponse, n int) ([][]float32, error) {
	out := make([][]float32, n)
	for _, d := range resp.Data {
		if d.Index < 0 || d.Index >= n || out[d.Index] != nil || len(d.Embedding) == 0 {
			return nil, fmt.Errorf("embed with %s: the endpoint returned a malformed list of vectors: "+
				"check that MNEMO_EMBEDDING_BASE_URL is an OpenAI-compatible embeddings API", e.c.model)
		}
		out[d.Index] = d.Embedding
	}
	for _, v := range out {
		if v == nil {
			return nil, fmt.Errorf("embed with %s: the endpoint returned %d vectors for %d texts", e.c.model, len(resp.Data), n)
		}
	}
	return out, nil
}
