package tools

import (
	"context"
	"errors"
	"io/fs"
	"log/slog"
	"regexp"
	"strings"
	"sync"
	"syscall"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/mnemo-mcp/mnemo/memory"
)

// The error policy of every tool, in one place.
//
// A tool call that fails because of something the model can act on — a bad
// argument, something not found, no language model configured — answers
// with a result that has isError set and a message that says what to fix.
//
// A failure inside the server (storage, I/O, corrupt data) also answers
// with an isError result, not a JSON-RPC error: the model can then tell the
// user that memory is unavailable and carry on. Its message is generic, so
// paths, provider replies and keys never reach the client; the error itself
// is logged at Error level for the operator.
//
// A JSON-RPC error (-32603) is left for bugs: a panic in a handler (turned
// into an error by server.WithRecovery) or a result that cannot be encoded.

// toolError turns an error returned by the memory service for tool into a
// tool result. It never returns a Go error; its signature matches a
// handler's so that handlers can `return toolError(ctx, name, err)`.
func toolError(ctx context.Context, tool string, err error) (*mcp.CallToolResult, error) {
	var (
		in *memory.InputError
		nf *memory.NotFoundError
	)
	switch {
	case errors.As(err, &in):
		return mcp.NewToolResultError("invalid argument " + in.Error()), nil
	case errors.As(err, &nf):
		// Only the service's own words: a store wraps it with its path.
		return mcp.NewToolResultError("not found: " + nf.Message), nil
	case errors.Is(err, memory.ErrInvalidInput):
		return mcp.NewToolResultError("invalid argument: " + withoutPaths(err.Error())), nil
	case errors.Is(err, memory.ErrNotFound):
		slog.InfoContext(ctx, "tool call: not found", "tool", tool, "err", err)
		return mcp.NewToolResultError(withoutPaths(err.Error())), nil
	case errors.Is(err, memory.ErrNoLLM):
		return mcp.NewToolResultError("no language model is configured, so this cannot be done now: " + withoutPaths(err.Error()) +
			". Stored exchanges stay searchable with retrieve_memory."), nil
	case errors.Is(err, memory.ErrLLMUnavailable):
		// The error text may name the endpoint; keep it in the log only.
		slog.WarnContext(ctx, "tool call failed: language model unavailable", "tool", tool, "err", err)
		return mcp.NewToolResultError("the language model is unavailable right now (rate limit, outage or timeout); " +
			"stored exchanges stay pending and are retried automatically — try again later"), nil
	case ctx.Err() != nil && (errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded)):
		// The client gave up or the call timed out; nobody reads the answer.
		slog.InfoContext(ctx, "tool call cancelled", "tool", tool, "err", err)
		return mcp.NewToolResultError("cancelled: " + tool + " did not finish"), nil
	case errors.Is(err, memory.ErrOutcomeUnknown):
		slog.WarnContext(ctx, "tool call failed: storage connection lost mid-write", "tool", tool, "err", err)
		return mcp.NewToolResultError("storage unavailable: the connection to the memory server's database broke while " + tool +
			" was writing, so whether it was stored is unknown; retry the same call in a few seconds, with the same idempotency_key " +
			"if it had one: a retry of an exchange already stored is answered with the stored turn, not stored twice"), nil
	case errors.Is(err, memory.ErrUnavailable):
		// The error names the database (password masked); keep it in the log.
		slog.WarnContext(ctx, "tool call failed: storage unavailable", "tool", tool, "err", err)
		return mcp.NewToolResultError("storage unavailable: the memory server cannot reach its database right now (restarting or down), so " + tool +
			" changed nothing; try again in a few seconds"), nil
	case errors.Is(err, syscall.ENOSPC):
		slog.ErrorContext(ctx, "tool call failed: disk full", "tool", tool, "err", err)
		return mcp.NewToolResultError("storage full: the memory server's disk is full, so " + tool + " stored nothing and memory is unchanged; " +
			"tell the user that memory cannot be saved until space is freed on the server's data directory"), nil
	case errors.Is(err, syscall.EROFS) || errors.Is(err, fs.ErrPermission):
		slog.ErrorContext(ctx, "tool call failed: data directory not writable", "tool", tool, "err", err)
		return mcp.NewToolResultError("storage read-only: the memory server cannot write its data directory (read-only or no permission), so " + tool +
			" stored nothing and memory is unchanged; tell the user that memory cannot be saved until the data directory is writable"), nil
	}
	slog.ErrorContext(ctx, "tool call failed", "tool", tool, "err", err)
	return mcp.NewToolResultError("internal error: " + tool + " failed inside the memory server (details are in its log); " +
		"tell the user that memory is unavailable and carry on without it"), nil
}

// argumentError is the tool result for arguments that cannot be used as
// given: message names the argument and says what to send instead.
func argumentError(message string) (*mcp.CallToolResult, error) {
	if rest, ok := strings.CutPrefix(message, "arguments: "); ok {
		return mcp.NewToolResultError("invalid arguments: " + rest), nil
	}
	return mcp.NewToolResultError("invalid argument " + message), nil
}

// absPath matches an absolute file path (Unix, or Windows with a drive
// letter) of two components or more.
var absPath = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`(^|[\s"'(=])(?:[A-Za-z]:)?[/\\][^\s/\\:;,'"]+(?:[/\\][^\s/\\:;,'"]*)+`)
})

// withoutPaths replaces the file paths in a message for the model with
// "…": the data directory's layout is the operator's business. It is the
// safety net behind the service's own messages, which name no path.
func withoutPaths(msg string) string {
	return absPath().ReplaceAllString(msg, "${1}…")
}
