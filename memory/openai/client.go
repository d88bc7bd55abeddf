// Package openai implements memory.LLM with github.com/sashabaranov/go-openai
// against any OpenAI-compatible chat completions endpoint: OpenAI, DeepSeek,
// Ollama, vLLM, LM Studio and the like.
//
// The adapter owns the endpoint's failure modes so the memory package does not
// have to: per-attempt timeouts, retries with exponential backoff and full
// jitter on rate limits, server errors, timeouts and connection errors
// (honouring Retry-After), a graceful fallback for endpoints that reject JSON
// mode, and error messages that say what to fix without ever carrying the API
// key or a raw response body.
package openai

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"net/http"
	"net/url"
	"strings"
	"sync/atomic"
	"time"

	goopenai "github.com/sashabaranov/go-openai"

	"github.com/mnemo-mcp/mnemo/memory"
	"github.com/mnemo-mcp/mnemo/memory/redact"
)

// Defaults applied by New to zero Config fields.
const (
	DefaultBaseURL     = "https://api.openai.com/v1"
	DefaultModel       = "gpt-4o-mini"
	DefaultTimeout     = 60 * time.Second
	DefaultMaxRetries  = 4
	DefaultBaseBackoff = time.Second
	DefaultMaxBackoff  = 60 * time.Second
)

// temperature keeps extraction replies close to deterministic.
const temperature = 0.1

// Config configures a Client. Zero fields take the defaults above.
type Config struct {
	// BaseURL is the API root, e.g. https://api.openai.com/v1 (default),
	// https://api.deepseek.com/v1, http://localhost:11434/v1 (Ollama),
	// http://localhost:8000/v1 (vLLM) or http://localhost:1234/v1 (LM Studio).
	BaseURL string
	// APIKey is sent as a bearer token; it may be empty for local servers.
	APIKey string
	// Model is the chat model name; default gpt-4o-mini.
	Model string
	// Timeout bounds each attempt; default 60s.
	Timeout time.Duration
	// MaxRetries is the number of retries after the first attempt; 0 means
	// the default 4, a negative value means no retries.
	MaxRetries int
	// BaseBackoff and MaxBackoff bound the exponential backoff between
	// retries; defaults 1s and 60s. MaxBackoff also caps Retry-After.
	BaseBackoff, MaxBackoff time.Duration
	// HTTPClient is optional; its Timeout, if any, applies on top of Timeout.
	HTTPClient *http.Client
	// Logger receives retries and fallbacks; nil discards them.
	Logger *slog.Logger
}

// Client is a memory.LLM backed by an OpenAI-compatible chat completions
// endpoint. It is safe for concurrent use.
type Client struct {
	api         *goopenai.Client
	apiKey      string
	model       string
	names       settingNames // the settings error messages name
	reasoning   bool         // isReasoningModel(model)
	timeout     time.Duration
	maxRetries  int
	baseBackoff time.Duration
	maxBackoff  time.Duration
	log         *slog.Logger

	// noJSONMode records that this endpoint rejected response_format
	// json_object and accepted the same request without it.
	noJSONMode atomic.Bool

	// Seams for tests: how to wait, how to jitter a backoff ceiling, and the
	// clock used to read HTTP-date Retry-After values.
	sleep  func(ctx context.Context, d time.Duration) error
	jitter func(ceiling time.Duration) time.Duration
	now    func() time.Time
}

var _ memory.LLM = (*Client)(nil)

// New returns a Client for cfg after applying defaults. It fails when the base
// URL is not an absolute http(s) URL or a duration is negative; the error never
// contains the URL or the key.
func New(cfg Config) (*Client, error) {
	base := strings.TrimSpace(cfg.BaseURL)
	if base == "" {
		base = DefaultBaseURL
	}
	u, err := url.Parse(base)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, errors.New("new openai client: base URL must be an absolute http or https URL such as https://api.openai.com/v1")
	}
	if cfg.Timeout < 0 || cfg.BaseBackoff < 0 || cfg.MaxBackoff < 0 {
		return nil, errors.New("new openai client: timeout and backoff durations must not be negative")
	}

	c := &Client{
		apiKey:      cfg.APIKey,
		model:       cmp.Or(strings.TrimSpace(cfg.Model), DefaultModel),
		names:       llmSettings,
		timeout:     cmp.Or(cfg.Timeout, DefaultTimeout),
		maxRetries:  cfg.MaxRetries,
		baseBackoff: cmp.Or(cfg.BaseBackoff, DefaultBaseBackoff),
		maxBackoff:  cmp.Or(cfg.MaxBackoff, DefaultMaxBackoff),
		log:         cfg.Logger,
		sleep:       sleepCtx,
		jitter:      fullJitter,
		now:         time.Now,
	}
	switch {
	case cfg.MaxRetries == 0:
		c.maxRetries = DefaultMaxRetries
	case cfg.MaxRetries < 0:
		c.maxRetries = 0
	}
	c.baseBackoff = min(c.baseBackoff, c.maxBackoff)
	c.reasoning = isReasoningModel(c.model)
	if c.log == nil {
		c.log = slog.New(slog.DiscardHandler)
	}
	hc := cfg.HTTPClient
	if hc == nil {
		hc = &http.Client{}
	}

	oc := goopenai.DefaultConfig(cfg.APIKey)
	oc.BaseURL = strings.TrimRight(base, "/")
	oc.HTTPClient = recordingDoer{hc: hc}
	c.api = goopenai.NewClientWithConfig(oc)
	return c, nil
}

// Model returns the configured chat model name.
func (c *Client) Model() string { return c.model }

// Complete sends req as a system + user chat completion and returns the reply
// text (message content only, never reasoning_content) with its token usage.
// Errors wrap memory.ErrLLMUnavailable when a later retry may succeed (rate
// limit, server error, timeout, connection failure); other endpoint errors
// (bad key, unknown model, rejected request, empty reply) say what to fix. If
// ctx ends, the error wraps ctx.Err(). No error contains the API key or a raw
// response body.
func (c *Client) Complete(ctx context.Context, req memory.CompletionRequest) (memory.Completion, error) {
	if strings.TrimSpace(req.Prompt) == "" {
		return memory.Completion{}, fmt.Errorf("complete with %s: empty prompt: %w", c.model, memory.ErrInvalidInput)
	}
	useJSON := req.JSON && !c.noJSONMode.Load()
	fellBack := false
	for attempt, retries := 1, 0; ; attempt++ {
		resp, err := c.attempt(ctx, req, useJSON)
		if err == nil {
			if fellBack {
				c.rememberNoJSONMode()
			}
			return c.reply(resp, attempt)
		}
		if ctxErr := ctx.Err(); ctxErr != nil {
			return memory.Completion{}, fmt.Errorf("complete with %s: %w", c.model, ctxErr)
		}
		var fe *failure
		if !errors.As(err, &fe) {
			return memory.Completion{}, fmt.Errorf("complete with %s: %w", c.model, err)
		}
		if useJSON && fe.rejectsJSONMode {
			// Retry at once without response_format; remember only if that
			// works and the endpoint, not the prompt, was the reason.
			useJSON, fellBack = false, !fe.jsonPromptRule
			msg := "llm endpoint rejected JSON mode; retrying without response_format"
			if fe.jsonPromptRule {
				msg = "llm endpoint wants the word JSON in the prompt for JSON mode; retrying without response_format"
			}
			c.log.Warn(msg, "model", c.model, "status", fe.status)
			continue
		}
		if !fe.retry || retries >= c.maxRetries {
			if attempt > 1 && fe.transient {
				return memory.Completion{}, fmt.Errorf("complete with %s: gave up after %d attempts: %w", c.model, attempt, fe)
			}
			return memory.Completion{}, fmt.Errorf("complete with %s: %w", c.model, fe)
		}
		wait := c.backoff(retries, fe.retryAfter)
		c.log.Warn("llm request failed; retrying",
			"model", c.model, "attempt", attempt, "status", fe.status, "wait", wait, "error", fe.msg)
		if req.Retrying != nil {
			req.Retrying(fe.msg, attempt, wait)
		}
		if err := c.sleep(ctx, wait); err != nil {
			return memory.Completion{}, fmt.Errorf("complete with %s: stopped before retrying (%s): %w", c.model, fe.msg, err)
		}
		retries++
	}
}

// attempt runs one chat completion under the per-attempt timeout and turns
// any failure into a *failure, except when ctx itself has ended.
func (c *Client) attempt(ctx context.Context, req memory.CompletionRequest, useJSON bool) (goopenai.ChatCompletionResponse, error) {
	actx, cancel := context.WithTimeout(ctx, c.timeout)
	defer cancel()
	rec := &exchange{}
	actx = context.WithValue(actx, exchangeKey{}, rec)

	resp, err := c.api.CreateChatCompletion(actx, c.request(req, useJSON))
	if err == nil {
		return resp, nil
	}
	if ctx.Err() != nil {
		return resp, ctx.Err()
	}
	timedOut := errors.Is(actx.Err(), context.DeadlineExceeded)
	f := classify(err, rec, timedOut, c.timeout, c.model, c.names)
	f.msg = c.redactString(f.msg)
	return resp, f
}

// request builds the wire request. Reasoning models (as go-openai's own
// validator knows them) reject temperature and max_tokens, so they get
// max_completion_tokens and the default temperature instead.
func (c *Client) request(req memory.CompletionRequest, useJSON bool) goopenai.ChatCompletionRequest {
	msgs := make([]goopenai.ChatCompletionMessage, 0, 2)
	if req.System != "" {
		msgs = append(msgs, goopenai.ChatCompletionMessage{Role: goopenai.ChatMessageRoleSystem, Content: req.System})
	}
	msgs = append(msgs, goopenai.ChatCompletionMessage{Role: goopenai.ChatMessageRoleUser, Content: req.Prompt})

	out := goopenai.ChatCompletionRequest{Model: c.model, Messages: msgs}
	if c.reasoning {
		out.MaxCompletionTokens = max(req.MaxTokens, 0)
	} else {
		out.Temperature = temperature
		// max_tokens, not max_completion_tokens: Ollama, vLLM, LM Studio and
		// DeepSeek all accept it.
		out.MaxTokens = max(req.MaxTokens, 0) //lint:ignore SA1019 the widely supported field
	}
	if useJSON {
		out.ResponseFormat = &goopenai.ChatCompletionResponseFormat{Type: goopenai.ChatCompletionResponseFormatTypeJSONObject}
	}
	return out
}

// isReasoningModel reports whether go-openai would refuse a classic request
// (temperature 0.1, max_tokens) for model.
func isReasoningModel(model string) bool {
	probe := goopenai.ChatCompletionRequest{Model: model, Temperature: temperature, MaxTokens: 1} //lint:ignore SA1019 probing go-openai's own rule
	return goopenai.NewReasoningValidator().Validate(probe) != nil
}

// reply extracts the message content and usage; an empty reply is an error.
func (c *Client) reply(resp goopenai.ChatCompletionResponse, attempts int) (memory.Completion, error) {
	if len(resp.Choices) == 0 {
		return memory.Completion{}, fmt.Errorf("complete with %s: the endpoint returned no choices: "+
			"check that MNEMO_LLM_BASE_URL is an OpenAI-compatible chat completions API", c.model)
	}
	choice := resp.Choices[0]
	if strings.TrimSpace(choice.Message.Content) == "" {
		reason := c.redactString(sanitizeToken(string(choice.FinishReason)))
		hint := ""
		if choice.FinishReason == goopenai.FinishReasonLength {
			hint = ": the token limit was reached before any answer (a thinking model may have spent it " +
				"on reasoning); raise the limit or use a non-thinking model"
		}
		return memory.Completion{}, fmt.Errorf("complete with %s: the model returned an empty reply (finish_reason %q)%s", c.model, reason, hint)
	}
	c.log.Debug("llm completion", "model", c.model, "attempts", attempts,
		"prompt_tokens", resp.Usage.PromptTokens, "completion_tokens", resp.Usage.CompletionTokens,
		"finish_reason", c.redactString(sanitizeToken(string(choice.FinishReason))))
	return memory.Completion{
		Text:             choice.Message.Content,
		PromptTokens:     resp.Usage.PromptTokens,
		CompletionTokens: resp.Usage.CompletionTokens,
	}, nil
}

func (c *Client) rememberNoJSONMode() {
	if !c.noJSONMode.Swap(true) {
		c.log.Warn("llm endpoint does not support response_format json_object; later requests omit it",
			"model", c.model)
	}
}

// backoff returns the wait before retry number retry (0-based): Retry-After
// when the endpoint sent one, else full jitter over an exponential ceiling;
// both capped by MaxBackoff.
func (c *Client) backoff(retry int, retryAfter string) time.Duration {
	if d, ok := parseRetryAfter(retryAfter, c.now()); ok {
		return min(d, c.maxBackoff)
	}
	ceiling := c.baseBackoff
	for range retry {
		if ceiling >= c.maxBackoff/2 {
			ceiling = c.maxBackoff
			break
		}
		ceiling *= 2
	}
	return min(c.jitter(ceiling), c.maxBackoff)
}

// redactString replaces the API key in s, however short, and masks the
// credentials of any URL in it (redact.Message, the one rule). Messages are
// built from sanitized parts only, but a hostile endpoint could still echo
// the key as an error code, parameter name or finish reason.
func (c *Client) redactString(s string) string {
	return redact.Message(s, c.apiKey)
}

// sleepCtx waits for d or until ctx ends, whichever is first.
func sleepCtx(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return ctx.Err()
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// fullJitter returns a uniformly random duration in [0, ceiling].
func fullJitter(ceiling time.Duration) time.Duration {
	if ceiling <= 0 {
		return 0
	}
	return time.Duration(rand.Int64N(int64(ceiling) + 1))
}
