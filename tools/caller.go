package tools

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/mnemo-mcp/mnemo/memory"
)

// Caller is who makes a call, as a transport authenticated them (the
// bearer token of an HTTP request). Over stdio there is no caller and the
// arguments name the scope; with a caller the scope comes from the
// credential:
//
//   - no user_id means the caller's user; a user_id naming anyone else is
//     refused with an isError result, and nothing is read or written;
//   - a caller bound to an agent (a token made with --agent) uses that
//     agent's memory: no agent_name means that agent, another agent_name
//     is refused. A caller with no agent may name any agent of its user.
type Caller struct {
	// User is the authenticated user id; never empty in a caller.
	User string
	// Agent, when set, confines the caller to that agent's memory.
	Agent string
}

type callerKey struct{}

// WithCaller returns ctx carrying c, the caller every tool and resource
// read under ctx acts for. A caller with an empty User confines a call to
// nothing: every scoped call is refused.
func WithCaller(ctx context.Context, c Caller) context.Context {
	return context.WithValue(ctx, callerKey{}, c)
}

// CallerFrom returns the caller carried by ctx, if any.
func CallerFrom(ctx context.Context) (Caller, bool) {
	c, ok := ctx.Value(callerKey{}).(Caller)
	return c, ok
}

// confine returns the scope c may use when a call asks for userID and
// agentName ("" for not given), or a message for the model saying why the
// call is refused.
func (c Caller) confine(userID, agentName string) (memory.Scope, string) {
	switch {
	case c.User == "":
		return memory.Scope{}, "user_id: this connection is not authenticated as any user, so it cannot use memory"
	case userID != "" && userID != c.User:
		return memory.Scope{}, fmt.Sprintf("user_id: this connection is authenticated as user %q and cannot use the memory of %q; leave user_id out to use your own memory", c.User, userID)
	case c.Agent != "" && agentName != "" && agentName != c.Agent:
		return memory.Scope{}, fmt.Sprintf("agent_name: this connection is authenticated for agent %q and cannot use the memory of agent %q; leave agent_name out", c.Agent, agentName)
	}
	if agentName == "" {
		agentName = c.Agent
	}
	return memory.Scope{UserID: c.User, AgentName: agentName}, ""
}

// confineArguments applies the caller in ctx to a tool call's validated
// arguments: it returns them with user_id (and agent_name, for a caller
// bound to an agent) set to the scope the caller may use, or a message
// refusing the call. Without a caller raw is returned unchanged. scoped
// says whether the tool takes user_id at all; a tool that does not cannot
// be confined and is refused to a caller, so that a tool added later
// without user_id never silently reaches the configured user's memory.
func confineArguments(ctx context.Context, raw json.RawMessage, scoped bool) (json.RawMessage, string) {
	c, ok := CallerFrom(ctx)
	if !ok {
		return raw, ""
	}
	if !scoped {
		return nil, "this tool cannot be used by an authenticated caller"
	}
	var args map[string]json.RawMessage
	if err := json.Unmarshal(raw, &args); err != nil {
		return nil, "arguments: want an object of named arguments"
	}
	var userID, agentName string
	if v, ok := args["user_id"]; ok && json.Unmarshal(v, &userID) != nil {
		return nil, "user_id: want a string"
	}
	if v, ok := args["agent_name"]; ok && json.Unmarshal(v, &agentName) != nil {
		return nil, "agent_name: want a string"
	}
	scope, msg := c.confine(userID, agentName)
	if msg != "" {
		return nil, msg
	}
	args["user_id"], _ = json.Marshal(scope.UserID)
	if scope.AgentName != "" {
		args["agent_name"], _ = json.Marshal(scope.AgentName)
	}
	out, err := json.Marshal(args)
	if err != nil {
		return nil, "arguments: cannot be encoded: " + err.Error()
	}
	return out, ""
}
