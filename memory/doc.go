// Package memory is mnemo's domain and pipeline: the message model, scopes,
// turns, the long-term memory document, the DeerFlow message filter and
// signal detection, retrieval, and the token-budgeted injection text.
//
// It declares the small interfaces it needs from the outside world (its
// ports: Store and its optional capabilities, Embedder, LLM, TokenCounter)
// together in ports.go, and imports no MCP or provider library; adapters
// live in sub-packages named after their dependency.
package memory
