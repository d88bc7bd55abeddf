package testutil

import (
	"fmt"
	"io"
	"os"
	"sort"
	"strings"
	"sync"
	"testing"
)

// missing counts the tests skipped for want of something, by what is
// missing, with the reason and how to get it.
var missing = struct {
	sync.Mutex
	by map[string]*missingThing
}{by: map[string]*missingThing{}}

type missingThing struct {
	n      int
	reason string
	enable string
}

// SkipMissing skips tb because need (such as "PostgreSQL") is not on this
// machine, for reason, or fails it when the environment has CI=true, since
// CI must run every test. enable says how to get need; ReportSkips sums
// the skips up in one line.
func SkipMissing(tb testing.TB, need, reason, enable string) {
	tb.Helper()
	msg := fmt.Sprintf("%s not available: %s; to run this test, %s", need, reason, enable)
	if os.Getenv("CI") == "true" {
		tb.Fatal(msg + " (CI=true: these tests must run)")
		return
	}
	missing.Lock()
	m := missing.by[need]
	if m == nil {
		m = &missingThing{reason: reason, enable: enable}
		missing.by[need] = m
	}
	m.n++
	missing.Unlock()
	tb.Skip(msg)
}

// SkipSummary is the one line ReportSkips prints, "" when nothing was
// skipped.
func SkipSummary() string {
	missing.Lock()
	defer missing.Unlock()
	needs := make([]string, 0, len(missing.by))
	for n := range missing.by {
		needs = append(needs, n)
	}
	sort.Strings(needs)
	parts := make([]string, 0, len(needs))
	for _, n := range needs {
		m := missing.by[n]
		parts = append(parts, fmt.Sprintf("%d test(s) needing %s (%s; to run them, %s)", m.n, n, m.reason, m.enable))
	}
	if len(parts) == 0 {
		return ""
	}
	return "SKIPPED " + strings.Join(parts, ", ")
}

// ReportSkips prints SkipSummary, if any, for TestMain to call after
// m.Run. go test ./... shows a passing package's output only with -v, so
// without -v the line goes to the terminal (/dev/tty) when there is one;
// it goes to stdout too, for -v, go test run in the package's directory
// and go test -json.
func ReportSkips() { reportSkips(os.Stdout) }

// reportSkips writes the summary to w (the test binary's stdout, which go
// test reads; a test binary is never an MCP server) and to the terminal.
func reportSkips(w io.Writer) {
	line := SkipSummary()
	if line == "" {
		return
	}
	pkg := ""
	if wd, err := os.Getwd(); err == nil {
		pkg = wd + ": "
	}
	fmt.Fprintln(w, line)
	if testing.Verbose() {
		return
	}
	if tty, err := os.OpenFile("/dev/tty", os.O_WRONLY, 0); err == nil {
		io.WriteString(tty, pkg+line+"\n")
		tty.Close()
	}
}
