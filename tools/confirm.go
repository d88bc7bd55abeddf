package tools

import (
	"context"
	"log/slog"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
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

// confirmForgetAll asks the user whether to forget everything about what
// (canAskUser said the client can be asked), or reads the answer a client
// of 2026-07-28 brought back. It returns the result the call answers with
// when it must stop here (the question, or nothing deleted), or nil when
// the user said yes.
func confirmForgetAll(ctx context.Context, req mcp.CallToolRequest, what string) *mcp.CallToolResult {
	question := forgetAllQuestion(what)
	answer := server.ElicitationResponse(req.Params.InputResponses, confirmForgetInput)
	if answer == nil {
		if info := server.RequestProtocolInfoFromContext(ctx); info != nil && info.Modern {
			return server.NewInputRequestBuilder("").Elicit(confirmForgetInput, question).ToolResult()
		}
		err := server.ErrNoActiveSession
		if srv := server.ServerFromContext(ctx); srv != nil {
			answer, err = srv.RequestElicitation(ctx, mcp.ElicitationRequest{
				Request: mcp.Request{Method: string(mcp.MethodElicitationCreate)}, Params: question})
		}
		if err != nil {
			slog.WarnContext(ctx, "cannot ask the user to confirm forgetting everything", "err", err)
			return mcp.NewToolResultError("not confirmed: the user could not be asked to confirm forgetting everything about " + what +
				", so nothing was deleted; try again later")
		}
	}
	if !userConfirmed(answer) {
		return mcp.NewToolResultError("not confirmed: the user did not confirm forgetting everything about " + what +
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
