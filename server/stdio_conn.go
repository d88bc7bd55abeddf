package server

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
)

// stdioConn is MCP over stdin/stdout: one client, one JSON-RPC message per
// line. It replaces mcp-go's StdioServer, which decoded each line five
// times before the MCP server decoded it again and passed every message
// through two goroutines. Here a line is decoded once (the guard's
// envelope) and then handed to the MCP server (HandleMessage):
//
//   - a request is served on the goroutine that read it, so that a tool
//     call does not wait for another goroutine to be woken; if it runs
//     longer than inlineBudget, or asks the client something (an
//     elicitation), reading moves to a new goroutine first, so that
//     nothing a request waits for (the client's answer, a cancellation,
//     the next ping) queues behind it;
//   - an answer to a request of the server's goes to the request that
//     waits for it;
//   - a notification is handled at once.
//
// Answers are written whole lines at a time; notifications from the
// server (logging, progress) are written by their own goroutine.
type stdioConn struct {
	mcp   *server.MCPServer
	guard *stdioGuard
	out   *lockedWriter
	log   *slog.Logger
	sess  *stdioSession

	ctx      context.Context // the requests': cancelled when input ends
	requests sync.WaitGroup  // requests still being served

	mu       sync.Mutex
	closing  bool       // serveStdio is waiting for the requests: no new one starts
	reader   uint64     // which reading turn may read: see handOff
	finished chan error // the read loop's end, sent once
}

// inlineBudget is how long a request may hold the reading goroutine
// before reading moves on without it.
const inlineBudget = 2 * time.Millisecond

// serveStdio runs the connection until input ends (nil) or ctx is
// cancelled (ctx's error). Requests still running when input ends are
// cancelled and awaited.
func serveStdio(ctx context.Context, mcpServer *server.MCPServer, guard *stdioGuard, out *lockedWriter, log *slog.Logger) error {
	sess := newStdioSession(out)
	if err := mcpServer.RegisterSession(ctx, sess); err != nil {
		return fmt.Errorf("register the stdio session: %w", err)
	}
	defer mcpServer.UnregisterSession(ctx, sess.SessionID())
	reqCtx, cancel := context.WithCancel(mcpServer.WithContext(ctx, sess))
	defer cancel()
	c := &stdioConn{mcp: mcpServer, guard: guard, out: out, log: log, sess: sess, ctx: reqCtx, finished: make(chan error, 1)}

	notesDone := make(chan struct{})
	go func() {
		defer close(notesDone)
		c.writeNotifications(reqCtx)
	}()
	go c.readLoop(0)

	var err error
	select {
	case err = <-c.finished:
	case <-ctx.Done():
		// The read blocks on stdin, which cannot be interrupted; the
		// process is about to end and takes that goroutine with it.
	}
	if ctx.Err() != nil {
		// Also when the reading goroutine, which saw the cancellation
		// too, reported first: the connection ended because ctx did.
		err = ctx.Err()
	}
	cancel()
	c.mu.Lock()
	c.closing = true // every Add happens before this Wait
	c.mu.Unlock()
	c.requests.Wait()
	<-notesDone
	return err
}

// readLoop reads and serves messages while turn is the reading turn.
func (c *stdioConn) readLoop(turn uint64) {
	for {
		msg, env, err := c.guard.next()
		if msg != nil && !c.serve(turn, msg, env) {
			return // reading moved on while the request ran
		}
		if err != nil {
			if errors.Is(err, io.EOF) {
				err = nil
			}
			c.finished <- err
			return
		}
		if c.ctx.Err() != nil {
			c.finished <- nil
			return
		}
	}
}

// inline is a request served on the reading goroutine of turn.
type inline struct {
	turn uint64
	done bool // served: its goroutine reads on, or has stopped reading
}

// handOff starts a new reading turn if r is still being served on the
// goroutine that holds reading: r is about to wait, or has run long.
func (c *stdioConn) handOff(r *inline) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if r.done || c.reader != r.turn {
		return
	}
	c.reader++
	go c.readLoop(c.reader)
}

// finish marks r served and reports whether its goroutine still holds
// reading. handOff and finish take the same lock, so a hand-off never
// starts a second reader once r's goroutine has gone back to reading.
func (c *stdioConn) finish(r *inline) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	r.done = true
	return c.reader == r.turn
}

// serve handles one message read on turn's goroutine and reports whether
// that goroutine still holds reading.
func (c *stdioConn) serve(turn uint64, msg []byte, env rpcEnvelope) bool {
	switch {
	case !env.parsed:
		c.guard.reply(nil, mcp.PARSE_ERROR, "Parse error")
	case env.Method == "" && env.hasID() && (len(env.Result) > 0 || len(env.Error) > 0):
		c.sess.answer(env)
	case !env.hasID():
		// A notification: nothing to answer, and it must not wait
		// behind a request (notifications/cancelled).
		c.handle(c.ctx, env.ID, msg)
	default:
		c.mu.Lock()
		if c.closing {
			c.mu.Unlock()
			return false // the connection is ending: the request is not served
		}
		c.requests.Add(1)
		c.mu.Unlock()
		defer c.requests.Done()
		r := &inline{turn: turn}
		// The request may wait on the client: an elicitation hands
		// reading off before it asks (stdioSession.ask).
		ctx := context.WithValue(c.ctx, readerKey{}, func() { c.handOff(r) })
		t := time.AfterFunc(inlineBudget, func() { c.handOff(r) })
		res := c.handle(ctx, env.ID, msg)
		t.Stop()
		holds := c.finish(r)
		if res != nil {
			c.writeMessage(env.ID, res)
		}
		return holds
	}
	return true
}

// readerKey holds, in a request's context, the function that moves
// reading off the request's goroutine.
type readerKey struct{}

// handOffReading moves reading off the goroutine serving ctx's request,
// before it waits for something that only reading can bring.
func handOffReading(ctx context.Context) {
	if f, ok := ctx.Value(readerKey{}).(func()); ok {
		f()
	}
}

// handle runs the MCP server on one message, recovering a panicking
// handler: a request gets an internal error with its id.
func (c *stdioConn) handle(ctx context.Context, id json.RawMessage, msg []byte) (res mcp.JSONRPCMessage) {
	defer func() {
		if r := recover(); r != nil {
			c.log.Error("panic recovered in a stdio request", "panic", r)
			if len(id) > 0 {
				res = mcp.NewJSONRPCError(mcp.NewRequestId(nil), mcp.INTERNAL_ERROR, fmt.Sprintf("internal error: %v", r), nil)
			}
		}
	}()
	return c.mcp.HandleMessage(ctx, msg)
}

// rpcError is a JSON-RPC error object.
type rpcError struct {
	Code    int    `json:"code"`
	Message string `json:"message"`
	Data    any    `json:"data,omitempty"`
}

// writeMessage writes the server's answer to the request id. The id is
// the request's own bytes (the guard checked them), so it goes back
// exactly as sent; a result that marshals itself is not marshalled twice.
func (c *stdioConn) writeMessage(id json.RawMessage, res mcp.JSONRPCMessage) {
	switch r := res.(type) {
	case mcp.JSONRPCResponse:
		writeAnswer(c.out, id, r.Result, nil)
	case *mcp.JSONRPCResponse:
		writeAnswer(c.out, id, r.Result, nil)
	case mcp.JSONRPCError:
		writeAnswer(c.out, id, nil, &rpcError{Code: r.Error.Code, Message: r.Error.Message, Data: r.Error.Data})
	case *mcp.JSONRPCError:
		writeAnswer(c.out, id, nil, &rpcError{Code: r.Error.Code, Message: r.Error.Message, Data: r.Error.Data})
	default:
		data, err := json.Marshal(res)
		if err != nil {
			c.log.Error("cannot encode an answer", "err", err)
			return
		}
		c.writeLine(data)
	}
}

// writeAnswer writes one answer line to id (null when nil) on out: the
// error e when it is not nil, else result.
func writeAnswer(out io.Writer, id json.RawMessage, result any, e *rpcError) {
	if id == nil {
		id = json.RawMessage("null")
	}
	var body []byte
	var err error
	if e != nil {
		body, err = json.Marshal(e)
	} else {
		body, err = marshalResult(result)
	}
	if err != nil {
		e = &rpcError{Code: mcp.INTERNAL_ERROR, Message: "the answer could not be encoded: " + err.Error()}
		body, _ = json.Marshal(e)
	}
	line := make([]byte, 0, len(body)+len(id)+40)
	line = append(line, `{"jsonrpc":"2.0","id":`...)
	line = append(line, id...)
	if e != nil {
		line = append(line, `,"error":`...)
	} else {
		line = append(line, `,"result":`...)
	}
	line = append(line, body...)
	line = append(line, '}', '\n')
	_, _ = out.Write(line) // a client gone from stdout is seen as the end of stdin
}

// marshalResult encodes a result; one that marshals itself is asked
// directly, which spares encoding/json's compaction of its output. A tool
// call's result is not checked either: mcp-go encodes it with
// json.Marshal, whose output is valid JSON (on a retrieval's 150 KB
// answer the check took a millisecond).
func marshalResult(result any) ([]byte, error) {
	switch r := result.(type) {
	case nil:
		return []byte("{}"), nil
	case *mcp.CallToolResult:
		if r != nil {
			return r.MarshalJSON()
		}
	case mcp.CallToolResult:
		return r.MarshalJSON()
	}
	if m, ok := result.(json.Marshaler); ok {
		data, err := m.MarshalJSON()
		if err == nil && json.Valid(data) {
			return data, nil
		}
	}
	return json.Marshal(result)
}

// writeLine writes data and a newline as one write.
func (c *stdioConn) writeLine(data []byte) {
	if _, err := c.out.Write(append(data, '\n')); err != nil {
		c.log.Debug("cannot write to stdout", "err", err)
	}
}

// writeNotifications writes what the server sends the client until ctx
// ends.
func (c *stdioConn) writeNotifications(ctx context.Context) {
	for {
		select {
		case n := <-c.sess.notes:
			data, err := json.Marshal(n)
			if err != nil {
				c.log.Error("cannot encode a notification", "method", n.Method, "err", err)
				continue
			}
			c.writeLine(data)
		case <-ctx.Done():
			return
		}
	}
}

// stdioSession is the one client of a stdio server, as the MCP server
// sees it: its capabilities and log level, and the questions the server
// asks it (elicitation), matched to their answers by id.
type stdioSession struct {
	out         *lockedWriter
	notes       chan mcp.JSONRPCNotification
	initialized atomic.Bool
	level       atomic.Value // mcp.LoggingLevel
	info        atomic.Value // mcp.Implementation
	caps        atomic.Value // mcp.ClientCapabilities
	version     atomic.Value // string

	nextID  atomic.Int64
	mu      sync.Mutex
	pending map[int64]chan rpcEnvelope
}

func newStdioSession(out *lockedWriter) *stdioSession {
	return &stdioSession{out: out, notes: make(chan mcp.JSONRPCNotification, 100), pending: map[int64]chan rpcEnvelope{}}
}

var (
	_ server.SessionWithLogging     = (*stdioSession)(nil)
	_ server.SessionWithClientInfo  = (*stdioSession)(nil)
	_ server.SessionWithElicitation = (*stdioSession)(nil)
)

func (s *stdioSession) SessionID() string { return "stdio" }

func (s *stdioSession) NotificationChannel() chan<- mcp.JSONRPCNotification { return s.notes }

func (s *stdioSession) Initialize() {
	s.level.Store(mcp.LoggingLevelError)
	s.initialized.Store(true)
}

func (s *stdioSession) Initialized() bool { return s.initialized.Load() }

func (s *stdioSession) SetLogLevel(level mcp.LoggingLevel) { s.level.Store(level) }

func (s *stdioSession) GetLogLevel() mcp.LoggingLevel {
	if l, ok := s.level.Load().(mcp.LoggingLevel); ok {
		return l
	}
	return mcp.LoggingLevelError
}

func (s *stdioSession) GetClientInfo() mcp.Implementation {
	i, _ := s.info.Load().(mcp.Implementation)
	return i
}

func (s *stdioSession) SetClientInfo(info mcp.Implementation) { s.info.Store(info) }

func (s *stdioSession) GetClientCapabilities() mcp.ClientCapabilities {
	c, _ := s.caps.Load().(mcp.ClientCapabilities)
	return c
}

func (s *stdioSession) SetClientCapabilities(c mcp.ClientCapabilities) { s.caps.Store(c) }

// SetProtocolVersion records the version initialize agreed on.
func (s *stdioSession) SetProtocolVersion(v string) { s.version.Store(v) }

// ProtocolVersion is the version initialize agreed on, "" before it.
func (s *stdioSession) ProtocolVersion() string {
	v, _ := s.version.Load().(string)
	return v
}

// RequestElicitation asks the client a question and waits for its answer
// or for ctx to end.
func (s *stdioSession) RequestElicitation(ctx context.Context, req mcp.ElicitationRequest) (*mcp.ElicitationResult, error) {
	raw, err := s.ask(ctx, string(mcp.MethodElicitationCreate), req.Params)
	if err != nil {
		return nil, err
	}
	var res mcp.ElicitationResult
	if err := json.Unmarshal(raw, &res); err != nil {
		return nil, fmt.Errorf("read the client's answer to elicitation/create: %w", err)
	}
	return &res, nil
}

// ask sends the client a request and returns its result.
func (s *stdioSession) ask(ctx context.Context, method string, params any) (json.RawMessage, error) {
	id := s.nextID.Add(1)
	answer := make(chan rpcEnvelope, 1)
	s.mu.Lock()
	s.pending[id] = answer
	s.mu.Unlock()
	defer func() {
		s.mu.Lock()
		delete(s.pending, id)
		s.mu.Unlock()
	}()
	data, err := json.Marshal(struct {
		JSONRPC string `json:"jsonrpc"`
		ID      int64  `json:"id"`
		Method  string `json:"method"`
		Params  any    `json:"params"`
	}{mcp.JSONRPC_VERSION, id, method, params})
	if err != nil {
		return nil, fmt.Errorf("encode %s: %w", method, err)
	}
	// Only reading brings the answer: it must not wait behind this request.
	handOffReading(ctx)
	if _, err := s.out.Write(append(data, '\n')); err != nil {
		return nil, fmt.Errorf("send %s to the client: %w", method, err)
	}
	select {
	case <-ctx.Done():
		return nil, ctx.Err()
	case env := <-answer:
		if len(env.Error) > 0 {
			var e rpcError
			_ = json.Unmarshal(env.Error, &e)
			return nil, fmt.Errorf("the client refused %s: %s (code %d)", method, e.Message, e.Code)
		}
		return env.Result, nil
	}
}

// answer passes the client's answer to the request that waits for it; an
// answer to nothing pending is dropped.
func (s *stdioSession) answer(env rpcEnvelope) {
	id, err := strconv.ParseInt(string(env.ID), 10, 64)
	if err != nil {
		return
	}
	s.mu.Lock()
	ch, ok := s.pending[id]
	s.mu.Unlock()
	if ok {
		select {
		case ch <- env:
		default:
		}
	}
}
