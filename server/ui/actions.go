package ui

import (
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"

	"github.com/mnemo-mcp/mnemo/memory"
)

// The changes. Each goes through the engine.Service method the MCP tool
// of the same change uses, with source "manual", so validation,
// deduplication, max_facts and the fact history are the tools'; the
// request's context carries memory.ActorViewer, so the history says the
// person made them here. An action that returns "" as its page goes back
// to the page its form came from (filters and page kept).

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
		return "", "fact-duplicate", nil
	}
	return "", "fact-saved", nil
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
		return "", "fact-unchanged", nil
	}
	return "", "fact-updated", nil
}

// forgetData is the result page of a forget: what went with it and what
// may still mention it, each with its action.
type forgetData struct {
	// What says what was forgotten ("the fact …", "thread trip").
	What   string
	Result *memory.ForgetResult
	// Removed are the facts that went with it (asked for, or drawn only
	// from the forgotten exchanges).
	Removed []memory.Fact
	// Kept are facts drawn from the thread that were kept: they may still
	// say what was forgotten.
	Kept []memory.Fact
	// Sections are the profile sections that may still mention it.
	Sections []sectionView
	// Facts and Turns are the other facts and the exchanges that still
	// hold its words and names (ForgetResult.MayMention).
	Facts []memory.Fact
	Turns []memory.Mention
	// Back is the page the forget came from, when it still shows
	// something.
	Back string
}

// restoreFact brings back a retired, merged or replaced fact, as
// restore_memory does.
func (h *handler) restoreFact(r *http.Request, v *view) (string, string, error) {
	_, err := h.svc.RestoreFact(r.Context(), memory.RestoreFactRequest{UserID: v.Scope.UserID, AgentName: v.Scope.AgentName,
		ID: r.PostFormValue("id"), Source: memory.SourceManual})
	if err != nil {
		return "", "", err
	}
	return "", "fact-restored", nil
}

// forget runs req and fills the result page.
func (h *handler) forget(r *http.Request, v *view, what string, req memory.ForgetRequest) error {
	req.UserID, req.AgentName, req.Source = v.Scope.UserID, v.Scope.AgentName, memory.SourceManual
	res, err := h.svc.Forget(r.Context(), req)
	if err != nil {
		return err
	}
	data := &forgetData{What: what, Result: res, Removed: append(slices.Clone(res.FactsRemoved), res.DerivedFactsRemoved...),
		Kept: res.DerivedFactsKept, Back: v.Back}
	if len(res.SectionsMayMention) > 0 || len(res.MayMention) > 0 {
		p, err := h.svc.Profile(r.Context(), memory.ProfileRequest{UserID: v.Scope.UserID, AgentName: v.Scope.AgentName, IncludeKnowledge: true})
		if err != nil {
			return err
		}
		for _, s := range sectionViews(p) {
			if slices.Contains(res.SectionsMayMention, s.Name) {
				data.Sections = append(data.Sections, s)
			}
		}
		all := slices.Concat(p.Facts, p.Knowledge, p.AssistantKnowledge)
		for _, m := range res.MayMention {
			switch m.Kind {
			case memory.MentionTurn:
				data.Turns = append(data.Turns, m)
			case memory.MentionFact:
				if i := slices.IndexFunc(all, func(f memory.Fact) bool { return f.ID == m.ID }); i >= 0 {
					data.Facts = append(data.Facts, all[i])
				}
			}
		}
	}
	v.Title, v.Page, v.Data = "Forgotten: "+what, "forgotten", data
	// What the page lists changes as the person acts on it: a refresh
	// would lose the result, so it does not refresh by itself.
	v.Live = false
	return nil
}

func (h *handler) deleteFact(r *http.Request, v *view) error {
	id := strings.TrimSpace(r.PostFormValue("id"))
	if id == "" {
		return &memory.InputError{Field: "id", Message: "is empty; choose the fact to forget"}
	}
	return h.forget(r, v, "a fact", memory.ForgetRequest{FactIDs: []string{id}})
}

func (h *handler) deleteTurn(r *http.Request, v *view) error {
	id := strings.TrimSpace(r.PostFormValue("id"))
	if id == "" {
		return &memory.InputError{Field: "id", Message: "is empty; choose the exchange to forget"}
	}
	return h.forget(r, v, "an exchange", memory.ForgetRequest{TurnIDs: []string{id}})
}

func (h *handler) deleteThread(r *http.Request, v *view) error {
	thread := strings.TrimSpace(r.PostFormValue("thread"))
	if thread == "" {
		return &memory.InputError{Field: "thread", Message: "is empty; choose the thread to forget"}
	}
	return h.forget(r, v, "thread "+thread, memory.ForgetRequest{ThreadID: thread})
}

// forgetTopic forgets the items the person chose from a topic's preview
// (the topic page's boxes): the engine refuses any the topic does not
// find, so nothing outside the preview is touched.
func (h *handler) forgetTopic(r *http.Request, v *view) error {
	topic := strings.TrimSpace(r.PostFormValue("topic"))
	if topic == "" {
		return &memory.InputError{Field: "topic", Message: "is empty; search for a word or a name first"}
	}
	return h.forget(r, v, "what you chose about "+topic, memory.ForgetRequest{Topic: topic, Confirm: r.PostFormValue("confirm"),
		FactIDs: r.PostForm["fact"], TurnIDs: r.PostForm["turn"], Sections: r.PostForm["section"]})
}

// editSection replaces or clears one profile section, as update_profile
// does.
func (h *handler) editSection(r *http.Request, v *view) (string, string, error) {
	text := r.PostFormValue("text")
	if r.PostFormValue("op") == "clear" {
		text = ""
	}
	res, err := h.svc.UpdateProfile(r.Context(), memory.UpdateProfileRequest{UserID: v.Scope.UserID, AgentName: v.Scope.AgentName,
		Section: r.PostFormValue("section"), Text: text, Source: memory.SourceManual})
	if err != nil {
		return "", "", err
	}
	switch {
	case !res.Changed:
		return "", "section-unchanged", nil
	case res.Text == "":
		return "", "section-cleared", nil
	}
	return "", "section-saved", nil
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
	ctx := memory.WithActor(r.Context(), memory.ActorImport)
	if _, err := h.opt.Import(ctx, ImportRequest{Data: data, User: user, May: c.may}); err != nil {
		return "", "", err
	}
	if user != "" {
		v.Scope = memory.Scope{UserID: user}
	}
	return "/", "imported", nil
}
