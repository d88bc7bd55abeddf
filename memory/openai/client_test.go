package openai

import (
	"errors"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mnemo-mcp/mnemo/memory"
	"github.com/mnemo-mcp/mnemo/memory/openai/openaitest"
)

func TestComplete(t *testing.T) {
	jsonReq := memory.CompletionRequest{System: "be terse", Prompt: "extract facts", JSON: true, MaxTokens: 256}
	plainReq := memory.CompletionRequest{Prompt: "hello"}
	s500 := openaitest.Reply{Status: http.StatusInternalServerError, Body: `{"error":{"message":"boom","type":"server_error"}}`}

	tests := []struct {
		name            string
		cfg             func(*Config)
		req             memory.CompletionRequest
		script          func(t *testing.T) []openaitest.Reply
		wantText        string
		wantErr         []string // substrings of the error; nil means success
		wantUnavailable bool
		wantWaits       []time.Duration
		check           func(t *testing.T, got []openaitest.Request)
	}{
		{
			name:     "valid reply with system message and JSON mode",
			req:      jsonReq,
			script:   func(t *testing.T) []openaitest.Reply { return []openaitest.Reply{ok(t, `{"facts":[]}`)} },
			wantText: `{"facts":[]}`,
			check: func(t *testing.T, got []openaitest.Request) {
				r := got[0]
				if r.Auth != "Bearer "+testKey {
					t.Errorf("Authorization = %q, want %q", r.Auth, "Bearer "+testKey)
				}
				if r.Chat.Model != "test-model" {
					t.Errorf("model = %q, want test-model", r.Chat.Model)
				}
				if len(r.Chat.Messages) != 2 || r.Chat.Messages[0].Role != "system" || r.Chat.Messages[0].Content != "be terse" ||
					r.Chat.Messages[1].Role != "user" || r.Chat.Messages[1].Content != "extract facts" {
					t.Errorf("messages = %+v, want system + user", r.Chat.Messages)
				}
				if r.Chat.ResponseFormat == nil || r.Chat.ResponseFormat.Type != "json_object" {
					t.Errorf("response_format = %+v, want json_object", r.Chat.ResponseFormat)
				}
				if r.Chat.MaxTokens != 256 {
					t.Errorf("max_tokens = %d, want 256", r.Chat.MaxTokens)
				}
				if r.Chat.Temperature == nil || *r.Chat.Temperature > 0.2 {
					t.Errorf("temperature = %v, want 0.1", r.Chat.Temperature)
				}
			},
		},
		{
			name:     "no system message and no JSON mode",
			req:      plainReq,
			script:   func(t *testing.T) []openaitest.Reply { return []openaitest.Reply{ok(t, "hi")} },
			wantText: "hi",
			check: func(t *testing.T, got []openaitest.Request) {
				r := got[0].Chat
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
			script: func(t *testing.T) []openaitest.Reply {
				return []openaitest.Reply{openaitest.ChatFull(t, "<think>x</think>\n```json\n{}\n```", "long chain of thought", "stop", testUsage)}
			},
			wantText: "<think>x</think>\n```json\n{}\n```",
		},
		{
			name:     "reasoning model gets max_completion_tokens and no temperature",
			cfg:      func(c *Config) { c.Model = "o3-mini" },
			req:      jsonReq,
			script:   func(t *testing.T) []openaitest.Reply { return []openaitest.Reply{ok(t, "{}")} },
			wantText: "{}",
			check: func(t *testing.T, got []openaitest.Request) {
				r := got[0].Chat
				if r.MaxTokens != 0 || r.MaxCompletionTokens != 256 || r.Temperature != nil {
					t.Errorf("max_tokens = %d, max_completion_tokens = %d, temperature = %v; want 0, 256, absent",
						r.MaxTokens, r.MaxCompletionTokens, r.Temperature)
				}
			},
		},
		{
			name: "429 with Retry-After seconds then success",
			req:  plainReq,
			script: func(t *testing.T) []openaitest.Reply {
				s := openaitest.Error(t, 429, "requests", "rate_limit_exceeded", "", "slow down")
				s.Header = map[string]string{"Retry-After": "2"}
				return []openaitest.Reply{s, ok(t, "done")}
			},
			wantText:  "done",
			wantWaits: []time.Duration{2 * time.Second},
		},
		{
			name: "429 with Retry-After HTTP date then success",
			req:  plainReq,
			script: func(t *testing.T) []openaitest.Reply {
				s := openaitest.Error(t, 429, "requests", "rate_limit_exceeded", "", "slow down")
				s.Header = map[string]string{"Retry-After": fixedNow.Add(3 * time.Second).Format(http.TimeFormat)}
				return []openaitest.Reply{s, ok(t, "done")}
			},
			wantText:  "done",
			wantWaits: []time.Duration{3 * time.Second},
		},
		{
			name: "Retry-After is capped by MaxBackoff",
			cfg:  func(c *Config) { c.MaxBackoff = 10 * time.Second },
			req:  plainReq,
			script: func(t *testing.T) []openaitest.Reply {
				return []openaitest.Reply{{Status: 503, Header: map[string]string{"Retry-After": "600"}}, ok(t, "done")}
			},
			wantText:  "done",
			wantWaits: []time.Duration{10 * time.Second},
		},
		{
			name: "500, 502, 503 then success",
			req:  plainReq,
			script: func(t *testing.T) []openaitest.Reply {
				return []openaitest.Reply{s500, {Status: 502, Body: "<html>bad gateway</html>"}, {Status: 503}, ok(t, "done")}
			},
			wantText:  "done",
			wantWaits: []time.Duration{time.Second, 2 * time.Second, 4 * time.Second},
		},
		{
			name: "persistent 500 gives up after MaxRetries+1 attempts",
			req:  plainReq,
			script: func(t *testing.T) []openaitest.Reply {
				return slices.Repeat([]openaitest.Reply{s500}, DefaultMaxRetries+1)
			},
			wantErr:         []string{"gave up after 5 attempts", "500 server_error"},
			wantUnavailable: true,
			wantWaits:       []time.Duration{time.Second, 2 * time.Second, 4 * time.Second, 8 * time.Second},
		},
		{
			name:            "no retries when MaxRetries is negative",
			cfg:             func(c *Config) { c.MaxRetries = -1 },
			req:             plainReq,
			script:          func(t *testing.T) []openaitest.Reply { return []openaitest.Reply{s500} },
			wantErr:         []string{"the endpoint failed (500"},
			wantUnavailable: true,
		},
		{
			name:      "dropped connection then success",
			req:       plainReq,
			script:    func(t *testing.T) []openaitest.Reply { return []openaitest.Reply{{Hangup: true}, ok(t, "done")} },
			wantText:  "done",
			wantWaits: []time.Duration{time.Second},
		},
		{
			name: "401 is not retried and names the key setting",
			req:  plainReq,
			script: func(t *testing.T) []openaitest.Reply {
				return []openaitest.Reply{openaitest.Error(t, 401, "invalid_request_error", "invalid_api_key", "", "Incorrect API key provided")}
			},
			wantErr: []string{"rejected the API key (401 invalid_api_key)", "MNEMO_LLM_API_KEY"},
		},
		{
			name: "403 is not retried",
			req:  plainReq,
			script: func(t *testing.T) []openaitest.Reply {
				return []openaitest.Reply{openaitest.Error(t, 403, "permission_error", "", "", "no access")}
			},
			wantErr: []string{"denied access (403 permission_error)", "MNEMO_LLM_API_KEY"},
		},
		{
			name: "404 unknown model names the model setting",
			req:  plainReq,
			script: func(t *testing.T) []openaitest.Reply {
				return []openaitest.Reply{openaitest.Error(t, 404, "invalid_request_error", "model_not_found", "", "The model `x` does not exist")}
			},
			wantErr: []string{`model "test-model" not found (404 model_not_found)`, "MNEMO_LLM_MODEL"},
		},
		{
			name: "404 without an API error points at the base URL",
			req:  plainReq,
			script: func(t *testing.T) []openaitest.Reply {
				return []openaitest.Reply{{Status: 404, Body: "404 page not found"}}
			},
			wantErr: []string{"no chat completions API at the base URL (404)", "MNEMO_LLM_BASE_URL"},
		},
		{
			name: "400 is not retried and names the parameter",
			req:  plainReq,
			script: func(t *testing.T) []openaitest.Reply {
				return []openaitest.Reply{openaitest.Error(t, 400, "invalid_request_error", "", "max_tokens", "max_tokens is too large: 999999")}
			},
			wantErr: []string{"rejected the request (400 invalid_request_error, parameter max_tokens)"},
		},
		{
			name: "context length exceeded",
			req:  plainReq,
			script: func(t *testing.T) []openaitest.Reply {
				return []openaitest.Reply{openaitest.Error(t, 400, "invalid_request_error", "context_length_exceeded", "messages", "too long")}
			},
			wantErr: []string{"prompt is too long", "context_length_exceeded"},
		},
		{
			name: "429 insufficient_quota is unavailable but not retried now",
			req:  plainReq,
			script: func(t *testing.T) []openaitest.Reply {
				return []openaitest.Reply{openaitest.Error(t, 429, "insufficient_quota", "insufficient_quota", "", "You exceeded your current quota")}
			},
			wantErr:         []string{"quota is exhausted"},
			wantUnavailable: true,
		},
		{
			name: "no choices is an error",
			req:  plainReq,
			script: func(t *testing.T) []openaitest.Reply {
				return []openaitest.Reply{{Body: `{"id":"x","object":"chat.completion","choices":[],"usage":{}}`}}
			},
			wantErr: []string{"no choices"},
		},
		{
			name: "empty content after thinking is an error with a hint",
			req:  plainReq,
			script: func(t *testing.T) []openaitest.Reply {
				return []openaitest.Reply{openaitest.ChatFull(t, "", "thought until the limit", "length", testUsage)}
			},
			wantErr: []string{"empty reply", `finish_reason "length"`, "token limit"},
		},
		{
			name: "non-JSON 200 reply",
			req:  plainReq,
			script: func(t *testing.T) []openaitest.Reply {
				return []openaitest.Reply{{Body: "<html>captive portal</html>"}}
			},
			wantErr: []string{"not chat completion JSON"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			script := tt.script(t)
			fake := openaitest.NewServer(t, script...)
			c, w := newTestClient(t, fake.URL, tt.cfg)

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
			reqs := fake.Requests()
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
	fake := openaitest.NewServer(t)
	c, _ := newTestClient(t, fake.URL, nil)
	_, err := c.Complete(t.Context(), memory.CompletionRequest{System: "s", Prompt: "  "})
	if !errors.Is(err, memory.ErrInvalidInput) {
		t.Errorf("Complete() error = %v, want ErrInvalidInput", err)
	}
}

func TestCompleteLocalServerWithoutKey(t *testing.T) {
	fake := openaitest.NewServer(t, ok(t, "hi"))
	c, _ := newTestClient(t, fake.URL, func(c *Config) { c.APIKey = "" })
	if _, err := c.Complete(t.Context(), memory.CompletionRequest{Prompt: "hello"}); err != nil {
		t.Fatalf("Complete() error = %v", err)
	}
	if got := fake.Requests()[0].Auth; got != "" {
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
