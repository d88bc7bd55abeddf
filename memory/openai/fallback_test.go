package openai

import (
	"testing"

	"github.com/mnemo-mcp/mnemo/memory"
	"github.com/mnemo-mcp/mnemo/memory/openai/openaitest"
)

func TestCompleteJSONModeFallback(t *testing.T) {
	jsonReq := memory.CompletionRequest{Prompt: "reply in JSON", JSON: true}

	tests := []struct {
		name       string
		rejection  func(t *testing.T) []openaitest.Reply // the replies to the first call's JSON-mode request
		wantErr    bool                                  // the first call fails
		wantSticky bool                                  // later calls skip response_format
	}{
		{
			name: "OpenAI-style error naming response_format",
			rejection: func(t *testing.T) []openaitest.Reply {
				return []openaitest.Reply{openaitest.Error(t, 400, "invalid_request_error", "", "response_format", "json_object is not supported by this model"), ok(t, "{}")}
			},
			wantSticky: true,
		},
		{
			name: "LM Studio-style error string",
			rejection: func(t *testing.T) []openaitest.Reply {
				return []openaitest.Reply{{Status: 400, Body: `{"error":"'response_format.type' must be 'json_schema' or 'text'"}`}, ok(t, "{}")}
			},
			wantSticky: true,
		},
		{
			name: "422 validation error from a FastAPI server",
			rejection: func(t *testing.T) []openaitest.Reply {
				return []openaitest.Reply{{Status: 422, Body: `{"detail":[{"loc":["body","response_format"],"msg":"unsupported"}]}`}, ok(t, "{}")}
			},
			wantSticky: true,
		},
		{
			name: "OpenAI's rule that the prompt must mention JSON is not remembered",
			rejection: func(t *testing.T) []openaitest.Reply {
				return []openaitest.Reply{openaitest.Error(t, 400, "invalid_request_error", "", "messages",
					"'messages' must contain the word 'json' in some form, to use 'response_format' of type 'json_object'."), ok(t, "{}")}
			},
		},
		{
			name: "an unsupported other parameter is not blamed on JSON mode",
			rejection: func(t *testing.T) []openaitest.Reply {
				e := openaitest.Error(t, 400, "invalid_request_error", "unsupported_parameter", "max_tokens", "Unsupported parameter: 'max_tokens'")
				return []openaitest.Reply{e, e}
			},
			wantErr: true,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			first := tt.rejection(t)
			fake := openaitest.NewServer(t, append(first, ok(t, `{"second":true}`))...)
			c, w := newTestClient(t, fake.URL, nil)

			_, err := c.Complete(t.Context(), jsonReq)
			if (err != nil) != tt.wantErr {
				t.Fatalf("first Complete() error = %v, want error %v", err, tt.wantErr)
			}
			got, err := c.Complete(t.Context(), jsonReq)
			if err != nil {
				t.Fatalf("second Complete() error = %v", err)
			}
			if got.Text != `{"second":true}` {
				t.Errorf("second Complete() text = %q, want the scripted reply", got.Text)
			}

			reqs := fake.Requests()
			if len(reqs) != len(first)+1 {
				t.Fatalf("endpoint got %d requests, want %d", len(reqs), len(first)+1)
			}
			if reqs[0].Chat.ResponseFormat == nil {
				t.Errorf("first request has no response_format, want json_object")
			}
			if reqs[1].Chat.ResponseFormat != nil {
				t.Errorf("retry after rejection has response_format, want none")
			}
			last := reqs[len(reqs)-1].Chat.ResponseFormat
			if skipped := last == nil; skipped != tt.wantSticky {
				t.Errorf("later call skips response_format = %v, want %v", skipped, tt.wantSticky)
			}
			if c.noJSONMode.Load() != tt.wantSticky {
				t.Errorf("noJSONMode = %v, want %v", c.noJSONMode.Load(), tt.wantSticky)
			}
			if len(w.all()) != 0 {
				t.Errorf("backoffs = %v, want none: the fallback retries at once", w.all())
			}
		})
	}
}

func TestCompleteJSONModeRejectionWithoutJSONRequest(t *testing.T) {
	// A plain request never triggers the fallback; a 400 is returned as is.
	fake := openaitest.NewServer(t, openaitest.Error(t, 400, "invalid_request_error", "", "response_format", "json_object is not supported"))
	c, _ := newTestClient(t, fake.URL, nil)
	if _, err := c.Complete(t.Context(), memory.CompletionRequest{Prompt: "hi"}); err == nil {
		t.Fatal("Complete() error = nil, want the 400")
	}
	if got := len(fake.Requests()); got != 1 {
		t.Errorf("endpoint got %d requests, want 1", got)
	}
}
