package cli

import (
	"strings"
	"testing"

	"github.com/mnemo-mcp/mnemo/memory"
)

// TestCommandHelp checks that every command has help of its own, reached
// by --help, -h and "mnemo help CMD", that lists its own flags and not the
// whole settings table (except serve and demo, which take the settings).
func TestCommandHelp(t *testing.T) {
	for _, cmd := range commands {
		t.Run(cmd.name, func(t *testing.T) {
			var outs []string
			for _, args := range [][]string{{cmd.name, "--help"}, {cmd.name, "-h"}, {"help", cmd.name}} {
				code, out, errOut := runEnv(t, baseEnv(nil), args...)
				if code != exitOK || errOut != "" {
					t.Fatalf("%q = %d, stderr %q", args, code, errOut)
				}
				outs = append(outs, out)
			}
			if outs[0] != outs[1] || outs[0] != outs[2] {
				t.Errorf("--help, -h and help %s differ", cmd.name)
			}
			help := outs[0]
			if !strings.Contains(help, "mnemo "+cmd.synopsis[0]) {
				t.Errorf("help of %s lacks its usage %q:\n%s", cmd.name, cmd.synopsis[0], help)
			}
			for _, f := range cmd.flags {
				if !strings.Contains(help, "--"+f.name) {
					t.Errorf("help of %s lacks its flag --%s", cmd.name, f.name)
				}
			}
			whole := strings.Contains(help, "\n  debounce_seconds\n")
			if whole != cmd.helpSettings {
				t.Errorf("help of %s lists every setting: %v, want %v", cmd.name, whole, cmd.helpSettings)
			}
		})
	}
	if code, _, errOut := runEnv(t, baseEnv(nil), "help", "nope"); code != exitUsage || !strings.Contains(errOut, `unknown command "nope"`) {
		t.Errorf("help nope = %d %q, want a usage error", code, errOut)
	}
}

// TestSettingsBeforeCommand checks that settings flags may come before
// the command as well as after it.
func TestSettingsBeforeCommand(t *testing.T) {
	dir := t.TempDir()
	seedDocs(t, dir, memory.Scope{UserID: "ana"}, 1)
	for _, args := range [][]string{
		{"--data-dir", dir, "show", "--user", "ana", "--facts"},
		{"--data-dir=" + dir, "show", "--user", "ana", "--facts"},
		{"show", "--data-dir", dir, "--user", "ana", "--facts"},
		{"show", "--user", "ana", "--facts", "--data-dir", dir},
		{"--log-level", "warn", "--data-dir", dir, "show", "--facts", "--user=ana"},
	} {
		code, out, errOut := runEnv(t, env{}, args...)
		if code != exitOK || !strings.Contains(out, "Memory of ana: revision 1") {
			t.Errorf("%q = %d\n%s%s", args, code, out, errOut)
		}
	}
}

// TestParseErrors checks the one parse's errors: each names the flag and
// says where to read more, and the command does not run.
func TestParseErrors(t *testing.T) {
	dir := t.TempDir()
	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"show", "--jsn"}, "unknown flag --jsn; did you mean --json?"},
		{[]string{"show", "--json=yes"}, "--json takes no value"},
		{[]string{"show", "--user"}, "--user needs a value"},
		{[]string{"show", "--user", ""}, "--user is empty"},
		{[]string{"show", "--user", "a", "--user", "b"}, "--user is given twice"},
		{[]string{"show", "extra"}, `unexpected argument "extra"`},
		{[]string{"search", "--limit", "x", "q"}, `--limit "x" is not a whole number`},
		{[]string{"bench", "-n", "0"}, "-n and -m must be at least 1"},
		{[]string{"version", "--data-dir", dir}, "unknown flag --data-dir"},
		{[]string{"nope"}, `unknown command "nope"`},
	} {
		code, out, errOut := runEnv(t, dataEnv(dir), tt.args...)
		if code != exitUsage || !strings.Contains(errOut, tt.want) || out != "" {
			t.Errorf("%q = %d, stdout %q, stderr %q; want exit 2 and %q", tt.args, code, out, errOut, tt.want)
		}
	}
}

// TestRepeatableFlag checks that --fact may be given several times and
// every value reaches the command.
func TestRepeatableFlag(t *testing.T) {
	c, code, ok := prepare(lookupCommand("forget"), []string{"--user", "ana", "--fact", "f1", "--fact=f2", "--turn", "t1"},
		baseEnv(nil).get, nil, &strings.Builder{}, &strings.Builder{})
	if !ok {
		t.Fatalf("prepare = %d", code)
	}
	if got := c.args.all("fact"); len(got) != 2 || got[0] != "f1" || got[1] != "f2" {
		t.Errorf("--fact values = %q, want [f1 f2]", got)
	}
	if got := c.args.all("turn"); len(got) != 1 || got[0] != "t1" {
		t.Errorf("--turn values = %q, want [t1]", got)
	}
}

// TestShortHelp: mnemo --help is a page, not the reference: where to
// start, one line per command and where the rest is, with mnemo named as
// the user runs it.
func TestShortHelp(t *testing.T) {
	for _, tc := range []struct {
		name string
		env  env
		prog string
	}{
		{"binary", env{}, "mnemo"},
		{"npm bin", env{"MNEMO_LAUNCHER": "npm"}, "mnemo"},
		{"npx", env{"MNEMO_LAUNCHER": "npx"}, "npx -y @mnemo-mcp/mnemo"},
	} {
		for _, args := range [][]string{{"--help"}, {"-h"}, {"help"}, {"--data-dir", "/srv/m", "--help"}} {
			t.Run(tc.name+" "+strings.Join(args, " "), func(t *testing.T) {
				code, out, errOut := runEnv(t, baseEnv(tc.env), args...)
				if code != exitOK || errOut != "" {
					t.Fatalf("%q = %d, stderr %q", args, code, errOut)
				}
				if n := strings.Count(out, "\n"); n > 40 {
					t.Errorf("short help is %d lines, want at most 40:\n%s", n, out)
				}
				for _, want := range []string{"Start here: " + tc.prog + " setup HOST", "claude-desktop", "'" + tc.prog + " help COMMAND'", "'" + tc.prog + " help all'"} {
					if !strings.Contains(out, want) {
						t.Errorf("short help lacks %q:\n%s", want, out)
					}
				}
				for _, cmd := range commands {
					if !strings.Contains(out, "\n  "+cmd.name+" ") {
						t.Errorf("short help does not list %s", cmd.name)
					}
				}
				if strings.Contains(out, "debounce_seconds") {
					t.Errorf("short help lists the settings")
				}
				if tc.prog != "mnemo" && strings.Contains(out, "'mnemo ") {
					t.Errorf("short help through npx names plain mnemo:\n%s", out)
				}
			})
		}
	}
}

// TestDidYouMean: a mistyped command, subcommand, help topic, setup host
// or flag is answered with the nearest right one; a word near nothing
// gets no guess.
func TestDidYouMean(t *testing.T) {
	for _, tt := range []struct {
		args []string
		want string // "" : no suggestion
	}{
		{[]string{"servee"}, "did you mean 'mnemo serve'?"},
		{[]string{"sever"}, "did you mean 'mnemo serve'?"},
		{[]string{"shwo", "--user", "ana"}, "did you mean 'mnemo show'?"},
		{[]string{"fatcs", "list"}, "did you mean 'mnemo facts'?"},
		{[]string{"facts", "ad", "x"}, "did you mean 'mnemo facts add'?"},
		{[]string{"help", "sho"}, "did you mean 'mnemo help show'?"},
		{[]string{"setup", "claude-destkop"}, "did you mean 'claude-desktop'?"},
		{[]string{"setup", "cursr"}, "did you mean 'cursor'?"},
		{[]string{"show", "--usr", "ana"}, "did you mean --user?"},
		{[]string{"xyzzy"}, ""},
		{[]string{"setup", "emacs"}, ""},
	} {
		code, out, errOut := runEnv(t, baseEnv(env{"HOME": t.TempDir()}), tt.args...)
		if code != exitUsage || out != "" {
			t.Errorf("%q = %d, stdout %q; want a usage error", tt.args, code, out)
		}
		if tt.want == "" && strings.Contains(errOut, "did you mean") || !strings.Contains(errOut, tt.want) {
			t.Errorf("%q: stderr %q, want %q", tt.args, errOut, tt.want)
		}
	}
}

// TestInvokedName: run through npx, every message names the command as
// the user can type it, npx -y @mnemo-mcp/mnemo ...; run as the npm
// package's bin or the binary, plain mnemo.
func TestInvokedName(t *testing.T) {
	const npx = "npx -y @mnemo-mcp/mnemo"
	for _, tt := range []struct {
		args   []string
		stream string // "stdout" or "stderr"
		want   string
	}{
		{[]string{"servee"}, "stderr", "did you mean '" + npx + " serve'?\nRun '" + npx + " help' for usage."},
		{[]string{"show", "--jsn"}, "stderr", "Run '" + npx + " help show' for usage."},
		{[]string{"help", "show"}, "stdout", "Usage:\n  " + npx + " show [--user U]"},
		{[]string{"show", "--help"}, "stdout", "run '" + npx + " help settings' for the list"},
		{[]string{"help", "all"}, "stdout", "  " + npx + " setup HOST"},
		{[]string{"help", "settings"}, "stdout", "flags: " + npx + " COMMAND --help"},
		{[]string{"token"}, "stderr", "run '" + npx + " help token'"},
	} {
		for _, launcher := range []string{"npx", "npm", ""} {
			code, out, errOut := runEnv(t, baseEnv(env{"MNEMO_LAUNCHER": launcher, "MNEMO_DATA_DIR": t.TempDir()}), tt.args...)
			got := map[string]string{"stdout": out, "stderr": errOut}[tt.stream]
			want := tt.want
			if launcher != "npx" {
				want = strings.ReplaceAll(want, npx, "mnemo")
			}
			if !strings.Contains(got, want) {
				t.Errorf("MNEMO_LAUNCHER=%q %q = %d, %s %q; want %q", launcher, tt.args, code, tt.stream, got, want)
			}
			if launcher == "npx" && strings.Contains(out+errOut, "'mnemo ") {
				t.Errorf("MNEMO_LAUNCHER=npx %q names plain mnemo:\n%s%s", tt.args, out, errOut)
			}
		}
	}
}

// TestProgWriter: the quoted commands of a message are rewritten for the
// way mnemo was run, and nothing else is.
func TestProgWriter(t *testing.T) {
	const npx = "npx -y @mnemo-mcp/mnemo"
	for _, tt := range []struct {
		prog, in, want string
	}{
		{npx, "run 'mnemo help' for usage\n", "run '" + npx + " help' for usage\n"},
		{npx, "'mnemo show --user a' and 'mnemo search --user a Q'\n", "'" + npx + " show --user a' and '" + npx + " search --user a Q'\n"},
		{npx, "mnemo setup: the memory of mnemo is kept\n", "mnemo setup: the memory of mnemo is kept\n"},
		{npx, "'mnemo' alone, 'mnemonic '\n", "'mnemo' alone, 'mnemonic '\n"},
		{"mnemo", "run 'mnemo help'\n", "run 'mnemo help'\n"},
	} {
		var b strings.Builder
		w := withProg(withProg(&b, tt.prog), tt.prog)
		n, err := w.Write([]byte(tt.in))
		if err != nil || n != len(tt.in) || b.String() != tt.want {
			t.Errorf("Write(%q) = %d, %v, wrote %q; want %d and %q", tt.in, n, err, b.String(), len(tt.in), tt.want)
		}
	}
}
