package openai

import (
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/mnemo-mcp/mnemo/internal/testutil"
	"github.com/mnemo-mcp/mnemo/memory"
	"github.com/mnemo-mcp/mnemo/memory/openai/openaitest"
)

// TestCanary runs every fault with a recognisable API key that the fake
// endpoint echoes back in every way it can (messages, codes, parameters,
// plain-text bodies, finish reasons) and checks that neither any error in the
// returned chain nor any log line contains it.
func TestCanary(t *testing.T) {
	// A short key is a secret too: one rule redacts any key.
	for _, canary := range []string{"sk-canary-XYZ123", "Zq7x"} {
		t.Run(canary, func(t *testing.T) { testCanary(t, canary) })
	}
}

func testCanary(t *testing.T, canary string) {
	echo := "Incorrect API key provided: " + canary + ". You can find your API key at https://platform.openai.com"

	faults := []struct {
		name   string
		req    memory.CompletionRequest
		script func(t *testing.T) []openaitest.Reply
	}{
		{"401", memory.CompletionRequest{}, func(t *testing.T) []openaitest.Reply {
			return []openaitest.Reply{openaitest.Error(t, 401, "invalid_request_error", "invalid_api_key", "", echo)}
		}},
		{"401 plain body", memory.CompletionRequest{}, func(t *testing.T) []openaitest.Reply {
			return []openaitest.Reply{{Status: 401, Body: "unauthorized: " + canary}}
		}},
		{"403 key as code", memory.CompletionRequest{}, func(t *testing.T) []openaitest.Reply {
			return []openaitest.Reply{openaitest.Error(t, 403, "permission_error", canary, "", echo)}
		}},
		{"404", memory.CompletionRequest{}, func(t *testing.T) []openaitest.Reply {
			return []openaitest.Reply{openaitest.Error(t, 404, canary, "", "", "model not found for "+canary)}
		}},
		{"400 key as parameter", memory.CompletionRequest{}, func(t *testing.T) []openaitest.Reply {
			return []openaitest.Reply{openaitest.Error(t, 400, "invalid_request_error", "", canary, echo)}
		}},
		{"422 plain body", memory.CompletionRequest{}, func(t *testing.T) []openaitest.Reply {
			return []openaitest.Reply{{Status: 422, Body: `{"detail":"bad key ` + canary + `"}`}}
		}},
		{"429 then persistent 500", memory.CompletionRequest{}, func(t *testing.T) []openaitest.Reply {
			s := openaitest.Error(t, 429, canary, canary, "", echo)
			s.Header = map[string]string{"Retry-After": "1"}
			e := openaitest.Reply{Status: 500, Body: "<html>" + canary + "</html>"}
			return []openaitest.Reply{s, e, e, e, e}
		}},
		{"quota", memory.CompletionRequest{}, func(t *testing.T) []openaitest.Reply {
			return []openaitest.Reply{openaitest.Error(t, 429, "insufficient_quota", "insufficient_quota", "", echo)}
		}},
		{"JSON mode rejection then 400", memory.CompletionRequest{JSON: true}, func(t *testing.T) []openaitest.Reply {
			return []openaitest.Reply{
				openaitest.Error(t, 400, "invalid_request_error", "", "response_format", "response_format unsupported "+canary),
				openaitest.Error(t, 400, "invalid_request_error", "", canary, echo),
			}
		}},
		{"connection dropped", memory.CompletionRequest{}, func(t *testing.T) []openaitest.Reply {
			h := openaitest.Reply{Hangup: true}
			return []openaitest.Reply{h, h, h, h, h}
		}},
		{"timeout", memory.CompletionRequest{}, func(t *testing.T) []openaitest.Reply {
			// Every attempt blocks; the short Timeout below applies only here.
			b := openaitest.Reply{Block: true}
			return []openaitest.Reply{b, b, b, b, b}
		}},
		{"no choices", memory.CompletionRequest{}, func(t *testing.T) []openaitest.Reply {
			return []openaitest.Reply{{Body: `{"id":"` + canary + `","choices":[]}`}}
		}},
		{"empty reply with key as finish reason", memory.CompletionRequest{}, func(t *testing.T) []openaitest.Reply {
			return []openaitest.Reply{openaitest.ChatFull(t, "", canary, canary, testUsage)}
		}},
		{"non-JSON reply", memory.CompletionRequest{}, func(t *testing.T) []openaitest.Reply {
			return []openaitest.Reply{{Body: "<html>" + canary}}
		}},
	}

	var logs testutil.LockedBuffer
	logger := slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	for _, tt := range faults {
		t.Run(tt.name, func(t *testing.T) {
			fake := openaitest.NewServer(t, tt.script(t)...)
			c, _ := newTestClient(t, fake.URL, func(c *Config) {
				c.APIKey = canary
				c.Logger = logger
				if tt.name == "timeout" {
					c.Timeout = 20 * time.Millisecond
				}
			})
			tt.req.Prompt = "hello"
			_, err := c.Complete(t.Context(), tt.req)
			if err == nil {
				t.Fatal("Complete() error = nil, want a fault")
			}
			for _, e := range errorChain(err) {
				if strings.Contains(e.Error(), canary) {
					t.Errorf("error %T in the chain contains the API key: %q", e, e)
				}
			}
			if auth := fake.Requests()[0].Auth; auth != "Bearer "+canary {
				t.Errorf("Authorization = %q, want the canary bearer token", auth)
			}
		})
	}

	out := logs.String()
	if !strings.Contains(out, "retrying") {
		t.Errorf("logs = %q, want retry records", out)
	}
	if strings.Contains(out, canary) {
		t.Errorf("logs contain the API key:\n%s", out)
	}
}

// errorChain returns err and every error it wraps, depth first.
func errorChain(err error) []error {
	if err == nil {
		return nil
	}
	chain := []error{err}
	switch u := err.(type) {
	case interface{ Unwrap() error }:
		chain = append(chain, errorChain(u.Unwrap())...)
	case interface{ Unwrap() []error }:
		for _, e := range u.Unwrap() {
			chain = append(chain, errorChain(e)...)
		}
	}
	return chain
}
