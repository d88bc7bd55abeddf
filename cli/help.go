package cli

import (
	"fmt"
	"io"
	"strings"
)

const helpSettings = `
The commands that read or write memory (show, search, export, import, add,
facts, forget, rollback, doctor, setup) take the same settings as serve and use the data directory
with the same locks; --user defaults to user_id. Settings flags may come
before or after the command: mnemo --data-dir DIR show. Each command's own
flags: mnemo COMMAND --help.

Settings: a flag beats its environment variable, which beats the JSON config
file, which beats the default. Empty environment variables are ignored. A bad
value is a startup error (exit status 2) naming the setting and its source.

  --config PATH   env MNEMO_CONFIG
      JSON config file: one object keyed by setting name, for example
      {"data_dir": "/srv/mnemo", "debounce_seconds": 10}. Unknown keys are errors.
`

// writeHelp prints the usage of every command and every setting, both
// generated from their tables.
func writeHelp(w io.Writer) {
	var b strings.Builder
	b.WriteString("mnemo - long-term memory for AI assistants, served over MCP.\n\nUsage:\n")
	for i := range commands {
		cmd := &commands[i]
		for j, line := range cmd.synopsis {
			fmt.Fprintf(&b, "  mnemo %s\n", line)
			if j == len(cmd.synopsis)-1 {
				for _, l := range wrap(cmd.summary, 66) {
					fmt.Fprintf(&b, "      %s\n", l)
				}
			}
		}
	}
	b.WriteString(helpSettings)
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
func writeCommandHelp(w io.Writer, cmd *command) {
	if cmd.name == "serve" {
		writeHelp(w)
		return
	}
	var b strings.Builder
	b.WriteString("Usage:\n")
	for _, line := range cmd.synopsis {
		fmt.Fprintf(&b, "  mnemo %s\n", line)
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
		b.WriteString(helpSettings)
		writeSettings(&b)
	} else if cmd.settings {
		b.WriteString("\nEvery setting flag applies too (--data-dir DIR, --config PATH, ...): run 'mnemo help' for the list.\n")
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
