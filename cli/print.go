package cli

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"golang.org/x/term"

	"github.com/mnemo-mcp/mnemo/memory"
	"github.com/mnemo-mcp/mnemo/memory/engine"
)

// The printers every command shares.

// writeJSON prints v as indented JSON on stdout.
func writeJSON(c *call, v any) int {
	data, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return c.fail(exitError, "encode JSON: %v", err)
	}
	c.stdout.Write(append(data, '\n'))
	return exitOK
}

// plural is "1 turn", "2 turns".
func plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return strconv.Itoa(n) + " " + noun + "s"
}

// writeTable prints rows with columns aligned by the widest cell.
func writeTable(b *strings.Builder, rows [][]string, indent string) {
	var widths []int
	for _, r := range rows {
		for i, c := range r {
			if i >= len(widths) {
				widths = append(widths, 0)
			}
			widths[i] = max(widths[i], len([]rune(c)))
		}
	}
	for _, r := range rows {
		line := indent
		for i, c := range r {
			if i < len(r)-1 {
				c += strings.Repeat(" ", widths[i]-len([]rune(c))+2)
			}
			line += c
		}
		b.WriteString(strings.TrimRight(line, " ") + "\n")
	}
}

// wrapParagraphs wraps text to width, keeping its line breaks.
func wrapParagraphs(text string, width int) []string {
	var out []string
	for _, para := range strings.Split(strings.TrimSpace(text), "\n") {
		out = append(out, wrap(para, width)...)
	}
	return out
}

// fmtDate is the day of t (UTC).
func fmtDate(t time.Time) string { return t.UTC().Format("2006-01-02") }

// fmtMinute is t to the minute (UTC), or "-".
func fmtMinute(t time.Time) string {
	if t.IsZero() {
		return "-"
	}
	return t.UTC().Format("2006-01-02 15:04")
}

// agentFlag is " --agent A" for a scope of an agent, else "", for the
// commands a message suggests.
func agentFlag(scope memory.Scope) string {
	if scope.AgentName == "" {
		return ""
	}
	return " --agent " + scope.AgentName
}

// fmtTime is t in RFC 3339 (UTC), or "never".
func fmtTime(t time.Time) string {
	if t.IsZero() {
		return "never"
	}
	return t.UTC().Format(time.RFC3339)
}

// clip shortens s to n runes, marking the cut with an ellipsis.
func clip(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n-1]) + "…"
}

// orNone is s, or "nothing" when it is empty.
func orNone(s string) string {
	if s == "" {
		return "nothing"
	}
	return s
}

// isTerminal reports whether f is an *os.File (or anything with a file
// descriptor) open on a terminal. It asks the terminal driver
// (golang.org/x/term: TCGETS on Unix, GetConsoleMode on Windows), so
// /dev/null, a character device but no terminal, is not one; neither are
// pipes, files and in-memory writers.
func isTerminal(f any) bool {
	fd, ok := f.(interface{ Fd() uintptr })
	return ok && term.IsTerminal(int(fd.Fd()))
}

// progress prints how far a long task has got, on one line it rewrites,
// only when its writer (stderr, never stdout) is a terminal: piped or
// logged output gets no progress lines.
type progress struct {
	w     io.Writer
	on    bool
	label string
	total int
	now   func() time.Time
	last  time.Time
	shown bool
}

// progressEvery is how often the progress line is redrawn at most.
const progressEvery = 200 * time.Millisecond

// newProgress is a progress line for a task of total steps (0: unknown),
// printed on w if w is a terminal.
func newProgress(w io.Writer, label string, total int) *progress {
	return &progress{w: w, on: isTerminal(w), label: label, total: total, now: time.Now}
}

// set reports that n steps are done; the line is redrawn at most every
// progressEvery, and always at the last step.
func (p *progress) set(n int) {
	if !p.on {
		return
	}
	now := p.now()
	if p.shown && now.Sub(p.last) < progressEvery && n != p.total {
		return
	}
	p.last, p.shown = now, true
	if p.total > 0 {
		fmt.Fprintf(p.w, "\r\033[K%s %d/%d (%d%%)", p.label, n, p.total, n*100/p.total)
	} else {
		fmt.Fprintf(p.w, "\r\033[K%s %d", p.label, n)
	}
}

// done clears the progress line, so what follows starts on a clean line.
func (p *progress) done() {
	if p.on && p.shown {
		fmt.Fprint(p.w, "\r\033[K")
		p.shown = false
	}
}

// cliMessage is the message of an error of the memory service, said for
// the command line: the service writes for the host's model, naming tool
// arguments and tools (fact_ids, list_memories); here they are the flags
// and commands that do the same.
func cliMessage(err error, scope memory.Scope) string {
	who := "--user " + scope.UserID + agentFlag(scope)
	msg := err.Error()
	if errors.Is(err, memory.ErrNotFound) {
		// The store wraps the message in the operation and the file it
		// was on; what was not found is all a user needs.
		if i := strings.Index(msg, memory.ErrNotFound.Error()+": "); i >= 0 {
			msg = msg[i:]
		}
	}
	return strings.NewReplacer(
		"list_memories shows what is stored", "'mnemo show "+who+"' shows the facts and threads, 'mnemo search "+who+" QUERY' the exchanges with their ids",
		"list_memories lists the fact ids", "'mnemo facts list "+who+"' lists the fact ids",
		"list_memories or retrieve_memory show it", "'mnemo facts list "+who+"' shows it",
		"fact_ids:", "--fact:", "turn_ids:", "--turn:", "thread_id:", "--thread:",
		"user_input:", "--input:", "agent_response:", "--reply:",
	).Replace(msg)
}

// loadProgress is a engine.WithProgress option that shows how far a long
// load (indexing a large turn log, rebuilding the mid-term sessions) has
// come on w, when w is a terminal; nothing otherwise.
func loadProgress(w io.Writer) engine.Option {
	var mu sync.Mutex
	lines := map[string]*progress{}
	return engine.WithProgress(func(stage string, done, total int) {
		mu.Lock()
		defer mu.Unlock()
		p := lines[stage]
		if p == nil {
			p = newProgress(w, stage, total)
			lines[stage] = p
		}
		p.set(done)
		if done >= total {
			p.done()
		}
	})
}

// usageRecentDays is how many days "show --usage" lists.
const usageRecentDays = 7

// writeUsage prints a scope's usage: the recent days, newest first, and
// the daily token budget.
func writeUsage(b *strings.Builder, u memory.ScopeUsage) {
	b.WriteString("\nUsage (UTC days, newest first)\n")
	rows := [][]string{{"DAY", "MODEL CALLS", "PROMPT TOKENS", "COMPLETION TOKENS", "FAILED", "EMBEDDING CALLS", "EMBEDDING TOKENS", "DEFERRED"}}
	days := slices.Clone(u.Days)
	if !slices.ContainsFunc(days, func(d memory.UsageDay) bool { return d.Day == u.Today.Day }) {
		days = append(days, u.Today)
	}
	slices.Reverse(days)
	for _, d := range days[:min(len(days), usageRecentDays)] {
		day := d.Day
		if d.Day == u.Today.Day {
			day += " (today)"
		}
		rows = append(rows, []string{day, strconv.Itoa(d.LLMCalls), strconv.Itoa(d.PromptTokens), strconv.Itoa(d.CompletionTokens),
			strconv.Itoa(d.LLMFailures + d.EmbeddingFailures), strconv.Itoa(d.EmbeddingCalls), strconv.Itoa(d.EmbeddingTokens), strconv.Itoa(d.Deferred)})
	}
	writeTable(b, rows, "  ")
	if u.DailyTokenBudget <= 0 {
		fmt.Fprintf(b, "  Daily token budget: unlimited (daily_token_budget = 0); %d model tokens used today.\n", u.Today.Tokens())
	} else {
		fmt.Fprintf(b, "  Daily token budget: %d model tokens; %d used today, %d left.\n", u.DailyTokenBudget, u.Today.Tokens(), max(0, u.DailyTokenBudget-u.Today.Tokens()))
	}
	if u.Deferred != "" {
		b.WriteString("  Extraction is deferred: " + u.Deferred + ".\n")
	} else {
		b.WriteString("  Extraction is not deferred.\n")
	}
}
