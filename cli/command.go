package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"strconv"
	"strings"

	"github.com/mnemo-mcp/mnemo/memory"
)

// Exit codes of Run.
const (
	exitOK    = 0
	exitError = 1 // the command failed at run time
	exitUsage = 2 // bad command line or configuration
)

// command is one row of the command table: what it is called, how it is
// used, the flags of its own and what it needs before it runs.
type command struct {
	name     string
	synopsis []string // usage lines, each after "mnemo "
	summary  string   // what it does, for help
	brief    string   // what it does in a few words, for the short help
	details  string   // more for its own help, printed as written
	flags    []flagSpec
	// maxArgs is the most positional arguments it takes; -1: any number.
	maxArgs int
	// settings: the settings flags (--data-dir DIR, ...) and the
	// configuration apply; without, the command reads no configuration.
	settings bool
	// dataDir: it cannot run without a data directory.
	dataDir bool
	// verbose: it logs at info unless log_level says otherwise; other
	// commands log warnings only, to keep their output readable.
	verbose bool
	// helpSettings: its own help lists every setting (serve, demo: the
	// settings are what they take).
	helpSettings bool
	// configErrors: it runs even when the configuration is invalid, with
	// the error in call.cfgErr (doctor reports it).
	configErrors bool
	// plainOutput: its stdout is messages for a person, never memory or
	// JSON, so the commands they name are named as the user ran mnemo
	// (withProg).
	plainOutput bool
	run         func(ctx context.Context, c *call) int
}

// flagSpec is one flag of a command's own.
type flagSpec struct {
	name  string // without dashes
	value string // the value's shape in help (U, N, FILE); empty: a switch
	doc   string
	// repeat: the flag may be given more than once (--fact ID --fact ID).
	repeat bool
	// optional: a switch that may also be given a value as --name=value
	// (serve --http[=ADDR]).
	optional bool
}

// call is one run of a command: its parsed command line, the loaded
// configuration and where it writes.
type call struct {
	cmd    *command
	prog   string // how the user runs mnemo: "mnemo" or npxCommand (invokedAs)
	cfg    *Config
	cfgErr error // the configuration error, for a configErrors command
	log    *slog.Logger
	args   cliArgs
	getenv func(string) string
	stdin  io.Reader
	stdout io.Writer
	stderr io.Writer
}

// cliArgs are a command's own flags and its positional arguments.
type cliArgs struct {
	values     map[string][]string
	positional []string
}

func (a cliArgs) has(name string) bool  { _, ok := a.values[name]; return ok }
func (a cliArgs) flag(name string) bool { return a.has(name) }

// str is the value of a flag (the last, when it was repeated), or "".
func (a cliArgs) str(name string) string {
	if v := a.values[name]; len(v) > 0 {
		return v[len(v)-1]
	}
	return ""
}

// all is every value of a repeatable flag, in order.
func (a cliArgs) all(name string) []string { return a.values[name] }

func (a cliArgs) int(name string, def int) (int, error) {
	if !a.has(name) {
		return def, nil
	}
	v := a.str(name)
	n, err := strconv.Atoi(v)
	if err != nil {
		return 0, fmt.Errorf("--%s %q is not a whole number", name, v)
	}
	return n, nil
}

// prefix is how the command's messages start: "mnemo show", or "mnemo"
// for serve, the command a host runs without naming it.
func (c *command) prefix() string {
	if c.name == "serve" {
		return "mnemo"
	}
	return "mnemo " + c.name
}

// fail reports a message on stderr and returns code.
func (c *call) fail(code int, format string, args ...any) int {
	fmt.Fprintf(c.stderr, "%s: %s\n", c.cmd.prefix(), fmt.Sprintf(format, args...))
	return code
}

// scope is the scope named by --user (default: the configured user_id)
// and --agent.
func (c *call) scope() (memory.Scope, error) {
	sc := memory.Scope{UserID: c.args.str("user"), AgentName: c.args.str("agent")}
	if sc.UserID == "" {
		sc.UserID = c.cfg.Memory.UserID
	}
	return sc, sc.Validate()
}

// Run is the whole program: it finds the command in args, parses its
// flags and the configuration (read only through getenv), and runs it. It
// returns the exit code.
func Run(ctx context.Context, args []string, getenv func(string) string, stdin io.Reader, stdout, stderr io.Writer) int {
	prog := invokedAs(getenv)
	stderr = withProg(stderr, prog)
	cmd, rest, named, err := findCommand(args)
	if err != nil {
		fmt.Fprintf(stderr, "mnemo: %v\nRun 'mnemo help' for usage.\n", err)
		return exitUsage
	}
	if _, _, help, _ := parseArgs(cmd, rest); help && !named {
		writeShortHelp(withProg(stdout, prog), prog)
		return exitOK
	}
	c, code, ok := prepare(cmd, rest, getenv, stdin, stdout, stderr)
	if !ok {
		return code
	}
	return cmd.run(memory.WithActor(ctx, commandActor(cmd.name)), c)
}

// commandActor is who a command's changes are credited to in the fact
// history. The commands that serve (MCP, the viewer) leave it to the tool,
// the viewer and the updater that make each change.
func commandActor(name string) memory.Actor {
	switch name {
	case "import":
		return memory.ActorImport
	case "serve", "demo", "ui", "bench":
		return ""
	}
	return memory.ActorCLI
}

// findCommand is the command args name, and args without its name. The
// command is the first argument that is neither a flag nor the value of
// a settings flag, so settings may come before it (mnemo --data-dir D
// show); without one it is serve, and named is false.
func findCommand(args []string) (cmd *command, rest []string, named bool, err error) {
	for i := 0; i < len(args); i++ {
		arg := args[i]
		if arg == "--" {
			break
		}
		if arg == "" || arg == "-" || arg[0] != '-' {
			if subs := subcommands(arg); len(subs) > 0 {
				// A group (mnemo facts add): the subcommand is the next
				// argument.
				if i+1 >= len(args) || lookupCommand(arg+" "+args[i+1]) == nil {
					hint := ""
					if i+1 < len(args) {
						if sub := suggestWord(args[i+1], subs); sub != "" {
							hint = fmt.Sprintf("; did you mean 'mnemo %s %s'?", arg, sub)
						}
					}
					return nil, nil, false, fmt.Errorf("%s needs one of: %s%s", arg, strings.Join(subs, ", "), hint)
				}
				return lookupCommand(arg + " " + args[i+1]), append(args[:i:i], args[i+2:]...), true, nil
			}
			cmd := lookupCommand(arg)
			if cmd == nil {
				hint := ""
				if name := suggestWord(arg, commandWords()); name != "" {
					hint = fmt.Sprintf("; did you mean 'mnemo %s'?", name)
				}
				return nil, nil, false, fmt.Errorf("unknown command %q%s", arg, hint)
			}
			return cmd, append(args[:i:i], args[i+1:]...), true, nil
		}
		name, _, hasValue := strings.Cut(strings.TrimLeft(arg, "-"), "=")
		switch {
		case hasValue || name == "help" || name == "h":
		case takesSettingValue(name):
			i++
		case i+1 < len(args) && !strings.HasPrefix(args[i+1], "-") && lookupCommand(args[i+1]) == nil:
			// An unknown flag with what must be its value: the parse
			// of serve's flags reports it.
			i++
		}
	}
	return lookupCommand("serve"), args, false, nil
}

// takesSettingValue reports whether --name is a settings flag, all of
// which take a value.
func takesSettingValue(name string) bool {
	if name == "config" {
		return true
	}
	s := lookupSettingFlag(name)
	return s != nil
}

// lookupSettingFlag is the setting whose flag is --name, if any.
func lookupSettingFlag(name string) *setting {
	for i := range settings {
		if !settings[i].secret && settings[i].flagName() == name {
			return &settings[i]
		}
	}
	return nil
}

// errEmptyValue is the error of a flag given an empty value: an empty id
// or path never means "all" or "the default".
var errEmptyValue = errors.New("is empty")

// parseArgs splits args into the command's own flags, the settings flags
// (returned as --name=value for loadConfig), the positional arguments and
// whether help was asked for. Flags may be written -x, --x, --x=v or
// --x v, before or after positional arguments; "--" ends the flags.
func parseArgs(cmd *command, args []string) (a cliArgs, settingArgs []string, help bool, err error) {
	a.values = map[string][]string{}
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
		takeValue := func() (string, error) {
			if !hasValue {
				if i+1 >= len(args) {
					return "", fmt.Errorf("flag --%s needs a value", name)
				}
				i++
				value = args[i]
			}
			if strings.TrimSpace(value) == "" {
				return "", fmt.Errorf("flag --%s %w; give a value or leave the flag out", name, errEmptyValue)
			}
			return value, nil
		}
		if name == "help" || name == "h" {
			help = true
			continue
		}
		if spec := cmd.flag(name); spec != nil {
			if spec.value == "" {
				if hasValue && !spec.optional {
					return a, nil, false, fmt.Errorf("flag --%s takes no value", name)
				}
				a.values[name] = append(a.values[name], value)
				continue
			}
			v, err := takeValue()
			if err != nil {
				return a, nil, false, err
			}
			if a.has(name) && !spec.repeat {
				return a, nil, false, fmt.Errorf("flag --%s is given twice", name)
			}
			a.values[name] = append(a.values[name], v)
			continue
		}
		if cmd.settings && takesSettingValue(name) {
			if !hasValue {
				if i+1 >= len(args) {
					return a, nil, false, fmt.Errorf("flag --%s needs a value", name)
				}
				i++
				value = args[i]
			}
			settingArgs = append(settingArgs, "--"+name+"="+value)
			continue
		}
		if cmd.settings && lookupSetting(strings.ReplaceAll(name, "-", "_")) != nil {
			return a, nil, false, fmt.Errorf("flag --%s does not exist: setting %s is secret, so it is given only in the environment or the config file", name, strings.ReplaceAll(name, "-", "_"))
		}
		return a, nil, false, fmt.Errorf("unknown flag %s%s", arg, cmd.suggestFlag(name))
	}
	if cmd.maxArgs >= 0 && len(a.positional) > cmd.maxArgs {
		return a, nil, false, fmt.Errorf("unexpected argument %q; usage: mnemo %s", a.positional[cmd.maxArgs], cmd.synopsis[0])
	}
	return a, settingArgs, help, nil
}

// flag is the command's own flag called name, if any.
func (c *command) flag(name string) *flagSpec {
	for i := range c.flags {
		if c.flags[i].name == name {
			return &c.flags[i]
		}
	}
	return nil
}

// suggestFlag proposes the flag a mistyped one probably meant.
func (c *command) suggestFlag(name string) string {
	var names []string
	for _, f := range c.flags {
		names = append(names, f.name)
	}
	if c.settings {
		for i := range settings {
			if !settings[i].secret {
				names = append(names, settings[i].flagName())
			}
		}
	}
	if best := suggestWord(name, names); best != "" {
		return fmt.Sprintf("; did you mean --%s?", best)
	}
	return ""
}

// suggestWord is the word of words that a mistyped one probably meant:
// the nearest within two edits (and fewer edits than its length, so that
// "ui" is not taken for "up"), or "" when none is.
func suggestWord(typed string, words []string) string {
	best, bestDist := "", 3
	for _, w := range words {
		if d := editDistance(typed, w); d < bestDist && d < len(w) {
			best, bestDist = w, d
		}
	}
	return best
}

// prepare parses a command's arguments and loads the configuration, with
// one error policy and one log-level policy for every command. When it
// returns ok false the command is over with exit code code.
func prepare(cmd *command, args []string, getenv func(string) string, stdin io.Reader, stdout, stderr io.Writer) (c *call, code int, ok bool) {
	prog := invokedAs(getenv)
	if cmd.plainOutput {
		stdout = withProg(stdout, prog)
	}
	c = &call{cmd: cmd, prog: prog, getenv: getenv, stdin: stdin, stdout: stdout, stderr: withProg(stderr, prog)}
	a, settingArgs, help, err := parseArgs(cmd, args)
	if help {
		writeCommandHelp(withProg(stdout, prog), cmd, prog)
		return nil, exitOK, false
	}
	if err != nil {
		fmt.Fprintf(c.stderr, "%s: %v\nRun 'mnemo help %s' for usage.\n", cmd.prefix(), err, cmd.name)
		return nil, exitUsage, false
	}
	c.args = a
	if cmd.name != "serve" {
		// stdout is the MCP channel of serve; every other command prints
		// for a person or a script, never raw control characters.
		c.stdout = &safeWriter{w: stdout, json: cmd.name == "export" || a.flag("json")}
	}
	c.log = slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	if !cmd.settings {
		return c, exitOK, true
	}
	cfg, err := loadConfig(settingArgs, getenv, c.stderr)
	switch {
	case errors.Is(err, errUsage):
		return nil, exitUsage, false
	case err != nil && cmd.configErrors:
		c.cfgErr = err
		return c, exitOK, true
	case err != nil:
		return nil, c.fail(exitUsage, "%v", err), false
	}
	if cmd.dataDir && cfg.DataDir == "" && cfg.Storage == "" {
		return nil, c.fail(exitUsage, "%v", errNoDataDir), false
	}
	c.cfg = cfg
	level := slog.LevelWarn
	if _, set := cfg.origin["log_level"]; set || cmd.verbose {
		level = cfg.LogLevel
	}
	c.log = slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: level}))
	return c, exitOK, true
}

// scopesOf is the stored scopes that want names: want itself, and for a
// user without an agent every agent of the user too (a user's memory
// includes the agents' memories of the user).
func scopesOf(stored []memory.Scope, want memory.Scope) []memory.Scope {
	var out []memory.Scope
	for _, sc := range stored {
		if sc == want || want.AgentName == "" && sc.UserID == want.UserID {
			out = append(out, sc)
		}
	}
	return out
}
