package cli

import (
	"context"
	"fmt"
)

// Flags several commands share.
var (
	flagUser  = flagSpec{name: "user", value: "U", doc: "the user whose memory it is (default: the user_id setting)"}
	flagAgent = flagSpec{name: "agent", value: "A", doc: "one agent's memory of the user instead of the user's own"}
	flagJSON  = flagSpec{name: "json", doc: "print JSON instead of text"}
)

// commands is the command table: every command is a row, in help order.
// It is filled in init because help, which is a row, prints the table.
var commands []command

func init() {
	commands = []command{
		{
			name:     "serve",
			synopsis: []string{"[serve] [flags]", "serve --http [ADDR] [--insecure-no-auth] [flags]"},
			summary:  "Serve MCP over stdin/stdout: what MCP hosts run. Logs go to stderr; stdout carries only JSON-RPC messages. With --http, serve Streamable HTTP at http://ADDR/mcp (default " + defaultHTTPAddr + ") for a team: every request needs a token ('mnemo token add') or an OAuth access token (oauth_issuer); --insecure-no-auth serves a loopback address without authentication.",
			flags: []flagSpec{
				{name: "http", doc: "serve MCP over HTTP at ADDR (--http ADDR or --http=ADDR; default " + defaultHTTPAddr + ")", optional: true},
				{name: "insecure-no-auth", doc: "with --http on a loopback address: no authentication"}},
			maxArgs: 1, settings: true, dataDir: true, verbose: true, helpSettings: true,
			run: runServe,
		},
		{
			name:     "demo",
			synopsis: []string{"demo [flags]"},
			summary:  "Run a scripted conversation through the real server and show what is stored and retrieved (in a temporary data dir unless --data-dir is given).",
			maxArgs:  0, settings: true, helpSettings: true,
			run: runDemo,
		},
		{
			name:     "rollback",
			synopsis: []string{"rollback [--user U] [--agent A] [--list | --to N]"},
			summary:  "List the kept versions of a memory, or restore revision N (the restore is itself undoable).",
			flags: []flagSpec{flagUser, flagAgent,
				{name: "list", doc: "list the kept versions (the default)"},
				{name: "to", value: "N", doc: "restore revision N"}},
			maxArgs: 0, settings: true, dataDir: true,
			run: runRollback,
		},
		{
			name: "forget",
			synopsis: []string{
				"forget --user U [--agent A] --all --yes",
				"forget --user U [--agent A] [--fact ID]... [--turn ID]... [--thread T] --yes",
			},
			summary: "Delete a user's whole memory (every agent's too, unless --agent names one) with --all, or single facts, exchanges or a thread. Without --yes it only shows what it would delete.",
			flags: []flagSpec{
				{name: "user", value: "U", doc: "the user whose memory it is (required)"}, flagAgent,
				{name: "all", doc: "delete the whole memory of the user (or of the agent with --agent)"},
				{name: "fact", value: "ID", doc: "delete this fact", repeat: true},
				{name: "turn", value: "ID", doc: "delete this exchange", repeat: true},
				{name: "thread", value: "T", doc: "delete every exchange of this thread"},
				{name: "yes", doc: "really delete; without it nothing is deleted"}},
			maxArgs: 0, settings: true, dataDir: true,
			run: runForget,
		},
		{
			name:     "show",
			synopsis: []string{"show [--user U] [--agent A] [--json] [--facts|--profile|--threads|--sessions]"},
			summary:  "Print a memory: profile, facts (with what to avoid for corrections), knowledge, threads and pending turns; --sessions: the mid-term topic sessions.",
			flags: []flagSpec{flagUser, flagAgent, flagJSON,
				{name: "facts", doc: "only the facts and knowledge"},
				{name: "profile", doc: "only the profile"},
				{name: "threads", doc: "only the threads"},
				{name: "sessions", doc: "the mid-term topic sessions"}},
			maxArgs: 0, settings: true, dataDir: true,
			run: runShow,
		},
		{
			name:     "search",
			synopsis: []string{"search [--user U] [--agent A] [--thread T] [--limit N] [--max-tokens N] [--json] [--injection] QUERY"},
			summary:  "Rank stored exchanges as retrieve_memory does; with --injection also print the <memory> text.",
			flags: []flagSpec{flagUser, flagAgent,
				{name: "thread", value: "T", doc: "the thread the question is asked in"},
				{name: "limit", value: "N", doc: "most exchanges returned"},
				{name: "max-tokens", value: "N", doc: "token budget of the <memory> text"},
				flagJSON,
				{name: "injection", doc: "also print the <memory> text"}},
			maxArgs: -1, settings: true, dataDir: true,
			run: runSearch,
		},
		{
			name:     "export",
			synopsis: []string{"export [--out FILE] [--user U [--agent A] | --all]"},
			summary:  "Write memory as versioned JSON (README \"Export format\"); a user includes the user's agents.",
			flags: []flagSpec{
				{name: "out", value: "FILE", doc: "write to FILE (0600) instead of stdout"},
				flagUser, flagAgent,
				{name: "all", doc: "every user"}},
			maxArgs: 0, settings: true, dataDir: true,
			run: runExport,
		},
		{
			name:     "import",
			synopsis: []string{"import [--format mnemo|memoryos|deerflow] [--user U] [--agent A] [--thread T] [--pending] PATH"},
			summary:  "Import a mnemo export, a DeerFlow memory.json or a MemoryOS data directory into empty scopes.",
			flags: []flagSpec{
				{name: "format", value: "F", doc: "mnemo, memoryos or deerflow (default: detected from the content)"},
				flagUser, flagAgent,
				{name: "thread", value: "T", doc: "thread of imported exchanges that have none"},
				{name: "pending", doc: "leave the imported exchanges for the LLM updater"}},
			maxArgs: 1, settings: true, dataDir: true,
			run: runImport,
		},
		{
			name:     "doctor",
			synopsis: []string{"doctor [flags]"},
			summary:  "Check the configuration, the data directory, the token encoding and the LLM/embeddings endpoints (a real request); exit status 1 if something needs fixing.",
			maxArgs:  0, settings: true, configErrors: true,
			run: runDoctor,
		},
		{
			name:     "bench",
			synopsis: []string{"bench [-n N] [-m M] [--server CMD] [--data-dir DIR] [--seed S] [--http]"},
			summary:  "Measure a memory server over stdio as a host uses it: latency percentiles, start-up time and peak memory.",
			details:  benchDetails,
			flags: []flagSpec{
				{name: "n", value: "N", doc: "exchanges to store (default 5000)"},
				{name: "m", value: "M", doc: "retrievals to run (default 1000)"},
				{name: "server", value: "CMD", doc: "server command line (split on spaces; {data_dir} is replaced); default: this binary's serve"},
				{name: "data-dir", value: "DIR", doc: "data directory, passed as MNEMO_DATA_DIR; default: a new temporary directory, removed afterwards"},
				{name: "seed", value: "S", doc: "seed of the generated conversation (default 1)"},
				{name: "http", doc: "talk to the server over Streamable HTTP on loopback (serve --http 127.0.0.1:0, with a token) instead of stdio"}},
			maxArgs: 0,
			run:     runBench,
		},
		{
			name: "token",
			synopsis: []string{
				"token add --user U [--agent A]",
				"token list [--json]",
				"token revoke ID",
			},
			summary: "Manage the bearer tokens of mnemo serve --http: add prints a new token once (only its hash is kept), list shows them, revoke stops one at once.",
			details: tokenDetails,
			flags: []flagSpec{
				{name: "user", value: "U", doc: "add: the user whose memory the token opens (required)"},
				{name: "agent", value: "A", doc: "add: confine the token to this agent's memory of the user"},
				flagJSON},
			maxArgs: 2, settings: true, dataDir: true,
			run: runToken,
		},
		{
			name:     "version",
			synopsis: []string{"version"},
			summary:  "Print the version.",
			maxArgs:  0,
			run: func(_ context.Context, c *call) int {
				fmt.Fprintln(c.stdout, "mnemo", version())
				return exitOK
			},
		},
		{
			name:     "help",
			synopsis: []string{"help [COMMAND]"},
			summary:  "Show this help, or one command's.",
			maxArgs:  1,
			run:      runHelp,
		},
	}
}

// lookupCommand is the command called name, or nil.
func lookupCommand(name string) *command {
	for i := range commands {
		if commands[i].name == name {
			return &commands[i]
		}
	}
	return nil
}

// runHelp is "mnemo help [COMMAND]".
func runHelp(_ context.Context, c *call) int {
	if len(c.args.positional) == 0 {
		writeHelp(c.stdout)
		return exitOK
	}
	cmd := lookupCommand(c.args.positional[0])
	if cmd == nil {
		return c.fail(exitUsage, "unknown command %q; run 'mnemo help' for the list", c.args.positional[0])
	}
	writeCommandHelp(c.stdout, cmd)
	return exitOK
}
