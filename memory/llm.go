package memory

import (
	"context"
	"errors"
)

// ErrLLMUnavailable marks a failure of the language model endpoint that may
// pass (rate limit, outage, timeout); the work stays pending and is retried.
var ErrLLMUnavailable = errors.New("llm unavailable")

// CompletionRequest is one prompt for the language model.
type CompletionRequest struct {
	// System is the system message; may be empty.
	System string
	// Prompt is the user message.
	Prompt string
	// JSON asks for a JSON object reply where the endpoint supports it.
	JSON bool
	// MaxTokens bounds the reply; 0 means the provider's default.
	MaxTokens int
}

// Completion is the model's reply with its token usage.
type Completion struct {
	Text             string
	PromptTokens     int
	CompletionTokens int
}

// LLM is a chat model behind an OpenAI-compatible API or the host's own
// model. Complete returns the reply text; errors wrap ErrLLMUnavailable
// when retrying later may succeed, and never contain API keys or raw
// response bodies.
type LLM interface {
	Complete(ctx context.Context, req CompletionRequest) (Completion, error)
}
