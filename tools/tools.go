// Package tools is mnemo's MCP surface: the server, its instructions and
// one tool per file, each a constructor returning a server.ServerTool over
// the memory service. It decodes and describes arguments, applies the one
// error policy (errors.go) and renders results for the host's model; what
// memory does lives in package memory. Around the tools: resources.go and
// listen.go (memory as documents, and their change notifications for
// every protocol revision), logging.go (the server's log records as
// notifications/message), confirm.go (asking the user before everything
// is forgotten), app.go and app/memory.html (the memory view, an MCP App
// that show_memory names for hosts that show one).
package tools

import (
	"context"
	"fmt"
	"sync"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/mnemo-mcp/mnemo/memory"
	"github.com/mnemo-mcp/mnemo/prompts"
)

// Memory is the memory service behind the tools; *engine.Service
// implements it. Errors wrapping memory.ErrInvalidInput, ErrNotFound or
// ErrNoLLM carry a message for the caller and are reported as such;
// ErrLLMUnavailable is reported as a passing outage; any other error is
// internal and is logged, not shown (errors.go).
type Memory interface {
	Add(ctx context.Context, req memory.AddRequest) (*memory.AddResult, error)
	Retrieve(ctx context.Context, req memory.RetrieveRequest) (*memory.RetrieveResult, error)
	Profile(ctx context.Context, req memory.ProfileRequest) (*memory.ProfileResult, error)
	Flush(ctx context.Context, req memory.FlushRequest) (*memory.FlushResult, error)
}

// Manager is the part of the memory service that manages memory directly
// (save, correct, forget, browse, explain); *engine.Service implements it.
// Errors follow the same contract as Memory's.
type Manager interface {
	SaveFact(ctx context.Context, req memory.SaveFactRequest) (*memory.SaveFactResult, error)
	UpdateFact(ctx context.Context, req memory.UpdateFactRequest) (*memory.UpdateFactResult, error)
	Forget(ctx context.Context, req memory.ForgetRequest) (*memory.ForgetResult, error)
	FindTopic(ctx context.Context, req memory.TopicRequest) (*memory.TopicResult, error)
	List(ctx context.Context, req memory.ListRequest) (*memory.ListResult, error)
	FactHistory(ctx context.Context, req memory.HistoryRequest) (*memory.HistoryResult, error)
	UpdateProfile(ctx context.Context, req memory.UpdateProfileRequest) (*memory.UpdateProfileResult, error)
	RestoreFact(ctx context.Context, req memory.RestoreFactRequest) (*memory.RestoreFactResult, error)
}

// serverName is the name the server reports at initialize.
const serverName = "mnemo"

// All returns every tool over m, in the order they are listed: the four
// core tools, and the tools that manage memory when m is also a Manager
// (or nil, for listing the tools without a service).
func All(m Memory, opts ...Option) []server.ServerTool {
	makers := []func() server.ServerTool{
		func() server.ServerTool { return AddMemory(m, opts...) },
		func() server.ServerTool { return RetrieveMemory(m) },
		func() server.ServerTool { return GetUserProfile(m) },
		func() server.ServerTool { return FlushMemory(m, opts...) },
	}
	mm, ok := m.(Manager)
	if ok || m == nil {
		makers = append(makers, manageMakers(mm, opts...)...)
		makers = append(makers, func() server.ServerTool { return ShowMemory(m) })
	}
	return build(makers)
}

func manageMakers(m Manager, opts ...Option) []func() server.ServerTool {
	return []func() server.ServerTool{
		func() server.ServerTool { return SaveMemory(m) },
		func() server.ServerTool { return UpdateMemory(m) },
		func() server.ServerTool { return UpdateProfile(m) },
		func() server.ServerTool { return ForgetMemory(m, opts...) },
		func() server.ServerTool { return ListMemories(m) },
		func() server.ServerTool { return MemoryHistory(m) },
		func() server.ServerTool { return RestoreMemory(m) },
	}
}

// build makes the tools in parallel, keeping their order: generating and
// compiling their schemas is most of a server's start-up time.
func build(makers []func() server.ServerTool) []server.ServerTool {
	out := make([]server.ServerTool, len(makers))
	var wg sync.WaitGroup
	for i, mk := range makers {
		wg.Go(func() { out[i] = mk() })
	}
	wg.Wait()
	return out
}

// Option configures NewServer.
type Option func(*config)

type config struct {
	llm           bool
	defaultUser   string
	authenticated bool
	clientLog     *ClientLog
	legacyHTTP    bool
	confirmKey    []byte
	extra         []server.ServerOption
	initialized   []func()
}

// WithLLMConfigured tells the server instructions whether a language model
// distils stored exchanges into a profile and facts.
func WithLLMConfigured(configured bool) Option {
	return func(c *config) { c.llm = configured }
}

// WithDefaultUser names, in the server instructions, the user whose memory
// is used when a call gives no user_id.
func WithDefaultUser(userID string) Option {
	return func(c *config) { c.defaultUser = userID }
}

// WithAuthenticatedCallers says that every client comes with a Caller (an
// HTTP server behind authentication): notifications/resources/updated for a
// scope then go only to the open notification streams of callers who may
// read that scope, never to everyone. The streams are known by the caller
// in the context their session is registered with. Listings are confined
// to the caller's scopes whenever a caller is in the context, with or
// without this option.
func WithAuthenticatedCallers() Option {
	return func(c *config) { c.authenticated = true }
}

// WithAfterFirstAnswer calls fn when the server has handled its first
// request (initialize, or the first request of a client that sends
// none), just before the answer is written: work that would only slow
// that answer (loading a scope, the token encoding) waits for it. fn may
// be called more than once.
func WithAfterFirstAnswer(fn func()) Option {
	return func(c *config) { c.initialized = append(c.initialized, fn) }
}

// WithClientLog has the server send the records of l (the logger the
// memory service and its store write to) to its clients as
// notifications/message (logging.go).
func WithClientLog(l *ClientLog) Option {
	return func(c *config) { c.clientLog = l }
}

// WithStatelessHTTP says that clients of protocol revisions before
// 2026-07-28 reach the server over stateless HTTP, where a request the
// server sends (elicitation/create) cannot be tied to the client that
// must answer it: forget_memory then keeps to its confirm phrase for
// them. Clients of 2026-07-28 are asked within their own request
// (confirm.go).
func WithStatelessHTTP() Option {
	return func(c *config) { c.legacyHTTP = true }
}

// WithConfirmKey sets the key that binds a user's answer to the question
// forget_memory asked (confirm.go). Every instance behind a load balancer
// needs the same key, so that an answer brought to another is accepted;
// without it each server draws its own.
func WithConfirmKey(key []byte) Option {
	return func(c *config) { c.confirmKey = key }
}

// WithServerOptions adds options to the underlying MCP server, after the
// ones NewServer sets (logging, output schema validation in tests). A
// server.WithHooks here replaces the hooks NewServer sets, which confine
// resource listings to the caller.
func WithServerOptions(opts ...server.ServerOption) Option {
	return func(c *config) { c.extra = append(c.extra, opts...) }
}

// NewServer returns the MCP server "mnemo" with every tool registered over
// m, the memory resources (resources.go), the memory_guide prompt when m
// is also a Manager, and the server instructions rendered from package
// prompts. Each tool
// checks its arguments against its input schema before its handler runs
// (see args.go); server.WithInputSchemaValidation is deliberately not used,
// because its messages print validator internals instead of naming the
// argument to fix. A panic in a handler becomes a JSON-RPC internal error,
// not a crash.
//
// NewServer panics if the embedded instructions template fails to render,
// which is a bug that the tests catch.
func NewServer(m Memory, version string, opts ...Option) *server.MCPServer {
	var cfg config
	for _, o := range opts {
		o(&cfg)
	}
	names := prompts.ToolNames{
		AddMemory:      nameAddMemory,
		RetrieveMemory: nameRetrieveMemory,
		GetUserProfile: nameGetUserProfile,
		FlushMemory:    nameFlushMemory,
	}
	_, manage := m.(Manager)
	if manage {
		names.SaveMemory, names.UpdateMemory, names.ForgetMemory = nameSaveMemory, nameUpdateMemory, nameForgetMemory
		names.ListMemories, names.MemoryHistory, names.UpdateProfile = nameListMemories, nameMemoryHistory, nameUpdateProfile
		names.RestoreMemory = nameRestoreMemory
	}
	instructions, err := prompts.Instructions(prompts.InstructionsData{
		LLMConfigured: cfg.llm,
		DefaultUser:   cfg.defaultUser,
		Tools:         names,
	})
	if err != nil {
		panic(fmt.Sprintf("tools: %v", err))
	}
	hooks := &server.Hooks{}
	for _, fn := range cfg.initialized {
		hooks.AddOnSuccess(func(context.Context, any, mcp.MCPMethod, any, any) { fn() })
		hooks.AddOnError(func(context.Context, any, mcp.MCPMethod, any, error) { fn() })
	}
	s := server.NewMCPServer(serverName, version, append([]server.ServerOption{
		server.WithHooks(hooks),
		server.WithToolCapabilities(false),
		server.WithResourceCapabilities(true, true),
		server.WithPromptCapabilities(false),
		server.WithLogging(),
		server.WithRecovery(),
		server.WithInstructions(instructions),
		server.WithToolFilter(viewToolFilter),
	}, cfg.extra...)...)
	tools := All(m, opts...)
	s.AddTools(tools...)
	var warm sync.Once
	hooks.AddAfterInitialize(func(context.Context, any, *mcp.InitializeRequest, *mcp.InitializeResult) {
		warm.Do(func() { go warmValidators(tools) })
	})
	addResources(s, m, cfg, hooks)
	if cfg.clientLog != nil {
		cfg.clientLog.hub.attach(s, hooks, cfg.authenticated)
	}
	if manage {
		addPrompts(s, cfg, names)
		addView(s, hooks)
	}
	return s
}

// annotate sets a tool's title and behaviour hints. Every mnemo tool works
// on the server's own store only, so none is open-world.
func annotate(title string, readOnly, destructive, idempotent bool) mcp.ToolOption {
	return mcp.WithToolAnnotation(mcp.ToolAnnotation{
		Title:           title,
		ReadOnlyHint:    mcp.ToBoolPtr(readOnly),
		DestructiveHint: mcp.ToBoolPtr(destructive),
		IdempotentHint:  mcp.ToBoolPtr(idempotent),
		OpenWorldHint:   mcp.ToBoolPtr(false),
	})
}
