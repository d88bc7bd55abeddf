package tools

import (
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"log/slog"
	"strings"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
	"github.com/mnemo-mcp/mnemo/memory"
)

// Confirmation by the user: forget_memory with all deletes a whole scope,
// and the confirm phrase that allows it is something the model can type
// on its own. When the client can put a question to the user, the server
// asks the user instead and obeys the answer, whatever the model passed:
//
//   - protocol 2026-07-28: the call answers with an input_required result
//     carrying an elicitation; the client asks the user and calls again
//     with the answer (a multi-round-trip request, stateless over HTTP);
//   - protocol 2025-06-18 and 2025-11-25: the server sends elicitation/create
//     to a client that declared the elicitation capability and waits for
//     the answer (a question that fails deletes nothing) — over stdio
//     only; over stateless HTTP the answer could not be tied to the asking
//     request (WithStatelessHTTP), so the confirm phrase stays the way;
//   - any other client: the confirm phrase, as before.
//
// The older exchange is run here rather than left to mcp-go's bridge for
// input_required results, so that a client failing to answer gets a tool
// result, not a JSON-RPC error.
//
// A 2026-07-28 answer comes back in a new request, which could be any
// request: the question's requestState binds it to what was asked (the
// caller, the scope, the time asked), signed with the server's key, and an
// answer is taken only with a state of the same call made in the last
// questionTTL. Any other answer — to another question, or to none — is
// not taken: the question is asked anew.

// confirmForgetInput is the key of the forget-everything question.
const confirmForgetInput = "confirm_forget"

// canAskUser reports whether the client of this request can be asked a
// question in form mode.
func canAskUser(ctx context.Context, statelessHTTP bool) bool {
	if info := server.RequestProtocolInfoFromContext(ctx); info != nil && info.Modern {
		return info.ClientCapabilities != nil && formElicitation(info.ClientCapabilities.Elicitation)
	}
	if statelessHTTP {
		return false
	}
	session, ok := server.ClientSessionFromContext(ctx).(server.SessionWithClientInfo)
	return ok && formElicitation(session.GetClientCapabilities().Elicitation)
}

// formElicitation reports whether a declared elicitation capability takes
// forms: an empty capability means forms (protocol 2025-06-18).
func formElicitation(c *mcp.ElicitationCapability) bool {
	return c != nil && (c.Form != nil || c.URL == nil)
}

// questionTTL is how long an answer to a question stays good.
const questionTTL = 10 * time.Minute

// questions binds answers to the questions asked.
type questions struct {
	key []byte
	now func() time.Time
}

// newQuestions signs states with key, or with a key of its own when nil.
func newQuestions(key []byte, now func() time.Time) *questions {
	if len(key) == 0 {
		key = make([]byte, 32)
		rand.Read(key)
	}
	m := hmac.New(sha256.New, key)
	m.Write([]byte("mnemo forget_memory question state"))
	return &questions{key: m.Sum(nil), now: now}
}

// state is the requestState of a question about target asked at t.
func (q *questions) state(target string, t time.Time) string {
	var ts [8]byte
	binary.BigEndian.PutUint64(ts[:], uint64(t.Unix()))
	m := hmac.New(sha256.New, q.key)
	m.Write(ts[:])
	m.Write([]byte(target))
	return base64.RawURLEncoding.EncodeToString(append(ts[:], m.Sum(nil)...))
}

// valid reports whether state is that of a question about target asked
// within questionTTL.
func (q *questions) valid(state, target string) bool {
	raw, err := base64.RawURLEncoding.DecodeString(state)
	if err != nil || len(raw) != 8+sha256.Size {
		return false
	}
	asked := time.Unix(int64(binary.BigEndian.Uint64(raw[:8])), 0)
	if age := q.now().Sub(asked); age < 0 || age > questionTTL {
		return false
	}
	return hmac.Equal([]byte(state), []byte(q.state(target, asked)))
}

// forgetTarget names what a forget-everything call deletes, for its
// question's state: the caller and the scope the arguments name.
func forgetTarget(ctx context.Context, args forgetArgs) string {
	c, _ := CallerFrom(ctx)
	return strings.Join([]string{"all", c.User, c.Agent, args.UserID, args.AgentName}, "\x00")
}

// confirmForgetAll asks the user whether to forget everything about what
// (canAskUser said the client can be asked), or reads the answer a client
// of 2026-07-28 brought back to the question about target. It returns the
// result the call answers with when it must stop here (the question, or
// nothing deleted), or nil when the user said yes.
func (q *questions) confirmForgetAll(ctx context.Context, req mcp.CallToolRequest, what, target string) *mcp.CallToolResult {
	return q.confirm(ctx, req, forgetAllQuestion(what), "everything about "+what, target)
}

// topicTarget binds the answer about a topic's forget to the caller, the
// scope, the topic and the items chosen, in their order: a yes to
// forgetting two facts about Lisbon is not a yes to forgetting a third.
func topicTarget(ctx context.Context, args forgetArgs) string {
	c, _ := CallerFrom(ctx)
	parts := []string{"topic", c.User, c.Agent, args.UserID, args.AgentName, memory.ForgetTopicConfirm(args.Topic)}
	for _, list := range [][]string{args.FactIDs, args.TurnIDs, args.Sections} {
		parts = append(parts, strings.Join(list, "\x01"))
	}
	return strings.Join(parts, "\x00")
}

// confirmForgetTopic asks the user, as confirmForgetAll does, whether to
// forget the items of a topic's preview the call chose.
func (q *questions) confirmForgetTopic(ctx context.Context, req mcp.CallToolRequest, args forgetArgs) *mcp.CallToolResult {
	what := strings.Join(strings.Fields(args.Topic), " ")
	var items []string
	if n := len(args.FactIDs); n > 0 {
		items = append(items, count(n, "fact"))
	}
	if n := len(args.TurnIDs); n > 0 {
		items = append(items, count(n, "stored exchange"))
	}
	if n := len(args.Sections); n > 0 {
		items = append(items, count(n, "profile section"))
	}
	question := mcp.ElicitationParams{
		Mode: mcp.ElicitationModeForm,
		Message: "Forget " + strings.Join(items, ", ") + " that mention \"" + what + "\"? They are deleted for good " +
			"and cannot be recovered; nothing else is touched.",
		RequestedSchema: map[string]any{
			"type": "object",
			"properties": map[string]any{
				"confirm": map[string]any{
					"type":        "boolean",
					"title":       "Forget them",
					"description": "Check to delete the items chosen.",
				},
			},
			"required": []string{"confirm"},
		},
	}
	return q.confirm(ctx, req, question, "the chosen items about \""+what+"\"", topicTarget(ctx, args))
}

// confirm puts question to the user (or reads the answer a client of
// 2026-07-28 brought back to the question about target) and returns the
// result the call answers with when it must stop: the question, or
// nothing deleted; nil when the user said yes. what names what would be
// forgotten, in the refusals.
func (q *questions) confirm(ctx context.Context, req mcp.CallToolRequest, question mcp.ElicitationParams, what, target string) *mcp.CallToolResult {
	var answer *mcp.ElicitationResult
	if info := server.RequestProtocolInfoFromContext(ctx); info != nil && info.Modern {
		answer = server.ElicitationResponse(req.Params.InputResponses, confirmForgetInput)
		if answer == nil || !q.valid(req.Params.RequestState, target) {
			if answer != nil {
				slog.WarnContext(ctx, "forget_memory: an answer not given to this question was not taken; asking again")
			}
			return server.NewInputRequestBuilder(q.state(target, q.now())).Elicit(confirmForgetInput, question).ToolResult()
		}
	} else {
		// An older client is asked within this request; answers it
		// brings along were given to no question.
		err := server.ErrNoActiveSession
		if srv := server.ServerFromContext(ctx); srv != nil {
			answer, err = srv.RequestElicitation(ctx, mcp.ElicitationRequest{
				Request: mcp.Request{Method: string(mcp.MethodElicitationCreate)}, Params: question})
		}
		if err != nil {
			slog.WarnContext(ctx, "cannot ask the user to confirm a forget", "err", err)
			return mcp.NewToolResultError("not confirmed: the user could not be asked to confirm forgetting " + what +
				", so nothing was deleted; try again later")
		}
	}
	if !userConfirmed(answer) {
		return mcp.NewToolResultError("not confirmed: the user did not confirm forgetting " + what +
			" (" + string(answer.Action) + "), so nothing was deleted; do not call it again unless the user asks anew")
	}
	return nil
}

// forgetAllQuestion is the question put to the user before a scope is
// deleted.
func forgetAllQuestion(what string) mcp.ElicitationParams {
	return mcp.ElicitationParams{
		Mode: mcp.ElicitationModeForm,
		Message: "Forget everything remembered about " + what + "? The profile, every fact and every stored exchange " +
			"are deleted for good and cannot be recovered.",
		RequestedSchema: map[string]any{
			"type": "object",
			"properties": map[string]any{
				"confirm": map[string]any{
					"type":        "boolean",
					"title":       "Forget everything",
					"description": "Check to delete all of it.",
				},
			},
			"required": []string{"confirm"},
		},
	}
}

// userConfirmed reports whether the answer to the question is a yes.
func userConfirmed(answer *mcp.ElicitationResult) bool {
	if answer.Action != mcp.ElicitationResponseActionAccept {
		return false
	}
	content, ok := answer.Content.(map[string]any)
	if !ok {
		return false
	}
	yes, _ := content["confirm"].(bool)
	return yes
}
