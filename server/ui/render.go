package ui

import (
	"bytes"
	"errors"
	"fmt"
	"html/template"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/mnemo-mcp/mnemo/memory"
)

// templateSet is one page's template: the layout and the page.
type templateSet = template.Template

// pageNames are the templates under templates/, each with the layout.
var pageNames = []string{"profile", "facts", "exchanges", "sessions", "history", "status", "preview", "data", "message", "forgotten", "topic", "developers"}

var funcs = template.FuncMap{
	"when": func(t time.Time) string {
		if t.IsZero() {
			return "—"
		}
		return t.UTC().Format("2006-01-02 15:04")
	},
	"day": func(t time.Time) string {
		if t.IsZero() {
			return ""
		}
		return t.UTC().Format("2006-01-02")
	},
	"iso":          func(t time.Time) string { return t.UTC().Format(time.RFC3339) },
	"conf":         func(c float64) string { return strconv.FormatFloat(c, 'f', 2, 64) },
	"num":          func(f float64) string { return strconv.FormatFloat(f, 'f', 2, 64) },
	"categories":   func() []string { return memory.Categories },
	"keyless":      func(p memory.PendingInfo) bool { return p.LLM == memory.KeylessMode },
	"sectionTitle": sectionTitle,
	"turnView": func(v *view, id, thread string, t time.Time, user, reply string, score float64, pending bool) turnData {
		return turnData{V: v, ID: id, Thread: thread, Time: t, User: user, Reply: reply, Score: score, Pending: pending}
	},
	"short":       short,
	"add":         func(a, b int) int { return a + b },
	"factView":    func(v *view, f memory.Fact) factData { return factData{V: v, F: f} },
	"actor":       actorWords,
	"sectionView": func(v *view, s sectionView) sectionData { return sectionData{V: v, S: s} },
	"join":        func(words []string) string { return strings.Join(words, ", ") },
	"fromThread": func(source string) bool {
		return source != "" && source != memory.SourceManual && source != memory.SourceCLI && source != memory.SourceRollback && memory.ValidateID("thread", source) == nil
	},
	"pickName":  pickName,
	"pickValue": pickValue,
	"kindName":  kindName,
	"plural": func(n int, noun string) string {
		if n == 1 {
			return "1 " + noun
		}
		return strconv.Itoa(n) + " " + noun + "s"
	},
}

func parseTemplates() (map[string]*templateSet, error) {
	out := make(map[string]*templateSet, len(pageNames)+1)
	for _, name := range pageNames {
		t, err := template.New(name).Funcs(funcs).ParseFS(assets, "templates/layout.html", "templates/"+name+".html")
		if err != nil {
			return nil, fmt.Errorf("parse template %s: %w", name, err)
		}
		out[name] = t
	}
	bare, err := template.New("bare").Funcs(funcs).ParseFS(assets, "templates/bare.html")
	if err != nil {
		return nil, fmt.Errorf("parse template bare: %w", err)
	}
	out["bare"] = bare
	return out, nil
}

// turnData is one exchange as the "turn" template shows it; Score is
// negative for a listed (not ranked) exchange.
type turnData struct {
	V                       *view
	ID, Thread, User, Reply string
	Time                    time.Time
	Score                   float64
	Pending                 bool
}

// factData is one fact as the "factRow" template shows it, with its
// actions.
type factData struct {
	V *view
	F memory.Fact
}

// sectionData is one profile section as the "sectionRow" template shows
// it, with its actions.
type sectionData struct {
	V *view
	S sectionView
}

// view is what every page template gets.
type view struct {
	Title string
	Page  string // the template, and the active navigation entry
	Path  string // the page's path, for the scope switcher
	Base  string // the mount prefix
	Scope memory.Scope
	// Scopes are the scopes the caller may switch to.
	Scopes []scopeChoice
	CSRF   string
	Caller string
	// Logout is where the log-out button posts; empty hides it.
	Logout  string
	Version string
	// Rev is the scope's revision when the page was rendered; the page
	// script polls RevURL and refreshes the page when it changes.
	Rev    string
	RevURL string
	Live   bool
	Done   string
	Error  string
	// Here is the page's own address (without a confirmation), which its
	// forms send as "back": an action goes back to it, filters and page
	// kept. Back is that address on a POST, checked.
	Here  string
	Back  string
	Data  any
	Now   time.Time
	query url.Values
}

type scopeChoice struct {
	Key      string
	User     string
	Agent    string
	Selected bool
}

// Link is path under the mount prefix with the page's scope and the
// given key/value pairs as its query ("" values are left out).
func (v *view) Link(path string, kv ...string) string {
	q := url.Values{}
	q.Set("user", v.Scope.UserID)
	if v.Scope.AgentName != "" {
		q.Set("agent", v.Scope.AgentName)
	}
	for i := 0; i+1 < len(kv); i += 2 {
		if kv[i+1] != "" {
			q.Set(kv[i], kv[i+1])
		}
	}
	return v.Base + path + "?" + q.Encode()
}

// Static is the URL of an embedded asset.
func (v *view) Static(name string) string { return v.Base + "/static/" + name }

// Q is the value of a query parameter of the request.
func (v *view) Q(name string) string { return v.query.Get(name) }

// doneMessages are the confirmations an action's redirect may ask for
// (?done=code); fixed texts, so a link cannot make the page say anything.
var doneMessages = map[string]string{
	"fact-saved":        "The fact is saved.",
	"fact-duplicate":    "A fact saying the same thing was already stored; nothing changed.",
	"fact-updated":      "The fact is updated.",
	"fact-restored":     "The fact is back in memory.",
	"fact-unchanged":    "Nothing changed: the fact already said that.",
	"fact-deleted":      "The fact is forgotten.",
	"turn-deleted":      "The exchange is forgotten.",
	"thread-deleted":    "The thread is forgotten.",
	"imported":          "The import is done.",
	"forgotten":         "The whole memory of the scope is forgotten.",
	"section-saved":     "The profile section is saved.",
	"section-cleared":   "The profile section is cleared.",
	"section-unchanged": "Nothing changed: the section already said that.",
}

// scopeOf is the scope a request names (user, agent in the query or
// form), else the caller's or the default one.
func (h *handler) scopeOf(r *http.Request, c Caller) (memory.Scope, error) {
	sc := memory.Scope{UserID: r.FormValue("user"), AgentName: r.FormValue("agent")}
	if key := r.FormValue("scope"); key != "" && sc.UserID == "" {
		sc.UserID, sc.AgentName, _ = strings.Cut(key, "/")
	}
	if sc.UserID == "" {
		sc.UserID = c.User
		if sc.UserID == "" {
			sc.UserID = h.opt.DefaultUser
			if sc.AgentName == "" {
				sc.AgentName = h.opt.DefaultAgent
			}
		}
	}
	return sc, sc.Validate()
}

// scopes lists the stored scopes the caller may see, and sc.
func (h *handler) scopes(r *http.Request, c Caller, sc memory.Scope) []scopeChoice {
	stored, err := h.store.Scopes(r.Context())
	if err != nil {
		h.opt.Log.Warn("memory viewer: cannot list scopes", "err", err)
	}
	if !slices.Contains(stored, sc) {
		stored = append(stored, sc)
	}
	slices.SortFunc(stored, func(a, b memory.Scope) int { return strings.Compare(a.Key(), b.Key()) })
	out := make([]scopeChoice, 0, len(stored))
	for _, s := range stored {
		if c.may(s) {
			out = append(out, scopeChoice{Key: s.Key(), User: s.UserID, Agent: s.AgentName, Selected: s == sc})
		}
	}
	return out
}

// newView is the common part of a page for request r.
func (h *handler) newView(r *http.Request, c Caller, sc memory.Scope, page string) *view {
	v := &view{Page: page, Base: h.opt.Prefix, Scope: sc, CSRF: h.csrfToken(c), Caller: c.Name, Logout: h.opt.LogoutPath,
		Version: h.opt.Version, Now: h.opt.Now(), query: r.URL.Query(), Path: "/"}
	if r.Method == http.MethodGet {
		v.Path = r.URL.Path
		q := r.URL.Query()
		q.Del("done")
		v.Here = h.opt.Prefix + r.URL.Path
		if len(q) > 0 {
			v.Here += "?" + q.Encode()
		}
	} else {
		v.Back = backOf(r, v)
		v.Here = v.Back
	}
	v.Scopes = h.scopes(r, c, sc)
	v.Done = doneMessages[r.URL.Query().Get("done")]
	v.RevURL = v.Link("/rev")
	return v
}

// pageFunc fills a page's view. An error wrapping ErrInvalidInput or
// ErrNotFound is shown on the page (400, 404); others are a 500.
type pageFunc func(r *http.Request, v *view) error

// page serves a page: the scope checks, the view, the template.
func (h *handler) page(fn pageFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		c := callerOf(r)
		sc, err := h.scopeOf(r, c)
		if err != nil {
			h.refuse(w, http.StatusBadRequest, err.Error())
			return
		}
		if !c.may(sc) {
			h.refuse(w, http.StatusForbidden, "You may not see the memory of "+sc.Key()+".")
			return
		}
		v := h.newView(r, c, sc, "")
		v.Rev, _ = h.revision(r, sc)
		v.Live = true
		code := http.StatusOK
		if err := fn(r, v); err != nil {
			code = errorStatus(err)
			if code == http.StatusInternalServerError {
				h.opt.Log.Error("memory viewer: page failed", "path", r.URL.Path, "err", err)
				v.Error = "Something went wrong reading the memory; the server log says what."
			} else {
				v.Error = err.Error()
			}
		}
		h.render(w, code, v)
	}
}

// actionFunc makes one change in scope sc and returns the page to go
// to ("" for the page the form came from) and the confirmation code to
// show there.
type actionFunc func(r *http.Request, v *view) (to string, done string, err error)

// action serves a POST: the scope checks, the change, then a redirect
// (303) to a page that shows the result; a refused change is shown on a
// page of its own with a way back.
func (h *handler) action(fn actionFunc) http.HandlerFunc {
	return h.post(func(w http.ResponseWriter, r *http.Request, v *view) error {
		to, done, err := fn(r, v)
		if err != nil {
			return err
		}
		dest := v.Link(to, "done", done)
		if to == "" {
			// Back to the control the change was made with, so that the
			// focus does not jump to the top of the page (app.js).
			dest = withDone(v.Back, done) + changedAnchor(r)
		}
		http.Redirect(w, r, dest, http.StatusSeeOther)
		return nil
	})
}

// result serves a POST whose answer is a page of its own (what a forget
// took with it): fn makes the change and fills v.
func (h *handler) result(fn pageFunc) http.HandlerFunc {
	return h.post(func(w http.ResponseWriter, r *http.Request, v *view) error {
		if err := fn(r, v); err != nil {
			return err
		}
		h.render(w, http.StatusOK, v)
		return nil
	})
}

// post runs a change after the scope checks; a refused change is shown
// on a page of its own with a way back and, for an edit, the form again
// with what the person typed.
func (h *handler) post(fn func(w http.ResponseWriter, r *http.Request, v *view) error) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		c := callerOf(r)
		sc, err := h.scopeOf(r, c)
		if err != nil {
			h.refuse(w, http.StatusBadRequest, err.Error())
			return
		}
		if !c.may(sc) {
			h.refuse(w, http.StatusForbidden, "You may not change the memory of "+sc.Key()+".")
			return
		}
		v := h.newView(r, c, sc, "message")
		err = fn(w, r, v)
		if err == nil {
			return
		}
		code := errorStatus(err)
		v.Title, v.Page, v.Live = "Not changed", "message", false
		if code == http.StatusInternalServerError {
			h.opt.Log.Error("memory viewer: change failed", "path", r.URL.Path, "err", err)
			v.Error = "The change failed; the server log says why."
		} else {
			v.Error = err.Error()
		}
		v.Data = refused(r, v)
		h.render(w, code, v)
	}
}

// refusedData is the page of a refused change: the way back and, for an
// edit, its form again as the person filled it.
type refusedData struct {
	Back string
	// Action is the edit's path ("/facts/edit"), "" for another change.
	Action string
	Form   url.Values
}

// Retry reads a field of the refused form.
func (d *refusedData) Retry(name string) string { return d.Form.Get(name) }

func refused(r *http.Request, v *view) *refusedData {
	d := &refusedData{Back: v.Back}
	switch r.URL.Path {
	case "/facts/edit", "/facts/add", "/profile/section":
		if r.PostFormValue("op") != "clear" {
			d.Action, d.Form = r.URL.Path, r.PostForm
		}
	}
	return d
}

// backOf is where a change goes back to: the form's "back" when it is a
// page of this viewer, else the page that sent the form, else the start
// page.
func backOf(r *http.Request, v *view) string {
	if b := r.PostFormValue("back"); b != "" {
		if u, err := url.Parse(b); err == nil && u.Scheme == "" && u.Host == "" && u.Opaque == "" &&
			strings.HasPrefix(u.Path, v.Base+"/") && !strings.HasPrefix(u.Path, "//") && !strings.Contains(u.Path, "\\") {
			return u.RequestURI()
		}
	}
	return backLink(r, v)
}

// withDone adds the confirmation code to a page address.
func withDone(to, done string) string {
	u, err := url.Parse(to)
	if err != nil {
		return to
	}
	q := u.Query()
	q.Set("done", done)
	u.RawQuery = q.Encode()
	return u.RequestURI()
}

// backLink is the page that sent the form when it is one of ours.
func backLink(r *http.Request, v *view) string {
	if ref, err := url.Parse(r.Referer()); err == nil && ref.Host == r.Host && strings.HasPrefix(ref.Path, v.Base+"/") {
		return ref.RequestURI()
	}
	return v.Link("/")
}

func errorStatus(err error) int {
	switch {
	case errors.Is(err, memory.ErrInvalidInput):
		return http.StatusBadRequest
	case errors.Is(err, memory.ErrNotFound):
		return http.StatusNotFound
	case errors.Is(err, errForbidden):
		return http.StatusForbidden
	}
	return http.StatusInternalServerError
}

var errForbidden = errors.New("forbidden")

// render writes v with its page's template.
func (h *handler) render(w http.ResponseWriter, code int, v *view) {
	t := h.pages[v.Page]
	var buf bytes.Buffer
	if err := t.ExecuteTemplate(&buf, "layout", v); err != nil {
		h.opt.Log.Error("memory viewer: render failed", "page", v.Page, "err", err)
		http.Error(w, "render failed", http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.WriteHeader(code)
	w.Write(buf.Bytes())
}

// renderBare writes a page without the caller's data (401, 403, 400).
func (h *handler) renderBare(w http.ResponseWriter, code int, title, msg string) {
	var buf bytes.Buffer
	data := struct{ Title, Message, CSS string }{title, msg, h.opt.Prefix + "/static/style.css"}
	if err := h.pages["bare"].ExecuteTemplate(&buf, "bare", data); err != nil {
		http.Error(w, msg, code)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.WriteHeader(code)
	w.Write(buf.Bytes())
}

// sectionTitle is a profile section's heading.
func sectionTitle(name string) string {
	switch name {
	case "workContext", "work_context":
		return "Work"
	case "personalContext", "personal_context":
		return "Personal"
	case "topOfMind", "top_of_mind":
		return "Top of mind"
	case "recentMonths", "recent_months":
		return "Recent months"
	case "earlierContext", "earlier_context":
		return "Earlier"
	case "longTermBackground", "long_term_background":
		return "Long-term background"
	}
	return name
}

// short is the beginning of a text, for an accessible name.
func short(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	if r := []rune(s); len(r) > 60 {
		return string(r[:57]) + "…"
	}
	return s
}

// actorWords says who made a change, for the history.
func actorWords(a memory.Actor, source string) string {
	switch a {
	case memory.ActorViewer:
		return "by you, in the memory viewer"
	case memory.ActorAssistant:
		return "by the assistant, through a tool call"
	case memory.ActorUpdater:
		return "by the language model's updater"
	case memory.ActorImport:
		return "by an import"
	case memory.ActorCLI:
		return "by you, on the command line"
	}
	switch source {
	case memory.SourceCLI:
		return "on the command line"
	case memory.SourceManual:
		return "by hand (a tool call or the viewer; not recorded which)"
	case memory.SourceRollback:
		return "by a rollback"
	}
	return ""
}

// changedAnchor is the fragment of the edit control of what a form
// changed (a fact's or a profile section's), or "".
func changedAnchor(r *http.Request) string {
	if id := r.PostFormValue("id"); id != "" && memory.ValidateID("id", id) == nil {
		return "#edit-" + id
	}
	if s := r.PostFormValue("section"); slices.Contains(memory.ProfileSections, s) {
		return "#edit-section-" + s
	}
	return ""
}
