package cli

import (
	"bytes"
	"io"
	"path/filepath"
	"slices"
	"strings"
)

// npmPackage is the npm launcher's package: "npx -y npmPackage" runs
// this platform's mnemo binary from its optional dependencies.
const npmPackage = "@mnemo-mcp/mnemo"

// npxCommand is how a user runs mnemo through npx, without installing it.
const npxCommand = "npx -y " + npmPackage

// What the npm launcher (npm/mnemo/bin/mnemo.js) tells the binary it
// starts, in its environment.
const (
	// launcherEnv is "npx" when npx ran the launcher, "npm" when it runs
	// as an installed package's bin; empty when no launcher started mnemo.
	launcherEnv = "MNEMO_LAUNCHER"
	// launcherVersionEnv is the launcher package's version.
	launcherVersionEnv = "MNEMO_LAUNCHER_VERSION"
	// launcherNodeEnv and launcherNpxEnv are the absolute paths of the
	// node running the launcher and of the npx beside it ("" when there is
	// none).
	launcherNodeEnv = "MNEMO_LAUNCHER_NODE"
	launcherNpxEnv  = "MNEMO_LAUNCHER_NPX"
)

// invokedAs is the command a user types to run mnemo the way it was run
// this time: "npx -y @mnemo-mcp/mnemo" through npx, "mnemo" otherwise.
func invokedAs(getenv func(string) string) string {
	if getenv(launcherEnv) == "npx" {
		return npxCommand
	}
	return "mnemo"
}

// progWriter writes messages for a person with the commands they name as
// the person runs them. Messages quote a command to type as 'mnemo ...'
// (single quotes, the one convention of every message); progWriter turns
// each into 'PROG ...'. It rewrites within one Write, which fmt and slog
// make per message. It is used on stderr and on the stdout of commands
// that print only messages, never on output that carries memory (show,
// search, export) or the MCP channel.
type progWriter struct {
	w    io.Writer
	prog string
}

// withProg is w, rewritten for prog when prog is not plain "mnemo".
func withProg(w io.Writer, prog string) io.Writer {
	if _, done := w.(*progWriter); done || prog == "mnemo" {
		return w
	}
	return &progWriter{w: w, prog: prog}
}

func (p *progWriter) Write(b []byte) (int, error) {
	if !bytes.Contains(b, []byte("'mnemo ")) {
		return p.w.Write(b)
	}
	if _, err := p.w.Write(bytes.ReplaceAll(b, []byte("'mnemo "), []byte("'"+p.prog+" "))); err != nil {
		return 0, err
	}
	return len(b), nil
}

// lookPath finds an executable called name in the directories of path
// (the PATH a getenv returned), "" when none holds one. It reads no
// environment of its own, so that tests can give it theirs.
func lookPath(path, name string, isExec func(string) bool) string {
	for _, dir := range filepath.SplitList(path) {
		if dir == "" || !filepath.IsAbs(dir) {
			continue
		}
		if p := filepath.Join(dir, name); isExec(p) {
			return p
		}
	}
	return ""
}

// joinPath is a PATH of dirs, each once, in order.
func joinPath(dirs ...string) string {
	var out []string
	for _, d := range dirs {
		if d != "" && !slices.Contains(out, d) {
			out = append(out, d)
		}
	}
	return strings.Join(out, string(filepath.ListSeparator))
}
