package cli

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"strconv"
	"strings"

	"github.com/mnemo-mcp/mnemo/memory"
	"github.com/mnemo-mcp/mnemo/memory/files"
	"github.com/mnemo-mcp/mnemo/memory/tiktoken"
)

// This file holds what the data-directory commands (show, search, export,
// import, doctor) share: their argument parsing, how they open the
// configured data directory, and how they print.

// cliArgs are a command's own flags and positional arguments; the settings
// flags (--data-dir DIR, ...) are left for loadConfig.
type cliArgs struct {
	values     map[string]string
	positional []string
}

func (a cliArgs) has(name string) bool   { _, ok := a.values[name]; return ok }
func (a cliArgs) str(name string) string { return a.values[name] }
func (a cliArgs) flag(name string) bool  { return a.has(name) }
func (a cliArgs) int(name string, def int) (int, error) {
	v, ok := a.values[name]
	if !ok {
		return def, nil
	}
	n, err := strconv.Atoi(v)
	if err != nil {
		return 0, fmt.Errorf("--%s %q is not a whole number", name, v)
	}
	return n, nil
}

// parseCLI takes the flags named in own out of args (true: the flag takes
// a value) and the positional arguments; everything else is a settings flag
// with its value, returned for loadConfig. Flags may be written -x, --x,
// --x=v or --x v.
func parseCLI(args []string, own map[string]bool) (cliArgs, []string, error) {
	a := cliArgs{values: map[string]string{}}
	var rest []string
	for i := 0; i < len(args); i++ {
		arg := args[i]
		if arg == "--" {
			a.positional = append(a.positional, args[i+1:]...)
			break
		}
		if !strings.HasPrefix(arg, "-") || arg == "-" {
			a.positional = append(a.positional, arg)
			continue
		}
		name, value, hasValue := strings.Cut(strings.TrimLeft(arg, "-"), "=")
		takesValue, mine := own[name]
		if !mine {
			rest = append(rest, arg)
			// Every setting flag takes a value; --help and -h do not.
			if !hasValue && name != "help" && name != "h" && i+1 < len(args) {
				i++
				rest = append(rest, args[i])
			}
			continue
		}
		switch {
		case !takesValue && hasValue:
			return a, nil, fmt.Errorf("flag --%s takes no value", name)
		case !takesValue:
		case hasValue:
		case i+1 < len(args):
			i++
			value = args[i]
		default:
			return a, nil, fmt.Errorf("flag --%s needs a value", name)
		}
		a.values[name] = value
	}
	return a, rest, nil
}

// cliEnv is what a data-directory command runs with.
type cliEnv struct {
	cmd    string
	cfg    *Config
	log    *slog.Logger
	args   cliArgs
	stdout io.Writer
	stderr io.Writer
}

// loadCLI parses a data-directory command's arguments and the settings.
// When it returns ok false, the command is over with exit code code.
func loadCLI(cmd string, args []string, own map[string]bool, getenv func(string) string, stdout, stderr io.Writer) (e *cliEnv, code int, ok bool) {
	a, rest, err := parseCLI(args, own)
	if err != nil {
		fmt.Fprintf(stderr, "mnemo %s: %v\nRun 'mnemo help' for usage.\n", cmd, err)
		return nil, exitUsage, false
	}
	cfg, err := loadConfig(rest, getenv, stderr)
	switch {
	case errors.Is(err, errHelp):
		writeHelp(stdout)
		return nil, exitOK, false
	case errors.Is(err, errUsage):
		return nil, exitUsage, false
	case err != nil:
		fmt.Fprintf(stderr, "mnemo %s: %v\n", cmd, err)
		return nil, exitUsage, false
	}
	if cfg.DataDir == "" {
		fmt.Fprintf(stderr, "mnemo %s: %v\n", cmd, errNoDataDir)
		return nil, exitUsage, false
	}
	level := cfg.LogLevel
	if _, set := cfg.origin["log_level"]; !set {
		level = slog.LevelWarn // keep command output readable
	}
	log := slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: level}))
	return &cliEnv{cmd: cmd, cfg: cfg, log: log, args: a, stdout: stdout, stderr: stderr}, exitOK, true
}

// fail reports err on stderr and returns code.
func (e *cliEnv) fail(code int, format string, args ...any) int {
	fmt.Fprintf(e.stderr, "mnemo %s: %s\n", e.cmd, fmt.Sprintf(format, args...))
	return code
}

// scope is the scope named by --user (default: the configured user_id)
// and --agent.
func (e *cliEnv) scope() (memory.Scope, error) {
	sc := memory.Scope{UserID: e.args.str("user"), AgentName: e.args.str("agent")}
	if sc.UserID == "" {
		sc.UserID = e.cfg.Memory.UserID
	}
	return sc, sc.Validate()
}

// openStore opens the configured data directory with the same store and
// locking as the server.
// storeService is a memory service over an open store for a command that
// works on the data directory without a server (no model; the token
// encoding loads only if something counts tokens).
func storeService(cfg *Config, store memory.Store, log *slog.Logger) (*memory.Service, error) {
	tokens, err := tiktoken.NewLazy(cfg.Memory.TokenEncoding)
	if err != nil {
		return nil, err
	}
	return memory.NewService(cfg.Memory, store, tokens, memory.WithLogger(log))
}

func (e *cliEnv) openStore() (*files.Store, error) {
	s, err := files.Open(e.cfg.DataDir, files.WithLogger(e.log), files.WithVersions(e.cfg.Memory.MemoryVersions))
	if err != nil {
		return nil, fmt.Errorf("open data dir %s: %w", e.cfg.DataDir, err)
	}
	return s, nil
}

// writeJSON prints v as indented JSON on stdout.
func writeJSON(e *cliEnv, v any) int {
	data, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return e.fail(exitError, "encode JSON: %v", err)
	}
	e.stdout.Write(append(data, '\n'))
	return exitOK
}
