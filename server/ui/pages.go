package ui

import (
	"cmp"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/mnemo-mcp/mnemo/memory"
)

// profileData is the start page: what the assistant believes about the
// user — corrections first, then the most confident and the most recent
// facts, each with its actions, and the profile sections, each editable.
type profileData struct {
	Profile     *memory.ProfileResult
	Sections    []sectionView
	Filled      int
	Corrections []memory.Fact
	Confident   []memory.Fact
	Recent      []memory.Fact
	// More is how many facts the three lists leave out.
	More int
}

// sectionView is one profile section as the pages show it.
type sectionView struct {
	Name      string // as update_profile names it: work_context
	Title     string
	Text      string
	UpdatedAt time.Time
}

// startListLen bounds each list of the start page.
const startListLen = 6

// sectionViews lists the six profile sections of p.
func sectionViews(p *memory.ProfileResult) []sectionView {
	d := &memory.Document{User: p.User, History: p.History}
	out := make([]sectionView, 0, len(memory.ProfileSections))
	for i, s := range d.Sections() {
		out = append(out, sectionView{Name: memory.ProfileSections[i], Title: sectionTitle(s.Name), Text: s.Section.Summary, UpdatedAt: s.Section.UpdatedAt})
	}
	return out
}

func (h *handler) profilePage(r *http.Request, v *view) error {
	v.Title, v.Page = "What your assistant believes", "profile"
	p, err := h.svc.Profile(r.Context(), memory.ProfileRequest{UserID: v.Scope.UserID, AgentName: v.Scope.AgentName,
		IncludeKnowledge: true, IncludeAssistantKnowledge: true})
	if err != nil {
		return err
	}
	data := &profileData{Profile: p, Sections: sectionViews(p)}
	for _, s := range data.Sections {
		if strings.TrimSpace(s.Text) != "" {
			data.Filled++
		}
	}
	var rest []memory.Fact
	for _, f := range p.Facts {
		if f.Category == memory.CategoryCorrection {
			data.Corrections = append(data.Corrections, f)
		} else {
			rest = append(rest, f)
		}
	}
	newest := func(a, b memory.Fact) int { return b.CreatedAt.Compare(a.CreatedAt) }
	slices.SortStableFunc(data.Corrections, newest)
	data.Corrections = data.Corrections[:min(len(data.Corrections), startListLen)]
	slices.SortStableFunc(rest, func(a, b memory.Fact) int {
		if c := cmp.Compare(b.Confidence, a.Confidence); c != 0 {
			return c
		}
		return newest(a, b)
	})
	data.Confident = rest[:min(len(rest), startListLen)]
	rest = slices.Clone(rest[len(data.Confident):])
	slices.SortStableFunc(rest, newest)
	data.Recent = rest[:min(len(rest), startListLen)]
	data.More = len(p.Facts) - len(data.Corrections) - len(data.Confident) - len(data.Recent)
	v.Data = data
	return nil
}

// factsData is the facts page.
type factsData struct {
	List     *memory.ListResult
	Filtered bool
	Category string
	MinConf  string
	Source   string
	Text     string
	Prev     string // offsets of the neighbouring pages; "" for none
	Next     string
}

func (h *handler) factsPage(r *http.Request, v *view) error {
	v.Title, v.Page = "Facts", "facts"
	q := r.URL.Query()
	data := &factsData{Category: q.Get("category"), MinConf: q.Get("min_confidence"), Source: q.Get("source"), Text: q.Get("text")}
	data.Filtered = data.Category != "" || data.MinConf != "" || data.Source != "" || data.Text != ""
	v.Data = data
	minConf, err := parseFloat("min_confidence", data.MinConf)
	if err != nil {
		return err
	}
	offset, err := parseOffset(q.Get("offset"))
	if err != nil {
		return err
	}
	res, err := h.svc.List(r.Context(), memory.ListRequest{UserID: v.Scope.UserID, AgentName: v.Scope.AgentName, Kind: memory.ListFacts,
		Category: data.Category, MinConfidence: minConf, ThreadID: data.Source, Text: data.Text, Offset: offset, Limit: memory.MaxListLimit})
	if err != nil {
		return err
	}
	data.List = res
	data.Prev, data.Next = pageOffsets(offset, res.NextOffset, memory.MaxListLimit)
	return nil
}

// exchangesData is the exchanges page: a search (ranked as
// retrieve_memory ranks) or a list, filtered by thread and date, with a
// timeline of the threads. The list, the search and the timeline each
// have pages.
type exchangesData struct {
	Query, Thread, Since, Until string
	// Hits are the ranked pages of a search; Turns the listed ones.
	Hits     []memory.PageHit
	Searched bool
	// HitsFrom is the rank of the first hit shown (1-based).
	HitsFrom int
	List     *memory.ListResult
	Threads  *memory.ListResult
	Timeline *timeline
	Filtered bool
	Prev     string
	Next     string
	// ThreadsPrev and ThreadsNext page the timeline.
	ThreadsPrev, ThreadsNext string
}

// Page sizes of the lists that can grow.
const (
	turnsPerPage   = 50
	hitsPerPage    = 20
	threadsPerPage = maxTimelineRows
	eventsPerPage  = 50
)

func (h *handler) exchangesPage(r *http.Request, v *view) error {
	v.Title, v.Page = "Exchanges", "exchanges"
	q := r.URL.Query()
	data := &exchangesData{Query: strings.TrimSpace(q.Get("q")), Thread: q.Get("thread"), Since: q.Get("since"), Until: q.Get("until")}
	data.Filtered = data.Thread != "" || data.Since != "" || data.Until != ""
	v.Data = data
	ctx := r.Context()
	toffset, err := parseOffset(q.Get("toffset"))
	if err != nil {
		return err
	}
	threads, err := h.svc.List(ctx, memory.ListRequest{UserID: v.Scope.UserID, AgentName: v.Scope.AgentName, Kind: memory.ListThreads,
		Offset: toffset, Limit: threadsPerPage})
	if err != nil {
		return err
	}
	data.Threads = threads
	data.ThreadsPrev, data.ThreadsNext = pageOffsets(toffset, threads.NextOffset, threadsPerPage)
	data.Timeline = threadTimeline(threads.Threads, v.Link)
	// The list checks the filters, so a bad one is reported the same
	// way for a search.
	offset, err := parseOffset(q.Get("offset"))
	if err != nil {
		return err
	}
	listOffset := offset
	if data.Query != "" {
		listOffset = 0
	}
	list, err := h.svc.List(ctx, memory.ListRequest{UserID: v.Scope.UserID, AgentName: v.Scope.AgentName, Kind: memory.ListTurns,
		ThreadID: data.Thread, Since: data.Since, Until: wholeDay(data.Until), Offset: listOffset, Limit: turnsPerPage})
	if err != nil {
		return err
	}
	if data.Query == "" {
		data.List = list
		data.Prev, data.Next = pageOffsets(offset, list.NextOffset, turnsPerPage)
		return nil
	}
	// A search only looks (Peek): it counts no visit to a topic session
	// and starts no analysis. One hit more than the page tells whether
	// there is a next page.
	res, err := h.svc.Retrieve(ctx, memory.RetrieveRequest{UserID: v.Scope.UserID, AgentName: v.Scope.AgentName,
		ThreadID: data.Thread, Query: data.Query, MaxResults: min(memory.MaxRetrieveResults, max(memory.MinRetrieveResults, offset+hitsPerPage+1)), Peek: true})
	if err != nil {
		return err
	}
	since, until, err := bounds(data.Since, wholeDay(data.Until))
	if err != nil {
		return err
	}
	data.Searched = true
	var hits []memory.PageHit
	for _, p := range res.Pages {
		if (data.Thread == "" || p.ThreadID == data.Thread) && (since.IsZero() || !p.Time.Before(since)) && (until.IsZero() || !p.Time.After(until)) {
			hits = append(hits, p)
		}
	}
	next := 0
	if len(hits) > offset+hitsPerPage {
		next = offset + hitsPerPage
	}
	data.Hits = hits[min(offset, len(hits)):min(len(hits), offset+hitsPerPage)]
	data.HitsFrom = offset + 1
	data.Prev, data.Next = pageOffsets(offset, next, hitsPerPage)
	return nil
}

// sessionsData is the mid-term page.
type sessionsData struct {
	View      *memory.MidTermView
	Chart     *heatChart
	Threshold float64
}

func (h *handler) sessionsPage(r *http.Request, v *view) error {
	v.Title, v.Page = "Topic sessions", "sessions"
	mid, err := h.svc.MidTerm(r.Context(), v.Scope.UserID, v.Scope.AgentName)
	if err != nil {
		return err
	}
	cfg := h.svc.Config()
	v.Data = &sessionsData{View: mid, Threshold: cfg.MidTermHeatThreshold, Chart: newHeatChart(mid.Sessions, cfg, v.Now)}
	return nil
}

// historyData is a fact's history, or the latest events of the scope.
type historyData struct {
	FactID string
	// Section is the profile section whose edits are shown.
	Section string
	Result  *memory.HistoryResult
	// UndoContent is the wording the fact had before its last change of
	// wording, when that change is still the fact's wording: Undo puts it
	// back (as a new edit, recorded like any other).
	UndoContent string
	// Restorable says the fact is retired, merged or replaced, so
	// restore_memory can bring it back.
	Restorable bool
	Offset     int
	Prev, Next string
}

func (h *handler) historyPage(r *http.Request, v *view) error {
	v.Title, v.Page = "History", "history"
	q := r.URL.Query()
	data := &historyData{FactID: strings.TrimSpace(q.Get("fact")), Section: strings.TrimSpace(q.Get("section"))}
	v.Data = data
	offset, err := parseOffset(q.Get("offset"))
	if err != nil {
		return err
	}
	limit := eventsPerPage
	if data.FactID != "" {
		offset, limit = 0, memory.MaxListLimit
	}
	res, err := h.svc.FactHistory(r.Context(), memory.HistoryRequest{UserID: v.Scope.UserID, AgentName: v.Scope.AgentName,
		FactID: data.FactID, Section: data.Section, Offset: offset, Limit: limit})
	if err != nil {
		return err
	}
	data.Result, data.Offset = res, offset
	if data.FactID != "" {
		data.UndoContent, data.Restorable = undoOf(res)
	}
	if data.FactID == "" {
		next := 0
		if offset+len(res.Events) < res.Total {
			next = offset + len(res.Events)
		}
		data.Prev, data.Next = pageOffsets(offset, next, eventsPerPage)
	}
	return nil
}

// statusData is the pending work and the models.
type statusData struct {
	Profile *memory.ProfileResult
	Threads []threadCount
	Models  Models
	DataDir string
	Config  memory.Config
}

type threadCount struct {
	Thread string
	Turns  int
}

func (h *handler) statusPage(r *http.Request, v *view) error {
	v.Title, v.Page = "Status", "status"
	p, err := h.svc.Profile(r.Context(), memory.ProfileRequest{UserID: v.Scope.UserID, AgentName: v.Scope.AgentName})
	if err != nil {
		return err
	}
	data := &statusData{Profile: p, Models: h.opt.Models, DataDir: h.opt.DataDir, Config: h.svc.Config()}
	for t, n := range p.Pending.Threads {
		data.Threads = append(data.Threads, threadCount{t, n})
	}
	slices.SortFunc(data.Threads, func(a, b threadCount) int {
		if a.Turns != b.Turns {
			return b.Turns - a.Turns
		}
		return strings.Compare(a.Thread, b.Thread)
	})
	v.Data = data
	return nil
}

// previewData is what retrieve_memory would inject for a question.
type previewData struct {
	Query, Thread, MaxTokens string
	Result                   *memory.RetrieveResult
	Budget                   int
}

func (h *handler) previewPage(r *http.Request, v *view) error {
	v.Title, v.Page = "Injection preview", "preview"
	q := r.URL.Query()
	data := &previewData{Query: q.Get("q"), Thread: q.Get("thread"), MaxTokens: q.Get("max_tokens"), Budget: h.svc.Config().MaxInjectionTokens}
	v.Data = data
	if strings.TrimSpace(data.Query) == "" {
		return nil
	}
	maxTokens := 0
	if data.MaxTokens != "" {
		n, err := strconv.Atoi(data.MaxTokens)
		if err != nil {
			return &memory.InputError{Field: "max_tokens", Message: fmt.Sprintf("%q is not a whole number", data.MaxTokens)}
		}
		maxTokens = n
		data.Budget = n
	}
	// A preview only looks: no visit is counted, no analysis starts.
	res, err := h.svc.Retrieve(r.Context(), memory.RetrieveRequest{UserID: v.Scope.UserID, AgentName: v.Scope.AgentName,
		ThreadID: data.Thread, Query: data.Query, MaxTokens: maxTokens, Peek: true})
	if err != nil {
		return err
	}
	data.Result = res
	return nil
}

// dataData is the export, import and forget page.
type dataData struct {
	CanExport, CanImport bool
	Profile              *memory.ProfileResult
	Agents               []string
}

func (h *handler) dataPage(r *http.Request, v *view) error {
	v.Title, v.Page = "Export, import, forget", "data"
	p, err := h.svc.Profile(r.Context(), memory.ProfileRequest{UserID: v.Scope.UserID, AgentName: v.Scope.AgentName})
	if err != nil {
		return err
	}
	data := &dataData{CanExport: h.opt.Export != nil, CanImport: h.opt.Import != nil, Profile: p}
	if v.Scope.AgentName == "" {
		for _, s := range v.Scopes {
			if s.User == v.Scope.UserID && s.Agent != "" {
				data.Agents = append(data.Agents, s.Agent)
			}
		}
	}
	v.Data = data
	return nil
}

// export sends the export file of the page's scope: a user with the
// user's agents, as "mnemo export --user" writes it.
func (h *handler) export(w http.ResponseWriter, r *http.Request) {
	c := callerOf(r)
	sc, err := h.scopeOf(r, c)
	if err != nil {
		h.refuse(w, http.StatusBadRequest, err.Error())
		return
	}
	if !c.may(sc) || h.opt.Export == nil {
		h.refuse(w, http.StatusForbidden, "You may not export the memory of "+sc.Key()+".")
		return
	}
	stored, err := h.store.Scopes(r.Context())
	if err != nil {
		h.opt.Log.Error("memory viewer: export failed", "err", err)
		h.refuse(w, http.StatusInternalServerError, "The export failed; the server log says why.")
		return
	}
	var scopes []memory.Scope
	for _, s := range stored {
		if (s == sc || sc.AgentName == "" && s.UserID == sc.UserID) && c.may(s) {
			scopes = append(scopes, s)
		}
	}
	if len(scopes) == 0 {
		h.refuse(w, http.StatusNotFound, "Nothing is stored for "+sc.Key()+" yet; there is nothing to export.")
		return
	}
	data, err := h.opt.Export(r.Context(), scopes)
	if err != nil {
		h.opt.Log.Error("memory viewer: export failed", "err", err)
		h.refuse(w, http.StatusInternalServerError, "The export failed; the server log says why.")
		return
	}
	name := "mnemo-" + strings.ReplaceAll(sc.Key(), "/", "-") + "-" + h.opt.Now().UTC().Format("20060102-150405") + ".json"
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Content-Disposition", `attachment; filename="`+name+`"`)
	w.Write(data)
}

// rev answers the scope's revision, which the page script polls: it
// changes with every change of the document, the turn log or the list of
// scopes, made by this process or another.
func (h *handler) rev(w http.ResponseWriter, r *http.Request) {
	c := callerOf(r)
	sc, err := h.scopeOf(r, c)
	if err != nil || !c.may(sc) {
		w.WriteHeader(http.StatusForbidden)
		return
	}
	rev, err := h.revision(r, sc)
	if err != nil {
		h.opt.Log.Warn("memory viewer: revision failed", "err", err)
		w.WriteHeader(http.StatusServiceUnavailable)
		return
	}
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.Write([]byte(rev))
}

// revision is a cheap fingerprint of a scope: the document's revision
// and turn log epoch, the number of stored turns (the service reads only
// what is new) and the number of scopes.
func (h *handler) revision(r *http.Request, sc memory.Scope) (string, error) {
	ctx := r.Context()
	doc, err := h.store.LoadDocument(ctx, sc)
	if err != nil {
		return "", err
	}
	p, err := h.svc.Profile(ctx, memory.ProfileRequest{UserID: sc.UserID, AgentName: sc.AgentName})
	if err != nil {
		return "", err
	}
	scopes, err := h.store.Scopes(ctx)
	if err != nil {
		return "", err
	}
	return fmt.Sprintf("%d.%d.%d.%d", doc.Revision, doc.TurnLogEpoch, p.StoredTurns, len(scopes)), nil
}

// parseFloat parses an optional number field.
func parseFloat(field, s string) (float64, error) {
	if strings.TrimSpace(s) == "" {
		return 0, nil
	}
	f, err := strconv.ParseFloat(strings.TrimSpace(s), 64)
	if err != nil {
		return 0, &memory.InputError{Field: field, Message: fmt.Sprintf("%q is not a number", s)}
	}
	return f, nil
}

func parseOffset(s string) (int, error) {
	if s == "" {
		return 0, nil
	}
	n, err := strconv.Atoi(s)
	if err != nil || n < 0 {
		return 0, &memory.InputError{Field: "offset", Message: fmt.Sprintf("%q is not a page offset", s)}
	}
	return n, nil
}

// pageOffsets are the offsets of the pages before and after one.
func pageOffsets(offset, next, limit int) (string, string) {
	prev := ""
	if offset > 0 {
		prev = strconv.Itoa(max(0, offset-limit))
	}
	nx := ""
	if next > 0 {
		nx = strconv.Itoa(next)
	}
	return prev, nx
}

// wholeDay makes a date-only upper bound (from a date input) include
// that day.
func wholeDay(until string) string {
	if len(until) == len("2006-01-02") {
		if _, err := time.Parse("2006-01-02", until); err == nil {
			return until + "T23:59:59.999999999Z"
		}
	}
	return until
}

// bounds parses the date filters as List does (List has checked them).
func bounds(since, until string) (time.Time, time.Time, error) {
	parse := func(field, s string) (time.Time, error) {
		if s == "" {
			return time.Time{}, nil
		}
		for _, layout := range []string{time.RFC3339Nano, "2006-01-02"} {
			if t, err := time.Parse(layout, s); err == nil {
				return t, nil
			}
		}
		return time.Time{}, &memory.InputError{Field: field, Message: fmt.Sprintf("%q is not a date", s)}
	}
	s, err := parse("since", since)
	if err != nil {
		return s, s, err
	}
	u, err := parse("until", until)
	return s, u, err
}

// undoOf finds what a fact's history can undo: the wording before its
// last change of wording, while the fact still says what that change
// wrote; and whether a fact no longer current can be restored (retired,
// merged or replaced: restore_memory's cases). A forgotten fact keeps no
// wording, so it can be neither.
func undoOf(h *memory.HistoryResult) (undo string, restorable bool) {
	if h.Current == nil {
		if n := len(h.Events); n > 0 {
			switch h.Events[n-1].Event {
			case memory.FactRetired, memory.FactMerged, memory.FactReplaced:
				return "", true
			}
		}
		return "", false
	}
	var wordings []string
	for _, e := range h.Events {
		if e.Content != "" && (len(wordings) == 0 || wordings[len(wordings)-1] != e.Content) {
			wordings = append(wordings, e.Content)
		}
	}
	if n := len(wordings); n >= 2 && wordings[n-1] == h.Current.Content {
		return wordings[n-2], false
	}
	return "", false
}
