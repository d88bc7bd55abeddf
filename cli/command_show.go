package cli

import (
	"context"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/mnemo-mcp/mnemo/memory"
)

// showOutput is what "mnemo show --json" prints. Its fields are stable:
// new ones may be added, none renamed or removed. A part not asked for
// (--facts, --profile, --threads) is left out; one asked for is always
// present, as an empty list when there is nothing.
type showOutput struct {
	Scope        memory.Scope `json:"scope"`
	Revision     int64        `json:"revision"`
	LastUpdated  time.Time    `json:"last_updated,omitzero"`
	StoredTurns  int          `json:"stored_turns"`
	PendingTurns int          `json:"pending_turns"`
	ThreadCount  int          `json:"thread_count"`

	Profile            []memory.ProfileSection `json:"profile,omitzero"`
	Facts              []memory.Fact           `json:"facts,omitzero"`
	Knowledge          []memory.Fact           `json:"knowledge,omitzero"`
	AssistantKnowledge []memory.Fact           `json:"assistant_knowledge,omitzero"`
	Threads            []threadInfo            `json:"threads,omitzero"`
	// Sessions are the mid-term topic sessions, hottest first; only with
	// --sessions.
	Sessions []memory.MidTermSessionView `json:"sessions,omitzero"`
	// Usage is the scope's model and embedding usage by day and its daily
	// token budget; only with --usage.
	Usage *memory.ScopeUsage `json:"usage,omitempty"`

	usage   []memory.UsageDay // the document's saved usage
	keyless bool              // no language model is configured
}

// threadInfo summarises one conversation of a scope.
type threadInfo struct {
	ThreadID string `json:"thread_id"`
	Turns    int    `json:"turns"`
	// Pending counts the turns not yet reflected in the memory document.
	Pending int       `json:"pending"`
	First   time.Time `json:"first"`
	Last    time.Time `json:"last"`
}

// runShow is "mnemo show [--json] [--facts|--profile|--threads|--sessions|--usage]".
func runShow(ctx context.Context, e *call) int {
	stdout := e.stdout
	scope, err := e.scope()
	if err != nil {
		return e.fail(exitUsage, "%v", err)
	}
	if dataDirMissing(e.cfg) {
		if e.args.flag("json") {
			out := trimShow(e, emptyShow(scope))
			if e.args.flag("sessions") {
				out.Sessions = []memory.MidTermSessionView{}
			}
			if e.args.flag("usage") {
				u := memory.UsageOf(nil, e.cfg.Memory.DailyTokenBudget, time.Now())
				out.Usage = &u
			}
			return writeJSON(e, out)
		}
		fmt.Fprintf(stdout, "No memory is stored for %s: %s.\n", scope.Key(), noMemoryIn(e.cfg.DataDir))
		return exitOK
	}
	store, err := openStore(ctx, e.cfg, e.log)
	if err != nil {
		return e.fail(exitError, "%v", err)
	}
	defer store.Close()

	out, err := loadShow(ctx, store, scope)
	if err != nil {
		return e.fail(exitError, "%v", err)
	}
	// With no model nothing waits for one: every exchange is stored and
	// searchable, as the tools, doctor and the viewer say; the text says
	// so. The JSON keeps its counts of turns above the watermarks.
	out.keyless = !e.cfg.LLM.Configured()
	out = trimShow(e, out)
	if e.args.flag("usage") {
		u := memory.UsageOf(out.usage, e.cfg.Memory.DailyTokenBudget, time.Now())
		out.Usage = &u
	}
	if e.args.flag("sessions") {
		// The sessions are built by the memory service, as a server
		// would: from midterm.json, brought up to date with the turn log.
		svc, err := openService(e.cfg, store, e.log, withoutModels, nil, loadProgress(e.stderr))
		if err != nil {
			return e.fail(exitError, "%v", err)
		}
		view, err := svc.MidTerm(ctx, scope.UserID, scope.AgentName)
		svc.Close(ctx)
		if err != nil {
			return e.fail(exitError, "%v", err)
		}
		out.Sessions = view.Sessions
	}
	if e.args.flag("json") {
		return writeJSON(e, out)
	}
	empty := out.Revision == 0 && out.StoredTurns == 0
	if empty && out.Usage == nil {
		fmt.Fprintf(stdout, "No memory is stored for %s in %s.\n", scope.Key(), storageName(e.cfg))
		if scopes, err := store.Scopes(ctx); err == nil && len(scopes) > 0 {
			keys := make([]string, len(scopes))
			for i, sc := range scopes {
				keys[i] = sc.Key()
			}
			fmt.Fprintf(stdout, "Stored: %s (choose with --user U [--agent A]).\n", strings.Join(keys, ", "))
		}
		return exitOK
	}
	writeShow(stdout, out)
	return exitOK
}

// trimShow leaves out of out the parts not asked for.
func trimShow(e *call, out *showOutput) *showOutput {
	all := !e.args.flag("facts") && !e.args.flag("profile") && !e.args.flag("threads") && !e.args.flag("sessions") && !e.args.flag("usage")
	if !all && !e.args.flag("profile") {
		out.Profile = nil
	}
	if !all && !e.args.flag("facts") {
		out.Facts, out.Knowledge, out.AssistantKnowledge = nil, nil, nil
	}
	if !all && !e.args.flag("threads") {
		out.Threads = nil
	}
	return out
}

// emptyShow is the showOutput of a scope that holds nothing.
func emptyShow(scope memory.Scope) *showOutput {
	return &showOutput{
		Scope:              scope,
		Profile:            []memory.ProfileSection{},
		Facts:              []memory.Fact{},
		Knowledge:          []memory.Fact{},
		AssistantKnowledge: []memory.Fact{},
		Threads:            []threadInfo{},
	}
}

// loadShow reads a scope's document and turn log into a showOutput with
// every part filled in.
func loadShow(ctx context.Context, store memory.Store, scope memory.Scope) (*showOutput, error) {
	doc, err := store.LoadDocument(ctx, scope)
	if err != nil {
		return nil, fmt.Errorf("load memory of %s: %w", scope.Key(), err)
	}
	turns, err := store.ReadTurns(ctx, scope, 0)
	if err != nil {
		return nil, fmt.Errorf("read turns of %s: %w", scope.Key(), err)
	}
	out := &showOutput{
		Scope:              scope,
		Revision:           doc.Revision,
		LastUpdated:        doc.LastUpdated,
		StoredTurns:        len(turns),
		Profile:            []memory.ProfileSection{},
		Facts:              append([]memory.Fact{}, doc.Facts...),
		Knowledge:          append([]memory.Fact{}, doc.Knowledge...),
		AssistantKnowledge: append([]memory.Fact{}, doc.AssistantKnowledge...),
		Threads:            []threadInfo{},
		usage:              doc.Usage,
	}
	for _, ns := range doc.Sections() {
		if strings.TrimSpace(ns.Section.Summary) != "" {
			out.Profile = append(out.Profile, memory.ProfileSection{Name: ns.Name, Summary: ns.Section.Summary, UpdatedAt: ns.Section.UpdatedAt})
		}
	}
	byThread := map[string]*threadInfo{}
	for _, t := range turns {
		ti := byThread[t.ThreadID]
		if ti == nil {
			ti = &threadInfo{ThreadID: t.ThreadID, First: t.Time, Last: t.Time}
			byThread[t.ThreadID] = ti
		}
		ti.Turns++
		if t.Seq > doc.Watermarks[t.ThreadID] {
			ti.Pending++
			out.PendingTurns++
		}
		if t.Time.Before(ti.First) {
			ti.First = t.Time
		}
		if t.Time.After(ti.Last) {
			ti.Last = t.Time
		}
	}
	for _, ti := range byThread {
		out.Threads = append(out.Threads, *ti)
	}
	out.ThreadCount = len(out.Threads)
	// Most recent conversation first, as a terminal user looks for it.
	slices.SortFunc(out.Threads, func(a, b threadInfo) int {
		if c := b.Last.Compare(a.Last); c != 0 {
			return c
		}
		return strings.Compare(a.ThreadID, b.ThreadID)
	})
	return out, nil
}

// writeSessions prints the mid-term sessions, hottest first.
func writeSessions(b *strings.Builder, sessions []memory.MidTermSessionView) {
	fmt.Fprintf(b, "\nMid-term sessions (%d), hottest first\n", len(sessions))
	if len(sessions) == 0 {
		b.WriteString("  (none: every exchange is still in its thread's short-term window)\n")
		return
	}
	for _, s := range sessions {
		fmt.Fprintf(b, "  %s  heat %.2f  %s, %d analysed, %d visits\n", s.ID, s.Heat, plural(len(s.Pages), "page"), s.Analyzed, s.Visits)
		for _, line := range wrap(s.Summary, textWidth-6) {
			b.WriteString("    " + line + "\n")
		}
		if len(s.Keywords) > 0 {
			for _, line := range wrap("keywords: "+strings.Join(s.Keywords, ", "), textWidth-6) {
				b.WriteString("    " + line + "\n")
			}
		}
	}
}

// textWidth is the width the terminal output is wrapped to.
const textWidth = 80

// writeShow prints out for a terminal: aligned columns, long text wrapped.
func writeShow(w io.Writer, out *showOutput) {
	var b strings.Builder
	if out.Revision == 0 {
		fmt.Fprintf(&b, "Memory of %s: no long-term memory saved yet\n", out.Scope.Key())
	} else {
		fmt.Fprintf(&b, "Memory of %s: revision %d, saved %s\n", out.Scope.Key(), out.Revision, fmtTime(out.LastUpdated))
	}
	if out.keyless {
		fmt.Fprintf(&b, "%s stored in %s, every one searchable (no language model is configured; none waits for one)\n", plural(out.StoredTurns, "turn"), plural(out.ThreadCount, "thread"))
	} else {
		fmt.Fprintf(&b, "%s stored in %s, %d not yet reflected in memory\n", plural(out.StoredTurns, "turn"), plural(out.ThreadCount, "thread"), out.PendingTurns)
	}
	if out.Profile != nil {
		b.WriteString("\nProfile\n")
		if len(out.Profile) == 0 {
			b.WriteString("  (empty)\n")
		}
		for _, p := range out.Profile {
			head := "  " + p.Name
			if !p.UpdatedAt.IsZero() {
				head += " (updated " + fmtDate(p.UpdatedAt) + ")"
			}
			b.WriteString(head + "\n")
			for _, line := range wrapParagraphs(p.Summary, textWidth-4) {
				b.WriteString(strings.TrimRight("    "+line, " ") + "\n")
			}
		}
	}
	if out.Facts != nil {
		writeFacts(&b, "Facts", out.Facts, true)
		if len(out.Knowledge) > 0 {
			writeFacts(&b, "User knowledge", out.Knowledge, false)
		}
		if len(out.AssistantKnowledge) > 0 {
			writeFacts(&b, "Assistant knowledge", out.AssistantKnowledge, false)
		}
	}
	if out.Sessions != nil {
		writeSessions(&b, out.Sessions)
	}
	if out.Usage != nil {
		writeUsage(&b, *out.Usage)
	}
	if out.Threads != nil {
		fmt.Fprintf(&b, "\nThreads (%d)\n", len(out.Threads))
		rows := [][]string{{"THREAD", "TURNS", "PENDING", "FIRST", "LAST"}}
		if out.keyless {
			rows[0] = slices.Delete(rows[0], 2, 3)
		}
		for _, t := range out.Threads {
			row := []string{t.ThreadID, strconv.Itoa(t.Turns), strconv.Itoa(t.Pending), fmtMinute(t.First), fmtMinute(t.Last)}
			if out.keyless {
				row = slices.Delete(row, 2, 3)
			}
			rows = append(rows, row)
		}
		writeTable(&b, rows, "  ")
	}
	io.WriteString(w, b.String())
}

// writeFacts prints a list of facts as a table whose last column, the
// content, is wrapped; a correction's "avoid" note follows its content.
func writeFacts(b *strings.Builder, title string, facts []memory.Fact, always bool) {
	fmt.Fprintf(b, "\n%s (%d)\n", title, len(facts))
	if len(facts) == 0 {
		if always {
			b.WriteString("  (none)\n")
		}
		return
	}
	writeFactTable(b, facts, nil)
}

// writeFactTable prints facts, with a leading score column when scores is
// not nil.
func writeFactTable(b *strings.Builder, facts []memory.Fact, scores []float64) {
	idW, catW := len("ID"), len("CATEGORY")
	for _, f := range facts {
		idW = max(idW, len(f.ID))
		catW = max(catW, len(f.Category))
	}
	lead, head := "  ", "  "
	if scores != nil {
		head += "SCORE   "
	}
	indent := len(lead) + len(head) - 2 + idW + 2 + catW + 2 + 4 + 2
	width := max(textWidth-indent, 30)
	pad := strings.Repeat(" ", indent)
	fmt.Fprintf(b, "%s%-*s  %-*s  %-4s  %s\n", head, idW, "ID", catW, "CATEGORY", "CONF", "CONTENT")
	for i, f := range facts {
		lines := wrap(f.Content, width)
		if f.SourceError != "" {
			lines = append(lines, wrap("avoid: "+f.SourceError, width)...)
		}
		row := lead
		if scores != nil {
			row += fmt.Sprintf("%.4f  ", scores[i])
		}
		fmt.Fprintf(b, "%s%-*s  %-*s  %.2f  %s\n", row, idW, f.ID, catW, f.Category, f.Confidence, lines[0])
		for _, l := range lines[1:] {
			b.WriteString(pad + l + "\n")
		}
	}
}
