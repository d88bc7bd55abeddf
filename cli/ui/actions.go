package ui

import (
	"fmt"
	"io"
	"net/http"
	"strings"

	"github.com/mnemo-mcp/mnemo/memory"
)

// The changes. Each goes through the engine.Service method the MCP tool
// of the same change uses, with source "manual", so validation,
// deduplication, max_facts and the fact history are the tools'.

func (h *handler) addFact(r *http.Request, v *view) (string, string, error) {
	conf, err := parseFloat("confidence", r.PostFormValue("confidence"))
	if err != nil {
		return "", "", err
	}
	res, err := h.svc.SaveFact(r.Context(), memory.SaveFactRequest{UserID: v.Scope.UserID, AgentName: v.Scope.AgentName,
		Content: r.PostFormValue("content"), Category: r.PostFormValue("category"), Confidence: conf, Source: memory.SourceManual})
	if err != nil {
		return "", "", err
	}
	if res.Duplicate {
		return "/facts", "fact-duplicate", nil
	}
	return "/facts", "fact-saved", nil
}

func (h *handler) editFact(r *http.Request, v *view) (string, string, error) {
	req := memory.UpdateFactRequest{UserID: v.Scope.UserID, AgentName: v.Scope.AgentName, ID: r.PostFormValue("id"), Source: memory.SourceManual}
	// A field left as it was is not sent as a change, so the history
	// names only what the person changed.
	if c, ok := r.PostForm["content"]; ok {
		req.Content = &c[0]
	}
	if c := r.PostFormValue("category"); c != "" {
		req.Category = &c
	}
	if s := r.PostFormValue("confidence"); s != "" {
		conf, err := parseFloat("confidence", s)
		if err != nil {
			return "", "", err
		}
		req.Confidence = &conf
	}
	res, err := h.svc.UpdateFact(r.Context(), req)
	if err != nil {
		return "", "", err
	}
	if len(res.Changed) == 0 {
		return "/facts", "fact-unchanged", nil
	}
	return "/facts", "fact-updated", nil
}

func (h *handler) deleteFact(r *http.Request, v *view) (string, string, error) {
	id := strings.TrimSpace(r.PostFormValue("id"))
	if id == "" {
		return "", "", &memory.InputError{Field: "id", Message: "is empty; choose the fact to forget"}
	}
	_, err := h.svc.Forget(r.Context(), memory.ForgetRequest{UserID: v.Scope.UserID, AgentName: v.Scope.AgentName,
		FactIDs: []string{id}, Source: memory.SourceManual})
	if err != nil {
		return "", "", err
	}
	return "/facts", "fact-deleted", nil
}

func (h *handler) deleteTurn(r *http.Request, v *view) (string, string, error) {
	id := strings.TrimSpace(r.PostFormValue("id"))
	if id == "" {
		return "", "", &memory.InputError{Field: "id", Message: "is empty; choose the exchange to forget"}
	}
	_, err := h.svc.Forget(r.Context(), memory.ForgetRequest{UserID: v.Scope.UserID, AgentName: v.Scope.AgentName,
		TurnIDs: []string{id}, Source: memory.SourceManual})
	if err != nil {
		return "", "", err
	}
	return "/exchanges", "turn-deleted", nil
}

func (h *handler) deleteThread(r *http.Request, v *view) (string, string, error) {
	thread := strings.TrimSpace(r.PostFormValue("thread"))
	if thread == "" {
		return "", "", &memory.InputError{Field: "thread", Message: "is empty; choose the thread to forget"}
	}
	_, err := h.svc.Forget(r.Context(), memory.ForgetRequest{UserID: v.Scope.UserID, AgentName: v.Scope.AgentName,
		ThreadID: thread, Source: memory.SourceManual})
	if err != nil {
		return "", "", err
	}
	return "/exchanges", "thread-deleted", nil
}

// forgetScope deletes the whole scope once the person has typed its
// name (the user id, or user/agent).
func (h *handler) forgetScope(r *http.Request, v *view) (string, string, error) {
	if typed := strings.TrimSpace(r.PostFormValue("confirm")); typed != v.Scope.Key() {
		return "", "", &memory.InputError{Field: "confirm", Message: fmt.Sprintf("type %q exactly to forget the whole memory of %s; nothing was deleted", v.Scope.Key(), v.Scope.Key())}
	}
	c := callerOf(r)
	if v.Scope.AgentName == "" && c.May != nil {
		// The user's agent memories go with it: the caller must be
		// allowed every one of them.
		stored, err := h.store.Scopes(r.Context())
		if err != nil {
			return "", "", err
		}
		for _, s := range stored {
			if s.UserID == v.Scope.UserID && !c.may(s) {
				return "", "", fmt.Errorf("%w: forgetting %s would delete %s too, which you may not change", errForbidden, v.Scope.Key(), s.Key())
			}
		}
	}
	_, err := h.svc.Forget(r.Context(), memory.ForgetRequest{UserID: v.Scope.UserID, AgentName: v.Scope.AgentName,
		AllOfScope: true, Confirm: memory.ForgetEverything, Source: memory.SourceManual})
	if err != nil {
		return "", "", err
	}
	return "/", "forgotten", nil
}

// importData imports an uploaded export into empty scopes.
func (h *handler) importData(r *http.Request, v *view) (string, string, error) {
	if h.opt.Import == nil {
		return "", "", fmt.Errorf("%w: import is not available here", errForbidden)
	}
	f, _, err := r.FormFile("file")
	if err != nil {
		return "", "", &memory.InputError{Field: "file", Message: "choose a mnemo export or a DeerFlow memory.json to import"}
	}
	defer f.Close()
	data, err := io.ReadAll(f)
	if err != nil {
		return "", "", fmt.Errorf("read upload: %w", err)
	}
	user := strings.TrimSpace(r.PostFormValue("target_user"))
	if user != "" {
		if err := memory.ValidateID("target_user", user); err != nil {
			return "", "", err
		}
	}
	c := callerOf(r)
	if _, err := h.opt.Import(r.Context(), ImportRequest{Data: data, User: user, May: c.may}); err != nil {
		return "", "", err
	}
	if user != "" {
		v.Scope = memory.Scope{UserID: user}
	}
	return "/", "imported", nil
}
