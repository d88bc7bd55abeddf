package server

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
	"sync"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/mnemo-mcp/mnemo/memory"
)

// JSON-RPC error codes the guard answers with.
const (
	rpcInvalidRequest = -32600
)

// maxRequestLine is the longest line the stdio guard passes to the MCP
// server: twice the largest valid add_memory call (every message at its
// limit, plus user_input, agent_response and meta_data; twice, for JSON
// escaping) and 1 MiB for the rest of the request. A longer line cannot be
// a valid call, and reading it whole would let one message make the server
// allocate without bound.
func maxRequestLine(c memory.Config) int {
	call := (c.MaxMessages+2)*c.MaxMessageBytes + c.MaxMetaDataBytes + c.MaxQueryBytes
	return 2*call + 1<<20
}

// stdioGuard stands between stdin and the MCP server. It passes on one
// JSON-RPC message per line and answers itself, on stdout, what must not
// reach the server: a line longer than the limit (skipped without being
// held in memory), an id that is neither a string nor an integer a client
// can represent exactly, and a request other than initialize or ping
// before initialize. Everything else goes to the transport (stdio_conn.go)
// unchanged, with the envelope the guard decoded; a line that is not JSON
// is answered there with a parse error.
type stdioGuard struct {
	in    *bufio.Reader
	out   io.Writer // shared with the server: a lockedWriter
	limit int

	initialized bool
}

// newStdioGuard reads from stdin and answers on out, which must be safe
// for concurrent whole-line writes (the server writes there too).
func newStdioGuard(stdin io.Reader, out io.Writer, limit int) *stdioGuard {
	return &stdioGuard{in: bufio.NewReaderSize(stdin, 64<<10), out: out, limit: limit}
}

// next returns the next message that passed the checks, with its envelope
// (parsed is false for a line that is not one JSON object, which the
// transport answers with a parse error). At the end of input it returns
// the last message, if any, with the read error.
func (g *stdioGuard) next() ([]byte, rpcEnvelope, error) {
	for {
		line, err := g.nextLine()
		if len(line) > 0 {
			if msg, env, ok := g.check(line); ok {
				return msg, env, err
			}
		}
		if err != nil {
			return nil, rpcEnvelope{}, err
		}
	}
}

// nextLine reads one line with its newline, at most limit bytes of it. A
// longer line is read to its end and dropped, and answered with an error.
func (g *stdioGuard) nextLine() ([]byte, error) {
	var line []byte
	for {
		chunk, err := g.in.ReadSlice('\n')
		if len(line)+len(chunk) > g.limit {
			head := append(line, chunk[:min(len(chunk), 256)]...)
			n := len(line) + len(chunk)
			for errors.Is(err, bufio.ErrBufferFull) {
				chunk, err = g.in.ReadSlice('\n')
				n += len(chunk)
			}
			g.reply(idFromPrefix(head), rpcInvalidRequest, fmt.Sprintf(
				"request too large: the line has %d bytes or more, the limit is %d (derived from max_messages, max_message_bytes and max_meta_data_bytes); send less per call", n, g.limit))
			if err != nil {
				return nil, err
			}
			line = nil
			continue
		}
		line = append(line, chunk...)
		if errors.Is(err, bufio.ErrBufferFull) {
			continue
		}
		return line, err
	}
}

// rpcEnvelope is the part of a JSON-RPC message the guard and the
// transport look at: the one decode of a line before the MCP server's.
type rpcEnvelope struct {
	ID     json.RawMessage `json:"id"`
	Method string          `json:"method"`
	Result json.RawMessage `json:"result"`
	Error  json.RawMessage `json:"error"`

	parsed bool // the line is one JSON object
}

// hasID reports whether the message carries an id: a request or an answer.
func (e rpcEnvelope) hasID() bool { return len(e.ID) > 0 && string(e.ID) != "null" }

// modernRequest reports whether line is a request of protocol 2026-07-28
// or later, which has no initialize: it names its revision in _meta.
func modernRequest(line []byte) bool {
	var req struct {
		Params struct {
			Meta struct {
				ProtocolVersion string `json:"io.modelcontextprotocol/protocolVersion"`
			} `json:"_meta"`
		} `json:"params"`
	}
	return json.Unmarshal(line, &req) == nil && mcp.IsModernProtocol(req.Params.Meta.ProtocolVersion)
}

// check returns the message in line, its envelope and true if it may go
// to the server, else answers it and returns false.
func (g *stdioGuard) check(line []byte) ([]byte, rpcEnvelope, bool) {
	trimmed := bytes.TrimSpace(line)
	if len(trimmed) == 0 {
		return nil, rpcEnvelope{}, false
	}
	var msg rpcEnvelope
	if trimmed[0] != '{' || json.Unmarshal(trimmed, &msg) != nil {
		return trimmed, rpcEnvelope{}, true // not one JSON object: a parse error
	}
	msg.parsed = true
	hasID := msg.hasID()
	if hasID {
		if err := checkRequestID(msg.ID); err != nil {
			g.reply(nil, rpcInvalidRequest, err.Error())
			return nil, rpcEnvelope{}, false
		}
	}
	switch {
	case msg.Method == "":
		return trimmed, msg, true // a response to a request of the server's
	case msg.Method == "initialize":
		g.initialized = true
	case g.initialized || msg.Method == "ping":
	case modernRequest(trimmed):
	case !hasID:
		return nil, rpcEnvelope{}, false // a notification before initialize: nothing to answer
	default:
		g.reply(msg.ID, rpcInvalidRequest, fmt.Sprintf("the server is not initialized: send initialize before %s", msg.Method))
		return nil, rpcEnvelope{}, false
	}
	return trimmed, msg, true
}

// maxExactID is the largest integer id every client can hold exactly
// (JavaScript numbers are doubles).
const maxExactID = 1<<53 - 1

// checkRequestID accepts the ids MCP allows: a string, or an integer. Integers
// beyond ±(2^53 - 1) are refused: a client written in JavaScript could not
// match the answer to its request.
func checkRequestID(raw json.RawMessage) error {
	switch raw[0] {
	case '"':
		var s string
		if json.Unmarshal(raw, &s) == nil {
			return nil
		}
	case '-', '0', '1', '2', '3', '4', '5', '6', '7', '8', '9':
		n, err := strconv.ParseInt(string(raw), 10, 64)
		if err == nil && n >= -maxExactID && n <= maxExactID {
			return nil
		}
		if f, ferr := strconv.ParseFloat(string(raw), 64); ferr == nil && (f != math.Trunc(f) || math.Abs(f) > maxExactID || err == nil) {
			return fmt.Errorf("invalid request: id %s must be a string or an integer between -%d and %d", raw, int64(maxExactID), int64(maxExactID))
		}
	}
	return fmt.Errorf("invalid request: id must be a string or an integer, got %s", clipBytes(raw, 40))
}

// idFromPrefix finds the id of a request in the first bytes of its line,
// for answering a line too long to parse; nil when it is not there.
func idFromPrefix(head []byte) json.RawMessage {
	i := bytes.Index(head, []byte(`"id":`))
	if i < 0 {
		return nil
	}
	dec := json.NewDecoder(bytes.NewReader(head[i+5:]))
	var raw json.RawMessage
	if dec.Decode(&raw) != nil || checkRequestID(raw) != nil {
		return nil
	}
	return raw
}

// reply writes a JSON-RPC error answer to id (null when nil).
func (g *stdioGuard) reply(id json.RawMessage, code int, message string) {
	writeAnswer(g.out, id, nil, &rpcError{Code: code, Message: message})
}

// clipBytes is b, cut to n bytes for a message.
func clipBytes(b []byte, n int) string {
	if len(b) <= n {
		return string(b)
	}
	return string(b[:n]) + "…"
}

// lockedWriter serialises writes, so that the guard's answers and the
// server's never interleave within a line (each writes whole lines).
type lockedWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}
