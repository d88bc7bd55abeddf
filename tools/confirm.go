package tools

import (
	"context"

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
//     the answer — over stdio only; over stateless HTTP the answer could not
//     be tied to the asking request (WithStatelessHTTP), so the confirm
//     phrase stays the way;
//   - any other client: the confirm phrase, as before.
//
// mcp-go runs the older exchange for a handler written the newer way, so
// forget_memory has one code path: ask when there is no answer yet.

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

// askForgetAll is the question put to the user before a scope is deleted.
func askForgetAll(what string) *mcp.CallToolResult {
	return server.NewInputRequestBuilder("").Elicit(confirmForgetInput, mcp.ElicitationParams{
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
	}).ToolResult()
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
