package cli

import (
	"fmt"
	"io"
	"strings"
)

// helpSettings introduces the settings; %[1]s is the program as the user
// runs it.
const helpSettings = `
The commands that read or write memory (show, search, export, import, add,
facts, forget, rollback, doctor, setup) take the same settings as serve and use the data directory
with the same locks; --user defaults to user_id. Settings flags may come
before or after the command: %[1]s --data-dir DIR show. Each command's own
flags: %[1]s COMMAND --help.

Settings: a flag beats its environment variable, which beats the JSON config
file, which beats the default. Empty environment variables are ignored. A bad
value is a startup error (exit status 2) naming the setting and its source.

  --config PATH   env MNEMO_CONFIG
      JSON config file: one object keyed by setting name, for example
      {"data_dir": "/srv/mnemo", "debounce_seconds": 10}. Unknown keys are errors.
`

// writeShortHelp prints what mnemo --help shows: where to start, one line
// per command, and where the rest is. prog is how the user runs mnemo.
func writeShortHelp(w io.Writer, prog string) {
	var b strings.Builder
	b.WriteString("mnemo - long-term memory for AI assistants, served over MCP.\n\n")
	fmt.Fprintf(&b, "Start here: %s setup HOST\n", prog)
	for _, l := range wrap("writes mnemo into an MCP host's configuration; restart the host and it has a memory. HOST is one of "+setupHostNames()+".", 72) {
		fmt.Fprintf(&b, "    %s\n", l)
	}
	b.WriteString("\nCommands:\n")
	width := 0
	for i := range commands {
		width = max(width, len(commands[i].name))
	}
	for i := range commands {
		cmd := &commands[i]
		fmt.Fprintf(&b, "  %-*s  %s\n", width, cmd.name, cmd.brief)
	}
	fmt.Fprintf(&b, "\nRun '%[1]s help COMMAND' for a command's usage and flags,\n'%[1]s help settings' for every setting, '%[1]s help all' for everything.\n", prog)
	io.WriteString(w, b.String())
}

// writeHelp prints the usage of every command and every setting, both
// generated from their tables: the whole reference (mnemo help all).
func writeHelp(w io.Writer, prog string) {
	var b strings.Builder
	b.WriteString("mnemo - long-term memory for AI assistants, served over MCP.\n\nUsage:\n")
	for i := range commands {
		cmd := &commands[i]
		for j, line := range cmd.synopsis {
			fmt.Fprintf(&b, "  %s %s\n", prog, line)
			if j == len(cmd.synopsis)-1 {
				for _, l := range wrap(cmd.summary, 66) {
					fmt.Fprintf(&b, "      %s\n", l)
				}
			}
		}
	}
	fmt.Fprintf(&b, helpSettings, prog)
	writeSettings(&b)
	io.WriteString(w, b.String())
}

// writeSettingsHelp prints every setting (mnemo help settings).
func writeSettingsHelp(w io.Writer, prog string) {
	var b strings.Builder
	fmt.Fprintf(&b, strings.TrimPrefix(helpSettings, "\n"), prog)
	writeSettings(&b)
	io.WriteString(w, b.String())
}

// writeSettings prints every setting, grouped, with its flag, environment
// variables, default, range and meaning.
func writeSettings(b *strings.Builder) {
	group := ""
	for i := range settings {
		s := &settings[i]
		if s.group != group {
			group = s.group
			fmt.Fprintf(b, "\n%s\n", group)
		}
		fmt.Fprintf(b, "\n  %s\n      flag %s   env %s\n", s.name, s.flagText(), s.envText())
		values := "default: " + s.defaultText()
		if s.rng != "" {
			values += "; range: " + s.rng
		}
		for _, line := range append(wrap(values, 74), wrap(s.doc, 74)...) {
			fmt.Fprintf(b, "      %s\n", line)
		}
	}
}

// writeCommandHelp prints one command's usage and flags. serve's help is
// the whole help: every setting is a flag of serve.
func writeCommandHelp(w io.Writer, cmd *command, prog string) {
	if cmd.name == "serve" {
		writeHelp(w, prog)
		return
	}
	var b strings.Builder
	b.WriteString("Usage:\n")
	for _, line := range cmd.synopsis {
		fmt.Fprintf(&b, "  %s %s\n", prog, line)
	}
	b.WriteString("\n")
	for _, l := range wrap(cmd.summary, 76) {
		fmt.Fprintf(&b, "%s\n", l)
	}
	if cmd.details != "" {
		fmt.Fprintf(&b, "\n%s\n", cmd.details)
	}
	if len(cmd.flags) > 0 {
		b.WriteString("\nFlags:\n")
		for _, f := range cmd.flags {
			name := "--" + f.name
			if f.value != "" {
				name += " " + f.value
			}
			fmt.Fprintf(&b, "  %s\n", name)
			doc := f.doc
			if f.repeat {
				doc += " (may be repeated)"
			}
			for _, l := range wrap(doc, 72) {
				fmt.Fprintf(&b, "      %s\n", l)
			}
		}
	}
	if cmd.helpSettings {
		fmt.Fprintf(&b, helpSettings, prog)
		writeSettings(&b)
	} else if cmd.settings {
		fmt.Fprintf(&b, "\nEvery setting flag applies too (--data-dir DIR, --config PATH, ...): run '%s help settings' for the list.\n", prog)
	}
	io.WriteString(w, b.String())
}

// wrap breaks text into lines of at most width bytes at spaces.
func wrap(text string, width int) []string {
	var lines []string
	line := ""
	for _, word := range strings.Fields(text) {
		if line != "" && len(line)+1+len(word) > width {
			lines = append(lines, line)
			line = ""
		}
		if line != "" {
			line += " "
		}
		line += word
	}
	return append(lines, line)
}
