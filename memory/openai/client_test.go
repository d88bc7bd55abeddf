package openai

import (
	"errors"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mnemo-mcp/mnemo/memory"
)

func TestComplete(t *testing.T) {
	jsonReq := memory.CompletionRequest{System: "be terse", Prompt: "extract facts", JSON: true, MaxTokens: 256}
	plainReq := memory.CompletionRequest{Prompt: "hello"}
	s500 := step{status: http.StatusInternalServerError, body: `{"error":{"message":"boom","type":"server_error"}}`}

	tests := []struct {
		name            string
		cfg             func(*Config)
		req             memory.CompletionRequest
		script          func(t *testing.T) []step
		wantText        string
		wantErr         []string // substrings of the error; nil means success
		wantUnavailable bool
		wantWaits       []time.Duration
		check           func(t *testing.T, got []seen)
	}{
		{
			name:     "valid reply with system message and JSON mode",
			req:      jsonReq,
			script:   func(t *testing.T) []step { return []step{ok(t, `{"facts":[]}`)} },
			wantText: `{"facts":[]}`,
			check: func(t *testing.T, got []seen) {
				r := got[0]
				if r.auth != "Bearer "+testKey {
					t.Errorf("Authorization = %q, want %q", r.auth, "Bearer "+testKey)
				}
				if r.req.Model != "test-model" {
					t.Errorf("model = %q, want test-model", r.req.Model)
				}
				if len(r.req.Messages) != 2 || r.req.Messages[0].Role != "system" || r.req.Messages[0].Content != "be terse" ||
					r.req.Messages[1].Role != "user" || r.req.Messages[1].Content != "extract facts" {
					t.Errorf("messages = %+v, want system + user", r.req.Messages)
				}
				if r.req.ResponseFormat == nil || r.req.ResponseFormat.Type != "json_object" {
					t.Errorf("response_format = %+v, want json_object", r.req.ResponseFormat)
				}
				if r.req.MaxTokens != 256 {
					t.Errorf("max_tokens = %d, want 256", r.req.MaxTokens)
				}
				if r.req.Temperature == nil || *r.req.Temperature > 0.2 {
					t.Errorf("temperature = %v, want 0.1", r.req.Temperature)
				}
			},
		},
		{
			name:     "no system message and no JSON mode",
			req:      plainReq,
			script:   func(t *testing.T) []step { return []step{ok(t, "hi")} },
			wantText: "hi",
			check: func(t *testing.T, got []seen) {
				r := got[0].req
				if len(r.Messages) != 1 || r.Messages[0].Role != "user" {
					t.Errorf("messages = %+v, want one user message", r.Messages)
				}
				if r.ResponseFormat != nil {
					t.Errorf("response_format = %+v, want absent", r.ResponseFormat)
				}
				if r.MaxTokens != 0 {
					t.Errorf("max_tokens = %d, want absent", r.MaxTokens)
				}
			},
		},
		{
			name: "reasoning_content is dropped and content kept verbatim",
			req:  plainReq,
			script: func(t *testing.T) []step {
				return []step{{body: replyBody(t, "<think>x</think>\n```json\n{}\n```", "long chain of thought", "stop")}}
			},
			wantText: "<think>x</think>\n```json\n{}\n```",
		},
		{
			name:     "reasoning model gets max_completion_tokens and no temperature",
			cfg:      func(c *Config) { c.Model = "o3-mini" },
			req:      jsonReq,
			script:   func(t *testing.T) []step { return []step{ok(t, "{}")} },
			wantText: "{}",
			check: func(t *testing.T, got []seen) {
				r := got[0].req
				if r.MaxTokens != 0 || r.MaxCompletionTokens != 256 || r.Temperature != nil {
					t.Errorf("max_tokens = %d, max_completion_tokens = %d, temperature = %v; want 0, 256, absent",
						r.MaxTokens, r.MaxCompletionTokens, r.Temperature)
				}
			},
		},
		{
			name: "429 with Retry-After seconds then success",
			req:  plainReq,
			script: func(t *testing.T) []step {
				s := apiErr(t, 429, "requests", "rate_limit_exceeded", "", "slow down")
				s.header = map[string]string{"Retry-After": "2"}
				return []step{s, ok(t, "done")}
			},
			wantText:  "done",
			wantWaits: []time.Duration{2 * time.Second},
		},
		{
			name: "429 with Retry-After HTTP date then success",
			req:  plainReq,
			script: func(t *testing.T) []step {
				s := apiErr(t, 429, "requests", "rate_limit_exceeded", "", "slow down")
				s.header = map[string]string{"Retry-After": fixedNow.Add(3 * time.Second).Format(http.TimeFormat)}
				return []step{s, ok(t, "done")}
			},
			wantText:  "done",
			wantWaits: []time.Duration{3 * time.Second},
		},
		{
			name: "Retry-After is capped by MaxBackoff",
			cfg:  func(c *Config) { c.MaxBackoff = 10 * time.Second },
			req:  plainReq,
			script: func(t *testing.T) []step {
				return []step{{status: 503, header: map[string]string{"Retry-After": "600"}}, ok(t, "done")}
			},
			wantText:  "done",
			wantWaits: []time.Duration{10 * time.Second},
		},
		{
			name: "500, 502, 503 then success",
			req:  plainReq,
			script: func(t *testing.T) []step {
				return []step{s500, {status: 502, body: "<html>bad gateway</html>"}, {status: 503}, ok(t, "done")}
			},
			wantText:  "done",
			wantWaits: []time.Duration{time.Second, 2 * time.Second, 4 * time.Second},
		},
		{
			name:            "persistent 500 gives up after MaxRetries+1 attempts",
			req:             plainReq,
			script:          func(t *testing.T) []step { return slices.Repeat([]step{s500}, DefaultMaxRetries+1) },
			wantErr:         []string{"gave up after 5 attempts", "500 server_error"},
			wantUnavailable: true,
			wantWaits:       []time.Duration{time.Second, 2 * time.Second, 4 * time.Second, 8 * time.Second},
		},
		{
			name:            "no retries when MaxRetries is negative",
			cfg:             func(c *Config) { c.MaxRetries = -1 },
			req:             plainReq,
			script:          func(t *testing.T) []step { return []step{s500} },
			wantErr:         []string{"the endpoint failed (500"},
			wantUnavailable: true,
		},
		{
			name:      "dropped connection then success",
			req:       plainReq,
			script:    func(t *testing.T) []step { return []step{{hangup: true}, ok(t, "done")} },
			wantText:  "done",
			wantWaits: []time.Duration{time.Second},
		},
		{
			name: "401 is not retried and names the key setting",
			req:  plainReq,
			script: func(t *testing.T) []step {
				return []step{apiErr(t, 401, "invalid_request_error", "invalid_api_key", "", "Incorrect API key provided")}
			},
			wantErr: []string{"rejected the API key (401 invalid_api_key)", "MNEMO_LLM_API_KEY"},
		},
		{
			name: "403 is not retried",
			req:  plainReq,
			script: func(t *testing.T) []step {
				return []step{apiErr(t, 403, "permission_error", "", "", "no access")}
			},
			wantErr: []string{"denied access (403 permission_error)", "MNEMO_LLM_API_KEY"},
		},
		{
			name: "404 unknown model names the model setting",
			req:  plainReq,
			script: func(t *testing.T) []step {
				return []step{apiErr(t, 404, "invalid_request_error", "model_not_found", "", "The model `x` does not exist")}
			},
			wantErr: []string{`model "test-model" not found (404 model_not_found)`, "MNEMO_LLM_MODEL"},
		},
		{
			name:    "404 without an API error points at the base URL",
			req:     plainReq,
			script:  func(t *testing.T) []step { return []step{{status: 404, body: "404 page not found"}} },
			wantErr: []string{"no chat completions API at the base URL (404)", "MNEMO_LLM_BASE_URL"},
		},
		{
			name: "400 is not retried and names the parameter",
			req:  plainReq,
			script: func(t *testing.T) []step {
				return []step{apiErr(t, 400, "invalid_request_error", "", "max_tokens", "max_tokens is too large: 999999")}
			},
			wantErr: []string{"rejected the request (400 invalid_request_error, parameter max_tokens)"},
		},
		{
			name: "context length exceeded",
			req:  plainReq,
			script: func(t *testing.T) []step {
				return []step{apiErr(t, 400, "invalid_request_error", "context_length_exceeded", "messages", "too long")}
			},
			wantErr: []string{"prompt is too long", "context_length_exceeded"},
		},
		{
			name: "429 insufficient_quota is unavailable but not retried now",
			req:  plainReq,
			script: func(t *testing.T) []step {
				return []step{apiErr(t, 429, "insufficient_quota", "insufficient_quota", "", "You exceeded your current quota")}
			},
			wantErr:         []string{"quota is exhausted"},
			wantUnavailable: true,
		},
		{
			name: "no choices is an error",
			req:  plainReq,
			script: func(t *testing.T) []step {
				return []step{{body: `{"id":"x","object":"chat.completion","choices":[],"usage":{}}`}}
			},
			wantErr: []string{"no choices"},
		},
		{
			name: "empty content after thinking is an error with a hint",
			req:  plainReq,
			script: func(t *testing.T) []step {
				return []step{{body: replyBody(t, "", "thought until the limit", "length")}}
			},
			wantErr: []string{"empty reply", `finish_reason "length"`, "token limit"},
		},
		{
			name:    "non-JSON 200 reply",
			req:     plainReq,
			script:  func(t *testing.T) []step { return []step{{body: "<html>captive portal</html>"}} },
			wantErr: []string{"not chat completion JSON"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			script := tt.script(t)
			fake := newFake(t, script...)
			c, w := newTestClient(t, fake.url, tt.cfg)

			got, err := c.Complete(t.Context(), tt.req)

			if tt.wantErr == nil {
				if err != nil {
					t.Fatalf("Complete() error = %v", err)
				}
				want := memory.Completion{Text: tt.wantText, PromptTokens: 11, CompletionTokens: 7}
				if got != want {
					t.Errorf("Complete() = %+v, want %+v", got, want)
				}
			} else {
				if err == nil {
					t.Fatalf("Complete() = %+v, want error containing %q", got, tt.wantErr)
				}
				for _, s := range tt.wantErr {
					if !strings.Contains(err.Error(), s) {
						t.Errorf("Complete() error = %q, want it to contain %q", err, s)
					}
				}
				if is := errors.Is(err, memory.ErrLLMUnavailable); is != tt.wantUnavailable {
					t.Errorf("errors.Is(err, ErrLLMUnavailable) = %v, want %v", is, tt.wantUnavailable)
				}
			}
			reqs := fake.requests()
			if len(reqs) != len(script) {
				t.Errorf("endpoint got %d requests, want %d", len(reqs), len(script))
			}
			if gotWaits := w.all(); !slices.Equal(gotWaits, tt.wantWaits) {
				t.Errorf("backoffs = %v, want %v", gotWaits, tt.wantWaits)
			}
			if tt.check != nil && len(reqs) > 0 {
				tt.check(t, reqs)
			}
		})
	}
}

func TestCompleteEmptyPrompt(t *testing.T) {
	fake := newFake(t)
	c, _ := newTestClient(t, fake.url, nil)
	_, err := c.Complete(t.Context(), memory.CompletionRequest{System: "s", Prompt: "  "})
	if !errors.Is(err, memory.ErrInvalidInput) {
		t.Errorf("Complete() error = %v, want ErrInvalidInput", err)
	}
}

func TestCompleteLocalServerWithoutKey(t *testing.T) {
	fake := newFake(t, ok(t, "hi"))
	c, _ := newTestClient(t, fake.url, func(c *Config) { c.APIKey = "" })
	if _, err := c.Complete(t.Context(), memory.CompletionRequest{Prompt: "hello"}); err != nil {
		t.Fatalf("Complete() error = %v", err)
	}
	if got := fake.requests()[0].auth; got != "" {
		t.Errorf("Authorization = %q, want none", got)
	}
}

func TestNew(t *testing.T) {
	c, err := New(Config{})
	if err != nil {
		t.Fatalf("New() error = %v", err)
	}
	if c.Model() != DefaultModel || c.timeout != DefaultTimeout || c.maxRetries != DefaultMaxRetries ||
		c.baseBackoff != DefaultBaseBackoff || c.maxBackoff != DefaultMaxBackoff {
		t.Errorf("New(Config{}) = model %q, timeout %v, retries %d, backoff %v..%v; want the defaults",
			c.Model(), c.timeout, c.maxRetries, c.baseBackoff, c.maxBackoff)
	}

	bad := []Config{
		{BaseURL: "ftp://user:sk-secret-value@example.com/v1"},
		{BaseURL: "localhost:11434/v1"},
		{BaseURL: "http://"},
		{Timeout: -time.Second},
		{MaxBackoff: -time.Second},
	}
	for _, cfg := range bad {
		_, err := New(cfg)
		if err == nil {
			t.Errorf("New(%+v) error = nil, want error", cfg)
			continue
		}
		if strings.Contains(err.Error(), "sk-secret-value") {
			t.Errorf("New() error = %q, leaks the URL", err)
		}
	}
}
