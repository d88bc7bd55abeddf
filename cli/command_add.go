package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/mnemo-mcp/mnemo/memory"
)

// addDetails documents mnemo add.
const addDetails = `The exchange is given with --input and --reply, or as a JSON object on
stdin with --stdin, shaped like add_memory's arguments:
  {"user_input": "...", "agent_response": "...", "thread_id": "...",
   "timestamp": "2026-05-01T12:00:00Z", "meta_data": {...}}
or {"messages": [{"role": "user", "content": "..."}, ...]}. Flags override
user_id, agent_name and thread_id. It is validated and filtered exactly as
add_memory does (through the same memory service), stored durably, and left
for the updater, which runs in the next server with an LLM endpoint.`

// addInput is the JSON mnemo add --stdin reads: add_memory's arguments.
type addInput struct {
	UserInput     string           `json:"user_input"`
	AgentResponse string           `json:"agent_response"`
	Messages      []memory.Message `json:"messages"`
	ThreadID      string           `json:"thread_id"`
	Timestamp     string           `json:"timestamp"`
	MetaData      json.RawMessage  `json:"meta_data"`
	UserID        string           `json:"user_id"`
	AgentName     string           `json:"agent_name"`
}

// maxAddStdin bounds what mnemo add reads from stdin.
const maxAddStdin = 8 << 20

// runAdd is "mnemo add": one exchange stored from the command line.
func runAdd(ctx context.Context, c *call) int {
	var in addInput
	if c.args.flag("stdin") {
		if c.args.has("input") || c.args.has("reply") {
			return c.fail(exitUsage, "give the exchange with --input and --reply or as JSON with --stdin, not both")
		}
		data, err := io.ReadAll(io.LimitReader(c.stdin, maxAddStdin+1))
		if err != nil {
			return c.fail(exitError, "read stdin: %v", err)
		}
		if len(data) > maxAddStdin {
			return c.fail(exitUsage, "stdin holds more than %d bytes; send one exchange", maxAddStdin)
		}
		dec := json.NewDecoder(bytes.NewReader(data))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&in); err != nil {
			return c.fail(exitUsage, "stdin is not an add_memory JSON object: %v", err)
		}
	} else {
		in.UserInput, in.AgentResponse = c.args.str("input"), c.args.str("reply")
		if in.UserInput == "" && in.AgentResponse == "" {
			return c.fail(exitUsage, "give the exchange: --input TEXT --reply TEXT, or a JSON object on stdin with --stdin")
		}
		in.Timestamp = c.args.str("timestamp")
		if m := c.args.str("meta"); m != "" {
			in.MetaData = json.RawMessage(m)
		}
	}
	if c.args.has("user") {
		in.UserID = c.args.str("user")
	}
	if c.args.has("agent") {
		in.AgentName = c.args.str("agent")
	}
	if c.args.has("thread") {
		in.ThreadID = c.args.str("thread")
	}
	scope := memory.Scope{UserID: in.UserID, AgentName: in.AgentName}
	if scope.UserID == "" {
		scope.UserID = c.cfg.Memory.UserID
	}
	if err := scope.Validate(); err != nil {
		return c.fail(exitUsage, "%v", err)
	}

	store, err := openStore(ctx, c.cfg, c.log)
	if err != nil {
		return c.fail(exitError, "%v", err)
	}
	defer store.Close()
	svc, err := openService(c.cfg, store, c.log, withoutModels, nil)
	if err != nil {
		return c.fail(exitError, "%v", err)
	}
	defer svc.Close(context.WithoutCancel(ctx))
	res, err := svc.Add(ctx, memory.AddRequest{
		UserID: scope.UserID, AgentName: scope.AgentName, ThreadID: in.ThreadID,
		UserInput: in.UserInput, AgentResponse: in.AgentResponse, Messages: in.Messages,
		Timestamp: in.Timestamp, MetaData: in.MetaData,
	})
	if err != nil {
		code := exitError
		if errors.Is(err, memory.ErrInvalidInput) {
			code = exitUsage
		}
		return c.fail(code, "%s", cliMessage(err, scope))
	}
	if c.args.flag("json") {
		return writeJSON(c, res)
	}
	if len(res.TurnIDs) == 0 {
		fmt.Fprintf(c.stdout, "stored nothing: %s\n", orNone(res.Note))
		return exitOK
	}
	fmt.Fprintf(c.stdout, "stored %s in thread %s of %s: %s\n", plural(len(res.TurnIDs), "turn"), res.ThreadID, res.Scope.Key(), strings.Join(res.TurnIDs, ", "))
	if res.Pending.LLM == memory.KeylessMode {
		fmt.Fprintf(c.stdout, "extraction model: %s\n", res.Pending.LLM)
		return exitOK
	}
	fmt.Fprintf(c.stdout, "waiting for the updater: %s (%s)\n", plural(res.Pending.Turns, "turn"), res.Pending.LLM)
	return exitOK
}
