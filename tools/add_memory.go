package tools

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/mnemo-mcp/mnemo/memory"
)

const nameAddMemory = "add_memory"

// addArgs are the arguments of add_memory.
type addArgs struct {
	UserInput     string          `json:"user_input,omitempty" jsonschema:"The user's message in the finished exchange. Give it with agent_response; or use messages instead."`
	AgentResponse string          `json:"agent_response,omitempty" jsonschema:"Your final reply to user_input (not intermediate tool steps)."`
	Messages      []chatMessage   `json:"messages,omitempty" jsonschema:"The exchange as chat messages in order, instead of user_input and agent_response. System (and developer) messages, tool messages and assistant messages that carry tool_calls are dropped; <uploaded_files> blocks are stripped from user text."`
	ThreadID      string          `json:"thread_id,omitempty" jsonschema:"Id of this conversation; use the same one for every call in it. Letters, digits, '.', '_' or '-', at most 128. Default: default."`
	Timestamp     string          `json:"timestamp,omitempty" jsonschema:"When the exchange happened: RFC 3339 like 2024-05-08T13:56:00Z, or 2024-05-08 13:56:00 (UTC). Default: now."`
	MetaData      json.RawMessage `json:"meta_data,omitempty" jsonschema:"Optional JSON object stored with the exchange and returned unchanged by retrieve_memory, e.g. {\"source\": \"chat\"}. Keep it small."`
	UserID        string          `json:"user_id,omitempty" jsonschema:"Whose memory this is. Leave empty for the configured user."`
	AgentName     string          `json:"agent_name,omitempty" jsonschema:"Set only to keep this agent's memory apart from the user's shared memory."`
	// IdempotencyKey lets a client retry safely after a time-out.
	IdempotencyKey string `json:"idempotency_key,omitempty" jsonschema:"Optional key of this exchange, e.g. a UUID, sent again unchanged if you retry the call: a retry is answered with the turn already stored instead of storing it twice. The same exchange sent twice to a thread within two minutes is recognised without a key too."`
	// Facts are the host model's own distillation of the exchange.
	Facts []hostFact `json:"facts,omitempty" jsonschema:"The lasting facts you learned about the user from this exchange, if any: few, short, each one sentence, only what is worth remembering in later conversations; never secrets. Each is kept, merged with a fact already known, or refused with the reason; the exchange is stored either way."`
}

// hostFact is one fact of add_memory's facts. Category and confidence are
// checked by the service, not the schema, so that a wrong one refuses the
// fact alone and never the exchange.
type hostFact struct {
	Content     string  `json:"content" jsonschema:"The fact as one short sentence about the user, e.g. Prefers Go over Python for backend work."`
	Category    string  `json:"category,omitempty" jsonschema:"What kind of fact: preference, knowledge, context, behavior, goal or correction. Default: context."`
	Confidence  float64 `json:"confidence,omitempty" jsonschema:"How sure you are, from 0 to 1: 0.9 when the user said it plainly, lower when you inferred it. Facts under the server's threshold (0.7 by default) are refused. Default: 0.9."`
	SourceError string  `json:"source_error,omitempty" jsonschema:"Only for a correction: what you got wrong, while content states the right approach."`
}

// chatMessage is one message of add_memory's messages (OpenAI chat format).
type chatMessage struct {
	Role       string     `json:"role" jsonschema:"Who wrote the message."`
	Content    string     `json:"content,omitempty" jsonschema:"The message text."`
	ToolCalls  []toolCall `json:"tool_calls,omitempty" jsonschema:"Tool calls an assistant message requests; such a message is an intermediate step and is not remembered."`
	Name       string     `json:"name,omitempty" jsonschema:"Optional name of the author."`
	ToolCallID string     `json:"tool_call_id,omitempty" jsonschema:"In a tool message: the id of the tool call it answers."`
}

// toolCall is a function call requested by an assistant message.
type toolCall struct {
	ID       string       `json:"id,omitempty" jsonschema:"Id of the call."`
	Type     string       `json:"type,omitempty" jsonschema:"Kind of call; function."`
	Function toolFunction `json:"function" jsonschema:"The function called."`
}

// toolFunction names the function of a tool call and its arguments.
type toolFunction struct {
	Name string `json:"name" jsonschema:"Name of the function."`
	// Arguments is usually a JSON string; some clients send the object.
	Arguments json.RawMessage `json:"arguments,omitempty" jsonschema:"The call's arguments: a JSON string, or the object itself."`
}

// AddMemory returns the add_memory tool: it stores one finished exchange.
// WithLLMConfigured words its description for the mode: without an
// extraction model, memory learns only the facts the host's model passes.
func AddMemory(m Memory, opts ...Option) server.ServerTool {
	var cfg config
	for _, o := range opts {
		o(&cfg)
	}
	facts := "A language model also distils the stored exchanges into the profile and facts in the background; " +
		"facts you pass in facts are kept as well and are not extracted twice. "
	returns := "and how many turns wait to be distilled into the profile and facts."
	if !cfg.llm {
		facts = "No extraction model is configured, and none is needed: you are the extraction model, and the facts you pass are what memory learns. " +
			"With each exchange, pass in facts its lasting facts about the user (few, short, only what is worth remembering across conversations; never secrets), " +
			"and after the user corrects you, a fact of category correction with the right approach and source_error; " +
			"the facts are kept at once. "
		returns = "and that nothing waits for extraction."
	}
	tool := mcp.NewTool(nameAddMemory,
		mcp.WithDescription("Store a finished exchange in the user's long-term memory. "+
			"Call it after each exchange, once your final reply is written: pass the user's message as user_input and your final reply as agent_response, "+
			"or pass the exchange as messages. Use the conversation's thread_id. Leave out passwords, API keys and other secrets. "+
			facts+
			"The exchange is durable and searchable with retrieve_memory as soon as this returns. "+
			"Returns the stored turn ids, what the message filter kept and dropped, correction or reinforcement cues noticed in the user's words, "+
			"what became of each fact (kept, merged or refused with the reason), what memory asks of you, "+
			returns),
		inputSchema[addArgs](func(root schemaNode) {
			freeObject(root, "meta_data")
			for _, id := range []string{"thread_id", "user_id", "agent_name", "idempotency_key"} {
				set(root, idSchema(), id)
			}
			messagesSchema(root)
			set(root, schemaNode{"type": "array"}, "facts")
			set(root, schemaNode{"minimum": 0, "maximum": 1}, "facts", "[]", "confidence")
		}),
		outputSchema[memory.AddResult](nil),
		annotate("Remember an exchange", false, false, false),
	)
	return typed(tool, func(ctx context.Context, _ mcp.CallToolRequest, args addArgs) (*mcp.CallToolResult, error) {
		meta, msg := metaData(args.MetaData)
		if msg != "" {
			return argumentError(msg)
		}
		res, err := m.Add(ctx, memory.AddRequest{
			UserID:        args.UserID,
			AgentName:     args.AgentName,
			ThreadID:      args.ThreadID,
			UserInput:     args.UserInput,
			AgentResponse: args.AgentResponse,
			Messages:      domainMessages(args.Messages),
			Timestamp:     args.Timestamp,
			MetaData:      meta,

			IdempotencyKey: args.IdempotencyKey,
			Facts:          domainFacts(args.Facts),
		})
		if err != nil {
			return toolError(ctx, nameAddMemory, err)
		}
		return mcp.NewToolResultStructured(res, addSummary(res)), nil
	})
}

// messagesSchema corrects the generated schema of the messages argument:
// a plain array; roles as an enum; extra members allowed in messages and
// tool calls (chat logs carry fields such as refusal or annotations, which
// are ignored); function arguments as a string or an object.
func messagesSchema(root schemaNode) {
	set(root, schemaNode{"type": "array"}, "messages")
	delete(node(root, "messages", "[]"), "additionalProperties")
	set(root, schemaNode{"enum": []string{"user", "assistant", "system", "developer", "tool"}}, "messages", "[]", "role")
	set(root, schemaNode{"type": "array"}, "messages", "[]", "tool_calls")
	delete(node(root, "messages", "[]", "tool_calls", "[]"), "additionalProperties")
	delete(node(root, "messages", "[]", "tool_calls", "[]", "function"), "additionalProperties")
	args := node(root, "messages", "[]", "tool_calls", "[]", "function", "arguments")
	delete(args, "items")
	args["type"] = []string{"string", "object"}
}

// metaData returns meta_data as the JSON the service checks: an object as
// given, or the content of a string that a client made of the object. The
// service reports anything that is not an object.
func metaData(raw json.RawMessage) (json.RawMessage, string) {
	if len(raw) == 0 || raw[0] != '"' {
		return raw, ""
	}
	var s string
	if err := json.Unmarshal(raw, &s); err != nil {
		return nil, "meta_data: is not a valid JSON string"
	}
	if strings.TrimSpace(s) == "" {
		return nil, ""
	}
	return json.RawMessage(s), ""
}

// domainFacts converts the host's facts to the memory package's model.
func domainFacts(in []hostFact) []memory.HostFact {
	out := make([]memory.HostFact, len(in))
	for i, f := range in {
		out[i] = memory.HostFact{Content: f.Content, Category: f.Category, Confidence: f.Confidence, SourceError: f.SourceError}
	}
	return out
}

// domainMessages converts chat messages to the memory package's model.
func domainMessages(in []chatMessage) []memory.Message {
	if len(in) == 0 {
		return nil
	}
	out := make([]memory.Message, len(in))
	for i, m := range in {
		out[i] = memory.Message{Role: memory.Role(m.Role), Content: m.Content, Name: m.Name, ToolCallID: m.ToolCallID}
		for _, c := range m.ToolCalls {
			tc := memory.ToolCall{ID: c.ID, Type: c.Type}
			tc.Function.Name = c.Function.Name
			tc.Function.Arguments = functionArguments(c.Function.Arguments)
			out[i].ToolCalls = append(out[i].ToolCalls, tc)
		}
	}
	return out
}

// functionArguments returns a tool call's arguments as the JSON string the
// chat format defines, whether the client sent that string or the object.
func functionArguments(raw json.RawMessage) string {
	var s string
	if len(raw) > 0 && raw[0] == '"' && json.Unmarshal(raw, &s) == nil {
		return s
	}
	return string(raw)
}

// addSummary is the text of an add_memory result, for the model to read.
func addSummary(r *memory.AddResult) string {
	var b strings.Builder
	switch {
	case r.Duplicate:
		fmt.Fprintf(&b, "Already stored as %s (%s) in thread %s — a retry of the same exchange; nothing stored again",
			count(len(r.TurnIDs), "turn"), strings.Join(r.TurnIDs, ", "), r.ThreadID)
	case len(r.TurnIDs) == 0:
		fmt.Fprintf(&b, "Stored nothing in thread %s", r.ThreadID)
		if r.Note != "" {
			b.WriteString(" — " + r.Note)
		}
	default:
		fmt.Fprintf(&b, "Stored %s (%s) in thread %s", count(len(r.TurnIDs), "turn"), strings.Join(r.TurnIDs, ", "), r.ThreadID)
	}
	fmt.Fprintf(&b, " of %s; filter kept %s, dropped %d", scopeText(r.Scope), count(r.Filter.Kept, "message"), r.Filter.Dropped())
	if len(r.Redacted) > 0 {
		b.WriteString("; " + redactedText(r.Redacted))
	}
	if r.Signals.Correction {
		b.WriteString("; the user's words read as a correction of you (flagged for the memory update)")
	}
	if r.Signals.Reinforcement {
		b.WriteString("; the user's words read as approval of your approach (flagged for the memory update)")
	}
	if len(r.Facts) > 0 {
		var kept, merged, refused []string
		for _, f := range r.Facts {
			switch f.Status {
			case memory.HostFactKept:
				kept = append(kept, f.FactID)
			case memory.HostFactMerged:
				merged = append(merged, f.FactID)
			default:
				refused = append(refused, fmt.Sprintf("%q (%s)", clip(f.Content, 60), f.Reason))
			}
		}
		fmt.Fprintf(&b, "; facts: %d kept%s, %d merged with known facts%s, %d refused", len(kept), ids(kept), len(merged), ids(merged), len(refused))
		if len(refused) > 0 {
			b.WriteString(": " + strings.Join(refused, "; "))
		}
	}
	if r.Pending.Turns > 0 {
		fmt.Fprintf(&b, "; %s pending — LLM %s", count(r.Pending.Turns, "turn"), r.Pending.LLM)
	}
	if r.Pending.LLM == memory.KeylessMode && len(r.TurnIDs) > 0 && r.Ask == "" {
		b.WriteString("; stored and searchable, and nothing waits for extraction: the facts come from you")
	}
	b.WriteString(".")
	if r.Ask != "" {
		b.WriteString(" Memory asks: " + r.Ask + ".")
	}
	return b.String()
}

// redactedText says which secrets were replaced before storing, by kind
// and count, never the secret.
func redactedText(found []memory.Redaction) string {
	parts := make([]string, len(found))
	for i, f := range found {
		parts[i] = fmt.Sprintf("%d %s", f.Count, f.Kind)
	}
	return "secrets replaced by [redacted: KIND] before storing: " + strings.Join(parts, ", ")
}

// capitalize upper-cases the first letter of an ASCII sentence.
func capitalize(s string) string {
	if s == "" || s[0] < 'a' || s[0] > 'z' {
		return s
	}
	return string(s[0]-'a'+'A') + s[1:]
}

// count formats n with a noun, plural when n is not 1.
func count(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}

// scopeText names a scope for a summary.
func scopeText(s memory.Scope) string {
	if s.AgentName == "" {
		return "user " + s.UserID
	}
	return "user " + s.UserID + ", agent " + s.AgentName
}
