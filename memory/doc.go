// Package memory is mnemo's vocabulary and contracts, the one package every
// other imports: the message model and its filter and signals (types.go,
// filter.go, signals.go; a message is scanned once for the patterns'
// literals, internal/relit, and only the patterns it may match are run),
// scopes (scope.go), the persisted document and
// mid-term state (types.go, document_json.go, midterm.go, midterm_json.go:
// its direct JSON decoder, usage.go), the
// request, result and limit of every verb (api.go), what imports carry
// (imports.go), validation and the
// redaction hook (validate.go, secrets.go), errors (errors.go), the
// configuration (config.go), and the ports (ports.go): Store and its
// optional capabilities, LLM, Embedder, TokenCounter.
//
// It holds no state and imports no MCP, HTTP, database or provider
// library. The rules and the Service live in sub-packages:
//
//	memory/engine   the Service: per-scope state and its lock, the verbs
//	memory/recall   ranking and the injection text over one Pages value
//	memory/tiers    the mid-term session index: heat, LFU eviction, visits
//	memory/update   what the language model's reply does to a Document
//	memory/files, memory/postgres   the stores; memory/storetest their contract
//	memory/openai   the LLM and Embedder adapter
package memory
