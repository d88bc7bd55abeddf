package tools

import (
	"context"
	"errors"
	"log/slog"
	"maps"
	"slices"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/mnemo-mcp/mnemo/memory"
)

// Logging: the server's log records as notifications/message.
//
// ClientLog is a slog.Handler put in front of the server's own handler
// (stderr): every record still goes there, filtered by the operator's
// level, and is also sent to the MCP clients that asked for its level.
//
//   - A client of protocol 2025-06-18 or 2025-11-25 sets its level with
//     logging/setLevel; until it does it gets warnings and errors
//     (defaultClientLevel). The level belongs to the client: over HTTP,
//     where every request is its own transport session, to the
//     authenticated caller (one level for all of a user's connections),
//     otherwise to the one client of the process.
//   - A client of protocol 2026-07-28 names a level in each request's _meta
//     and gets the records logged under that request only; without one it
//     gets none (the revision's rule).
//   - A record logged outside any request (an update in the background, an
//     endpoint going down) goes to the open notification streams: the stdio
//     client, and over HTTP the GET streams. A record about one scope (its
//     "scope" attribute) goes only to the callers who may read that scope,
//     and a shared server's callers never see a path of its data directory.
//
// No record carries a secret (the project's rule for every log line);
// attributes that may quote memory (contentKeys) are sent only at debug.

// defaultClientLevel is the level of a client that never set one.
const defaultClientLevel = mcp.LoggingLevelWarning

// loggerName is the logger named in every notifications/message.
const loggerName = "mnemo"

// contentKeys are attributes that may quote what memory holds or what a
// model replied; above debug they are left out of what clients get.
var contentKeys = map[string]bool{
	"notes": true, "content": true, "query": true, "text": true,
	"user_input": true, "agent_response": true, "reply": true,
}

// ClientLog is a slog.Handler that passes every record to the next handler
// and sends it to MCP clients as notifications/message once a server made
// by NewServer with WithClientLog uses it. It is safe for concurrent use.
type ClientLog struct {
	next   slog.Handler
	hub    *logHub
	attrs  []slog.Attr // from WithAttrs, group-qualified
	groups []string
}

// NewClientLog returns a ClientLog in front of next.
func NewClientLog(next slog.Handler) *ClientLog {
	h := &logHub{levels: map[string]mcp.LoggingLevel{}, clients: map[string]logClient{}}
	h.floor.Store(int64(slogFloor(defaultClientLevel)))
	return &ClientLog{next: next, hub: h}
}

// logHub is what every ClientLog derived from one NewClientLog shares.
type logHub struct {
	srv           atomic.Pointer[server.MCPServer]
	authenticated atomic.Bool
	floor         atomic.Int64 // the lowest slog level any client wants

	mu      sync.Mutex
	levels  map[string]mcp.LoggingLevel // by clientKey
	clients map[string]logClient        // open streams, by session id
}

// logClient is an open notification stream and whose it is.
type logClient struct {
	caller    Caller
	hasCaller bool
}

func (c logClient) key() string {
	if !c.hasCaller {
		return ""
	}
	return "caller:" + c.caller.User + "/" + c.caller.Agent
}

// clientOf is the client a request context belongs to.
func clientOf(ctx context.Context) logClient {
	c, ok := CallerFrom(ctx)
	return logClient{caller: c, hasCaller: ok}
}

// attach makes the hub send through s and tracks the streams and levels
// through hooks.
func (h *logHub) attach(s *server.MCPServer, hooks *server.Hooks, authenticated bool) {
	h.authenticated.Store(authenticated)
	hooks.AddOnRegisterSession(func(ctx context.Context, session server.ClientSession) {
		h.mu.Lock()
		defer h.mu.Unlock()
		h.clients[session.SessionID()] = clientOf(ctx)
	})
	hooks.AddOnUnregisterSession(func(_ context.Context, session server.ClientSession) {
		h.mu.Lock()
		defer h.mu.Unlock()
		delete(h.clients, session.SessionID())
	})
	hooks.AddAfterSetLevel(func(ctx context.Context, _ any, req *mcp.SetLevelRequest, _ *mcp.EmptyResult) {
		h.setLevel(clientOf(ctx).key(), req.Params.Level)
	})
	h.srv.Store(s)
}

func (h *logHub) setLevel(key string, level mcp.LoggingLevel) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.levels[key] = level
	floor := slogFloor(defaultClientLevel)
	for _, l := range h.levels {
		floor = min(floor, slogFloor(l))
	}
	h.floor.Store(int64(floor))
}

func (h *logHub) level(key string) mcp.LoggingLevel {
	h.mu.Lock()
	defer h.mu.Unlock()
	if l, ok := h.levels[key]; ok {
		return l
	}
	return defaultClientLevel
}

// Enabled reports whether the next handler or any client wants level.
func (l *ClientLog) Enabled(ctx context.Context, level slog.Level) bool {
	if l.next.Enabled(ctx, level) {
		return true
	}
	if l.hub.srv.Load() == nil {
		return false
	}
	if info := server.RequestProtocolInfoFromContext(ctx); info != nil && info.Modern {
		return info.LogLevel != "" && level >= slogFloor(info.LogLevel)
	}
	return int64(level) >= l.hub.floor.Load()
}

// Handle passes r to the next handler when it wants it, and sends it to
// the clients that want it.
func (l *ClientLog) Handle(ctx context.Context, r slog.Record) error {
	var err error
	if l.next.Enabled(ctx, r.Level) {
		err = l.next.Handle(ctx, r)
	}
	srv := l.hub.srv.Load()
	if srv == nil {
		return err
	}
	level := mcpLevel(r.Level)
	data, scope := l.data(r, level == mcp.LoggingLevelDebug)
	params := map[string]any{"level": level, "logger": loggerName, "data": data}
	if session := server.ClientSessionFromContext(ctx); session != nil {
		// Logged under a request: to that request's client only.
		want := l.hub.level(clientOf(ctx).key())
		if info := server.RequestProtocolInfoFromContext(ctx); info != nil && info.Modern {
			want = info.LogLevel
		}
		if want != "" && level.ShouldSendTo(want) && session.Initialized() {
			_ = srv.SendNotificationToClient(ctx, string(mcp.MethodNotificationMessage), params)
		}
		return err
	}
	l.hub.mu.Lock()
	clients := maps.Clone(l.hub.clients)
	l.hub.mu.Unlock()
	auth := l.hub.authenticated.Load()
	for id, c := range clients {
		if auth && (!c.hasCaller || scope != nil && !c.caller.reads(*scope)) {
			continue
		}
		if !level.ShouldSendTo(l.hub.level(c.key())) {
			continue
		}
		// A stream that is gone or full misses the record; stderr has it.
		_ = srv.SendNotificationToSpecificClient(id, string(mcp.MethodNotificationMessage), params)
	}
	return err
}

// WithAttrs returns a handler whose records carry attrs.
func (l *ClientLog) WithAttrs(attrs []slog.Attr) slog.Handler {
	out := *l
	out.next = l.next.WithAttrs(attrs)
	out.attrs = slices.Clip(l.attrs)
	for _, a := range attrs {
		out.attrs = append(out.attrs, qualify(l.groups, a))
	}
	return &out
}

// WithGroup returns a handler that puts later attributes in group name.
func (l *ClientLog) WithGroup(name string) slog.Handler {
	out := *l
	out.next = l.next.WithGroup(name)
	out.groups = append(slices.Clip(l.groups), name)
	return &out
}

// qualify prefixes a's key with the open groups.
func qualify(groups []string, a slog.Attr) slog.Attr {
	if len(groups) > 0 {
		a.Key = strings.Join(groups, ".") + "." + a.Key
	}
	return a
}

// data is the notification's data: the message and the attributes (those
// quoting memory only at debug), and the scope the record is about, if it
// names one.
func (l *ClientLog) data(r slog.Record, debug bool) (map[string]any, *memory.Scope) {
	out := map[string]any{"message": r.Message}
	var scope *memory.Scope
	auth := l.hub.authenticated.Load()
	add := func(a slog.Attr) {
		a.Value = a.Value.Resolve()
		key := a.Key
		if i := strings.LastIndexByte(key, '.'); i >= 0 {
			key = key[i+1:]
		}
		if key == "scope" && a.Value.Kind() == slog.KindString {
			user, agent, _ := strings.Cut(a.Value.String(), "/")
			scope = &memory.Scope{UserID: user, AgentName: agent}
		}
		// The data directory's layout (its paths name scopes) and the
		// database's address are the operator's business, not a shared
		// server's callers'.
		if !debug && contentKeys[key] || auth && (key == "path" || key == "db") {
			return
		}
		if err, ok := a.Value.Any().(error); ok && auth && a.Value.Kind() == slog.KindAny &&
			(errors.Is(err, memory.ErrUnavailable) || errors.Is(err, memory.ErrOutcomeUnknown)) {
			// The driver's words name the database's host, role and name.
			out[a.Key] = "storage unavailable: the memory server cannot reach its database (the details are in its log)"
			return
		}
		v := attrValue(a.Value)
		if s, ok := v.(string); ok && auth {
			v = withoutPaths(s)
		}
		out[a.Key] = v
	}
	for _, a := range l.attrs {
		add(a)
	}
	r.Attrs(func(a slog.Attr) bool {
		add(qualify(l.groups, a))
		return true
	})
	return out, scope
}

// attrValue is v as a JSON value.
func attrValue(v slog.Value) any {
	switch v.Kind() {
	case slog.KindBool:
		return v.Bool()
	case slog.KindInt64:
		return v.Int64()
	case slog.KindUint64:
		return v.Uint64()
	case slog.KindFloat64:
		return v.Float64()
	case slog.KindGroup:
		m := map[string]any{}
		for _, a := range v.Group() {
			m[a.Key] = attrValue(a.Value.Resolve())
		}
		return m
	case slog.KindAny:
		if s, ok := v.Any().([]string); ok {
			return s
		}
	}
	return v.String()
}

// mcpLevel is the MCP level of a slog level.
func mcpLevel(l slog.Level) mcp.LoggingLevel {
	switch {
	case l < slog.LevelInfo:
		return mcp.LoggingLevelDebug
	case l < slog.LevelWarn:
		return mcp.LoggingLevelInfo
	case l < slog.LevelError:
		return mcp.LoggingLevelWarning
	}
	return mcp.LoggingLevelError
}

// slogFloor is the lowest slog level whose records a client at level
// gets (mcpLevel's inverse; notice takes warnings, the levels above error
// take nothing, since the server logs nothing above error).
func slogFloor(level mcp.LoggingLevel) slog.Level {
	switch level {
	case mcp.LoggingLevelDebug:
		return slog.LevelDebug - 100
	case mcp.LoggingLevelInfo:
		return slog.LevelInfo
	case mcp.LoggingLevelNotice, mcp.LoggingLevelWarning:
		return slog.LevelWarn
	case mcp.LoggingLevelError:
		return slog.LevelError
	}
	return slog.LevelError + 100
}
