package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"runtime"
	"strings"
	"time"
)

// setupDetails documents mnemo setup.
const setupDetails = `Writes mnemo into the MCP configuration of a host, so that the host starts
this binary by its absolute path (hosts start servers with a minimal PATH)
with an absolute --data-dir. An existing file is merged: other servers and
other keys stay as they are; a file that is not plain JSON (comments,
trailing commas, a syntax error) is refused and left untouched. Before it
changes a file it copies it to FILE.bak-TIMESTAMP, then replaces it
atomically; when the entry is already there it writes nothing.

--npx writes an entry that starts mnemo through the npm launcher, which
needs Node.js but no installed binary: "command" is npx by its absolute
path, "args" are ["-y", "@mnemo-mcp/mnemo@VERSION", "serve", "--data-dir",
DIR] and "env" puts node's directory first on PATH (hosts start servers
with a minimal PATH, where npx and node from nvm or Homebrew are not
found). The version is the one running, so the server does not change
under you; run setup again to move on. On Windows the entry runs plain npx.
It is the default when setup itself runs from the launcher (npx -y
@mnemo-mcp/mnemo setup HOST), whose binary lives in npm's cache.

Hosts and files (--project: the project's own file, in the current
directory or --project-dir):
  claude-desktop  claude_desktop_config.json: macOS ~/Library/Application
                  Support/Claude/, Windows %APPDATA%\Claude\, Linux
                  ~/.config/Claude/; no per-project file
  claude-code     ~/.claude.json (user scope); --project: .mcp.json
  cursor          ~/.cursor/mcp.json; --project: .cursor/mcp.json
  vscode          the user mcp.json (Code/User/ in the settings directory);
                  --project: .vscode/mcp.json, with ${workspaceFolder}/.mnemo
                  as the data directory (VS Code expands it)
  windsurf        ~/.codeium/windsurf/mcp_config.json; no per-project file
With --project the data directory is the project's .mnemo (add .mnemo/ to
the project's .gitignore), unless --data-dir says otherwise.`

// setupHost is an MCP host whose configuration mnemo setup writes.
type setupHost struct {
	name  string
	title string
	// serversKey is the top-level key of the server table. VS Code:
	// "servers", each entry with "type": "stdio" (required; see
	// https://code.visualstudio.com/docs/copilot/reference/mcp-configuration).
	// The others: "mcpServers" (Claude Desktop: modelcontextprotocol.io
	// quickstart; Claude Code: https://code.claude.com/docs/en/mcp, .mcp.json
	// and the user scope in ~/.claude.json; Cursor: https://cursor.com/docs/mcp;
	// Windsurf: https://docs.windsurf.com/windsurf/cascade/mcp).
	serversKey string
	// stdioType: the entry says "type": "stdio" (VS Code requires it;
	// Claude Code writes it itself with 'claude mcp add').
	stdioType bool
	// global is the user-wide file; project the per-project file relative
	// to the project directory, "" when the host has none.
	global  func(goos string, getenv func(string) string) (string, error)
	project string
	// projectVar is the variable the host expands to the project
	// directory in a per-project file, "" when it expands none that mnemo
	// relies on. Only VS Code documents one (${workspaceFolder}); for the
	// others the project's absolute path is written.
	projectVar string
}

// setupHosts are the hosts mnemo setup knows.
var setupHosts = []setupHost{
	{name: "claude-desktop", title: "Claude Desktop", serversKey: "mcpServers", global: claudeDesktopConfig},
	{name: "claude-code", title: "Claude Code", serversKey: "mcpServers", stdioType: true, project: ".mcp.json",
		global: homeFile(".claude.json")},
	{name: "cursor", title: "Cursor", serversKey: "mcpServers", project: filepath.Join(".cursor", "mcp.json"),
		global: homeFile(".cursor", "mcp.json")},
	{name: "vscode", title: "VS Code", serversKey: "servers", stdioType: true, project: filepath.Join(".vscode", "mcp.json"),
		projectVar: "${workspaceFolder}", global: vscodeUserConfig},
	{name: "windsurf", title: "Windsurf", serversKey: "mcpServers", global: homeFile(".codeium", "windsurf", "mcp_config.json")},
}

func lookupSetupHost(name string) *setupHost {
	for i := range setupHosts {
		if setupHosts[i].name == name {
			return &setupHosts[i]
		}
	}
	return nil
}

func setupHostNames() string {
	names := make([]string, len(setupHosts))
	for i, h := range setupHosts {
		names[i] = h.name
	}
	return strings.Join(names, ", ")
}

// homeDir is the user's home directory as getenv tells it.
func homeDir(goos string, getenv func(string) string) (string, error) {
	home := getenv("HOME")
	if goos == "windows" {
		home = getenv("USERPROFILE")
	}
	if home == "" {
		return "", errors.New("no home directory (HOME is not set); name the file with --file")
	}
	return home, nil
}

// homeFile is a file under the home directory.
func homeFile(elem ...string) func(string, func(string) string) (string, error) {
	return func(goos string, getenv func(string) string) (string, error) {
		home, err := homeDir(goos, getenv)
		if err != nil {
			return "", err
		}
		return filepath.Join(append([]string{home}, elem...)...), nil
	}
}

// configDir is the platform's per-user application settings directory:
// %APPDATA%, ~/Library/Application Support, or $XDG_CONFIG_HOME
// (~/.config).
func configDir(goos string, getenv func(string) string) (string, error) {
	if goos == "windows" {
		if d := getenv("APPDATA"); d != "" {
			return d, nil
		}
	}
	if goos != "windows" && goos != "darwin" {
		if d := getenv("XDG_CONFIG_HOME"); filepath.IsAbs(d) {
			return d, nil
		}
	}
	home, err := homeDir(goos, getenv)
	if err != nil {
		return "", err
	}
	switch goos {
	case "windows":
		return filepath.Join(home, "AppData", "Roaming"), nil
	case "darwin":
		return filepath.Join(home, "Library", "Application Support"), nil
	}
	return filepath.Join(home, ".config"), nil
}

func claudeDesktopConfig(goos string, getenv func(string) string) (string, error) {
	d, err := configDir(goos, getenv)
	if err != nil {
		return "", err
	}
	return filepath.Join(d, "Claude", "claude_desktop_config.json"), nil
}

func vscodeUserConfig(goos string, getenv func(string) string) (string, error) {
	d, err := configDir(goos, getenv)
	if err != nil {
		return "", err
	}
	return filepath.Join(d, "Code", "User", "mcp.json"), nil
}

// executable is the absolute path of the running binary, symlinks
// resolved; a variable so that tests can name another.
var executable = func() (string, error) {
	exe, err := os.Executable()
	if err != nil {
		return "", err
	}
	return filepath.EvalSymlinks(exe)
}

// runSetup is "mnemo setup HOST".
func runSetup(_ context.Context, c *call) int {
	if len(c.args.positional) != 1 {
		return c.fail(exitUsage, "name the host: mnemo setup HOST, one of %s", setupHostNames())
	}
	h := lookupSetupHost(c.args.positional[0])
	if h == nil {
		hint := ""
		if name := suggestWord(c.args.positional[0], strings.Split(setupHostNames(), ", ")); name != "" {
			hint = fmt.Sprintf("did you mean '%s'? ", name)
		}
		return c.fail(exitUsage, "unknown host %q; %suse one of %s", c.args.positional[0], hint, setupHostNames())
	}
	project := c.args.flag("project") || c.args.has("project-dir")
	if project && h.project == "" {
		return c.fail(exitUsage, "%s has no per-project configuration; leave out --project (the data directory can still be chosen with --data-dir)", h.title)
	}
	// From the npm launcher this binary lives in npm's cache, which npm may
	// clear: the host is given the npx command instead of its path.
	fromLauncher := c.getenv(launcherEnv) != ""
	npx := c.args.flag("npx") || fromLauncher
	if npx && !c.args.flag("npx") {
		fmt.Fprintf(c.stderr, "running from the npm launcher: writing an npx entry, since this binary lives in npm's cache\n")
	}
	var exe string
	var err error
	if !npx {
		if exe, err = executable(); err != nil {
			return c.fail(exitError, "find this binary: %v", err)
		}
	}
	name := c.args.str("name")
	if name == "" {
		name = "mnemo"
	}

	dataDir := c.cfg.DataDir
	var file string
	if project {
		dir := c.args.str("project-dir")
		if dir == "" {
			dir = "."
		}
		if dir, err = filepath.Abs(dir); err != nil {
			return c.fail(exitError, "%v", err)
		}
		if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
			return c.fail(exitUsage, "project directory %s is not a directory", dir)
		}
		file = filepath.Join(dir, h.project)
		if _, given := c.cfg.origin["data_dir"]; !given {
			dataDir = filepath.Join(dir, ".mnemo")
			if h.projectVar != "" {
				dataDir = h.projectVar + "/.mnemo"
			}
		}
	} else if file, err = h.global(runtime.GOOS, c.getenv); err != nil {
		return c.fail(exitError, "%v", err)
	}
	if f := c.args.str("file"); f != "" {
		if file, err = filepath.Abs(f); err != nil {
			return c.fail(exitError, "%v", err)
		}
	}

	if file, err = setupTarget(file, runtime.GOOS, c.getenv); err != nil {
		return c.fail(exitError, "%v", err)
	}
	entry := setupEntry(h, exe, dataDir)
	if npx {
		l := launchNpx(runtime.GOOS, c.getenv, isExecutable)
		entry = npxEntry(h, l, dataDir)
		for _, note := range l.notes {
			fmt.Fprintf(c.stderr, "the entry %s\n", note)
		}
	}
	snippet, _ := json.MarshalIndent(map[string]any{h.serversKey: map[string]serverEntry{name: entry}}, "", "  ")
	if c.args.flag("print") {
		fmt.Fprintf(c.stdout, "%s\n", snippet)
		return exitOK
	}
	res, err := mergeSetup(file, h.serversKey, name, entry)
	if errors.Is(err, errJSONC) {
		c.fail(exitError, "%v", err)
		fmt.Fprintf(c.stderr, "add the entry by hand (it is what 'mnemo setup %s%s --print' prints):\n%s\n", h.name, printFlags(c), snippet)
		return exitError
	}
	if err != nil {
		return c.fail(exitError, "%v", err)
	}
	switch {
	case res.unchanged:
		fmt.Fprintf(c.stdout, "%s is already set up in %s: server %q runs %s; nothing written\n", h.title, file, name, entry.Command)
		return exitOK
	case c.args.flag("dry-run"):
		fmt.Fprintf(c.stdout, "would %s server %q in %s (nothing written; run without --dry-run to write it):\n", res.verb(), name, file)
		if res.old != nil {
			fmt.Fprintf(c.stdout, "\n- %s\n", bytes.ReplaceAll(res.old, []byte("\n"), []byte("\n- ")))
			fmt.Fprintf(c.stdout, "+ %s\n", bytes.ReplaceAll(res.newEntry, []byte("\n"), []byte("\n+ ")))
		}
		fmt.Fprintf(c.stdout, "\n%s", res.data)
		return exitOK
	}
	backup, err := writeSetup(file, res, time.Now())
	if err != nil {
		return c.fail(exitError, "%v", err)
	}
	done := "added"
	if res.old != nil {
		done = "replaced"
	}
	fmt.Fprintf(c.stdout, "%s server %q in %s: %s %s\n", done, name, file, entry.Command, strings.Join(entry.Args, " "))
	if backup != "" {
		fmt.Fprintf(c.stdout, "the previous file is in %s\n", backup)
	}
	if project {
		fmt.Fprintln(c.stdout, "memory of this project is kept in its .mnemo directory: add .mnemo/ to the project's .gitignore")
		if h.projectVar == "" {
			fmt.Fprintf(c.stdout, "%s holds this machine's paths; each user of the project runs mnemo setup %s --project\n", h.project, h.name)
		}
	}
	fmt.Fprintf(c.stdout, "restart %s (or reload its MCP servers) to start mnemo\n", h.title)
	return exitOK
}

// serverEntry is a stdio server in a host's configuration.
type serverEntry struct {
	Type    string            `json:"type,omitempty"`
	Command string            `json:"command"`
	Args    []string          `json:"args"`
	Env     map[string]string `json:"env,omitempty"`
}

// setupEntry is the server entry of h: the binary by its absolute path,
// serving with an absolute data directory.
func setupEntry(h *setupHost, exe, dataDir string) serverEntry {
	e := serverEntry{Command: exe, Args: []string{"serve", "--data-dir", dataDir}}
	if h.stdioType {
		e.Type = "stdio"
	}
	return e
}

// npxEntry is the server entry of h that starts mnemo through the npm
// launcher as l says, serving with an absolute data directory.
func npxEntry(h *setupHost, l npxLaunch, dataDir string) serverEntry {
	e := serverEntry{Command: l.command, Args: []string{"-y", l.pkg, "serve", "--data-dir", dataDir}}
	if l.path != "" {
		e.Env = map[string]string{"PATH": l.path}
	}
	if h.stdioType {
		e.Type = "stdio"
	}
	return e
}

// npxLaunch is how a host's entry starts mnemo through npx.
type npxLaunch struct {
	command string   // npx by its absolute path, or "npx"
	pkg     string   // the package, pinned (@mnemo-mcp/mnemo@1.2.3) when the version is known
	path    string   // the PATH the entry gives the server, "" for the host's own
	notes   []string // why, for the person running setup
}

// releaseVersionRE is a version npm accepts, as the release assembles it.
var releaseVersionRE = regexp.MustCompile(`^[0-9]+\.[0-9]+\.[0-9]+(-[0-9A-Za-z.-]+)?$`)

// launchNpx works out the npx entry from what the npm launcher said
// (launcherEnv and friends) or, without it, from the PATH. Hosts start
// servers with a minimal PATH (Claude Desktop on macOS: /usr/bin:/bin),
// where an npx from nvm or Homebrew is not found, and npx's own script
// needs node on the PATH: the entry names npx by its absolute path and
// puts node's directory first on its PATH. The package is pinned to the
// version that runs now, so that the server does not change under the
// user; setup run again moves it on.
func launchNpx(goos string, getenv func(string) string, isExec func(string) bool) npxLaunch {
	l := npxLaunch{command: "npx", pkg: npmPackage}
	v := getenv(launcherVersionEnv)
	if v == "" || v == "0.0.0" {
		v = strings.TrimPrefix(releaseVersion, "v")
	}
	if releaseVersionRE.MatchString(v) && v != "0.0.0" {
		l.pkg += "@" + v
		l.notes = append(l.notes, fmt.Sprintf("pinned to %s, the version running now, so that it does not change under you: run setup again to move to a newer one", l.pkg))
	} else {
		l.notes = append(l.notes, fmt.Sprintf("%s is not pinned to a version (this build has none): npx runs the newest published one", npmPackage))
	}
	if goos == "windows" {
		// A host on Windows starts npx from the user's PATH, and npx.cmd,
		// a batch file, cannot be started by its path without a shell.
		return l
	}
	npx, node := getenv(launcherNpxEnv), getenv(launcherNodeEnv)
	if !filepath.IsAbs(npx) {
		npx = lookPath(getenv("PATH"), "npx", isExec)
		node = ""
	}
	if npx == "" {
		l.notes = append(l.notes, "npx was not found: the entry runs plain npx, which the host must find on its own PATH")
		return l
	}
	if !filepath.IsAbs(node) {
		node = filepath.Join(filepath.Dir(npx), "node")
	}
	l.command = npx
	l.path = joinPath(filepath.Dir(node), filepath.Dir(npx), "/usr/local/bin", "/usr/bin", "/bin")
	l.notes = append(l.notes, fmt.Sprintf("runs %s by its absolute path, with node's directory on its PATH: hosts start servers with a minimal PATH where npx and node are often not found (Node.js from nvm or Homebrew); run setup again after changing Node.js versions", npx))
	return l
}

// isExecutable reports whether path is a file someone may execute.
func isExecutable(path string) bool {
	fi, err := os.Stat(path)
	return err == nil && fi.Mode().IsRegular() && fi.Mode().Perm()&0o111 != 0
}

// setupResult is a merged configuration file.
type setupResult struct {
	existed   bool        // the file existed
	mode      fs.FileMode // its permissions, kept
	unchanged bool        // the entry was already there: nothing to write
	old       []byte      // the entry replaced, indented; nil when added
	newEntry  []byte      // the new entry, indented
	data      []byte      // the whole new file
}

func (r *setupResult) verb() string {
	if r.old != nil {
		return "replace"
	}
	return "add"
}

// member is one key of a JSON object, in file order.
type member struct {
	key   string
	value json.RawMessage
}

// parseObject reads a JSON object, keeping its keys in order.
func parseObject(data []byte) ([]member, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	tok, err := dec.Token()
	if err != nil {
		return nil, err
	}
	if d, ok := tok.(json.Delim); !ok || d != '{' {
		return nil, errors.New("it is not a JSON object")
	}
	var out []member
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, err
		}
		key, _ := tok.(string)
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return nil, err
		}
		out = append(out, member{key, v})
	}
	if _, err := dec.Token(); err != nil {
		return nil, err
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, errors.New("there is more after the JSON object")
	}
	return out, nil
}

// encodeObject writes members as an indented JSON object.
func encodeObject(ms []member, indent string) ([]byte, error) {
	if len(ms) == 0 {
		return []byte("{}"), nil
	}
	var b bytes.Buffer
	b.WriteString("{\n")
	for i, m := range ms {
		key, _ := json.Marshal(m.key)
		var v bytes.Buffer
		if err := json.Indent(&v, m.value, indent+"  ", "  "); err != nil {
			return nil, err
		}
		fmt.Fprintf(&b, "%s  %s: %s", indent, key, v.Bytes())
		if i < len(ms)-1 {
			b.WriteString(",")
		}
		b.WriteString("\n")
	}
	b.WriteString(indent + "}")
	return b.Bytes(), nil
}

// hasComments reports whether data looks like JSONC: a // or /* outside
// strings, or a comma before a closing bracket.
func hasComments(data []byte) bool {
	inString, escaped := false, false
	lastSig := byte(0)
	for i := 0; i < len(data); i++ {
		ch := data[i]
		if inString {
			switch {
			case escaped:
				escaped = false
			case ch == '\\':
				escaped = true
			case ch == '"':
				inString = false
			}
			continue
		}
		switch {
		case ch == '"':
			inString = true
		case ch == '/' && i+1 < len(data) && (data[i+1] == '/' || data[i+1] == '*'):
			return true
		case (ch == '}' || ch == ']') && lastSig == ',':
			return true
		}
		if ch != ' ' && ch != '\t' && ch != '\n' && ch != '\r' {
			lastSig = ch
		}
	}
	return false
}

// errJSONC is mergeSetup's refusal of a file with comments or trailing
// commas.
var errJSONC = errors.New("has comments or trailing commas (JSONC); setup does not rewrite it, so as not to lose them, and changed nothing")

// printFlags are the flags of c that change the entry setup writes, as a
// command line to print the same entry with --print.
func printFlags(c *call) string {
	var b strings.Builder
	for _, f := range []string{"npx", "project"} {
		if c.args.flag(f) {
			b.WriteString(" --" + f)
		}
	}
	for _, f := range []string{"project-dir", "name"} {
		if v := c.args.str(f); v != "" {
			fmt.Fprintf(&b, " --%s %s", f, shellQuote(v))
		}
	}
	if _, given := c.cfg.origin["data_dir"]; given {
		fmt.Fprintf(&b, " --data-dir %s", shellQuote(c.cfg.DataDir))
	}
	return b.String()
}

// shellQuote is s quoted for a POSIX shell when it needs it.
func shellQuote(s string) string {
	if s != "" && strings.Trim(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_./:@%+=,") == "" {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// mergeSetup reads file (absent: an empty configuration) and puts entry
// under serversKey.name, leaving every other key as it is. A file that is
// not a plain JSON object is refused.
func mergeSetup(file, serversKey, name string, entry serverEntry) (*setupResult, error) {
	res := &setupResult{mode: 0o600}
	data, err := os.ReadFile(file)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		data = nil
	case err != nil:
		return nil, fmt.Errorf("read %s: %w", file, err)
	default:
		res.existed = true
		if fi, err := os.Stat(file); err == nil {
			res.mode = fi.Mode().Perm()
		}
	}
	var top []member
	if len(bytes.TrimSpace(data)) > 0 {
		if top, err = parseObject(data); err != nil {
			if hasComments(data) {
				return nil, fmt.Errorf("%s %w", file, errJSONC)
			}
			return nil, fmt.Errorf("%s is not valid JSON (%v); mnemo setup changed nothing: fix the file or move it aside, then run it again", file, err)
		}
	}
	newEntry, err := json.Marshal(entry)
	if err != nil {
		return nil, err
	}
	var servers []member
	at := -1
	for i, m := range top {
		if m.key == serversKey {
			at = i
			if servers, err = parseObject(m.value); err != nil {
				return nil, fmt.Errorf("%s: %q is not a JSON object (%v); mnemo setup changed nothing", file, serversKey, err)
			}
		}
	}
	replaced := false
	for i, m := range servers {
		if m.key != name {
			continue
		}
		var was, now any
		json.Unmarshal(m.value, &was)
		json.Unmarshal(newEntry, &now)
		if reflect.DeepEqual(was, now) {
			res.unchanged = true
			return res, nil
		}
		var old bytes.Buffer
		json.Indent(&old, m.value, "", "  ")
		res.old = old.Bytes()
		servers[i].value = newEntry
		replaced = true
	}
	if !replaced {
		servers = append(servers, member{name, newEntry})
	}
	serversJSON, err := encodeObject(servers, "")
	if err != nil {
		return nil, err
	}
	if at >= 0 {
		top[at].value = serversJSON
	} else {
		top = append(top, member{serversKey, serversJSON})
	}
	out, err := encodeObject(top, "")
	if err != nil {
		return nil, err
	}
	res.data = append(out, '\n')
	var ne bytes.Buffer
	json.Indent(&ne, newEntry, "", "  ")
	res.newEntry = ne.Bytes()
	return res, nil
}

// writeSetup copies an existing file to FILE.bak-TIMESTAMP, then replaces
// it atomically with res.data. It returns the backup's path.
func writeSetup(file string, res *setupResult, now time.Time) (backup string, err error) {
	dir := filepath.Dir(file)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return "", fmt.Errorf("create %s: %w", dir, err)
	}
	if res.existed {
		old, err := os.ReadFile(file)
		if err != nil {
			return "", fmt.Errorf("read %s: %w", file, err)
		}
		backup = file + ".bak-" + now.UTC().Format("20060102T150405Z")
		if err := atomicWrite(backup, old, res.mode); err != nil {
			return "", fmt.Errorf("back up %s: %w", file, err)
		}
	}
	if err := atomicWrite(file, res.data, res.mode); err != nil {
		return backup, fmt.Errorf("write %s: %w", file, err)
	}
	return backup, nil
}

// atomicWrite replaces path with data: temp file, fsync, rename, fsync
// of the directory.
func atomicWrite(path string, data []byte, mode fs.FileMode) error {
	dir, name := filepath.Split(path)
	f, err := os.CreateTemp(dir, "."+name+".*.tmp")
	if err != nil {
		return err
	}
	tmp := f.Name()
	_, err = f.Write(data)
	if err == nil {
		err = f.Chmod(mode)
	}
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp, path)
	}
	if err != nil {
		os.Remove(tmp)
		return err
	}
	if d, err := os.Open(dir); err == nil {
		d.Sync()
		d.Close()
	}
	return nil
}

// setupTarget is the file setup writes for file: file itself, or, when it
// is a symbolic link (a host config kept with the dotfiles), the file it
// points to, so that the change reaches it instead of replacing the link
// with a plain file. A link that leads out of the home directory, or to
// nothing, is refused: setup writes only the user's own files.
func setupTarget(file, goos string, getenv func(string) string) (string, error) {
	fi, err := os.Lstat(file)
	if err != nil || fi.Mode()&fs.ModeSymlink == 0 {
		return file, nil // missing (created) or a plain file
	}
	target, err := filepath.EvalSymlinks(file)
	if err != nil {
		return "", fmt.Errorf("%s is a symbolic link to a file that cannot be reached (%v); fix the link or name the file to change with --file", file, err)
	}
	home, err := homeDir(goos, getenv)
	if err == nil {
		home, err = filepath.EvalSymlinks(home)
	}
	if err != nil {
		return "", fmt.Errorf("%s is a symbolic link and the home directory is not known, so setup will not write through it; name the file to change with --file", file)
	}
	if rel, err := filepath.Rel(home, target); err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return "", fmt.Errorf("%s is a symbolic link to %s, outside the home directory %s; setup writes only files of your home: change that file yourself or name it with --file", file, target, home)
	}
	return target, nil
}
