package cli

import (
	"context"
	"slices"
	"strings"

	"github.com/mnemo-mcp/mnemo/memory"
	"github.com/mnemo-mcp/mnemo/server"
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
			brief:    "serve MCP over stdio (what hosts run) or Streamable HTTP (--http)",
			synopsis: []string{"[serve] [flags]", "serve --http [ADDR] [--insecure-no-auth] [flags]"},
			summary:  "Serve MCP over stdin/stdout: what MCP hosts run. Logs go to stderr; stdout carries only JSON-RPC messages. With --http, serve Streamable HTTP at http://ADDR/mcp (default " + server.DefaultHTTPAddr + ") for a team: every request needs a token ('mnemo token add') or an OAuth access token (oauth_issuer); --insecure-no-auth serves a loopback address without authentication.",
			flags: []flagSpec{
				{name: "http", doc: "serve MCP over HTTP at ADDR (--http ADDR or --http=ADDR; default " + server.DefaultHTTPAddr + ")", optional: true},
				{name: "insecure-no-auth", doc: "with --http on a loopback address: no authentication"}},
			maxArgs: 1, settings: true, dataDir: true, verbose: true, helpSettings: true,
			run: runServe,
		},
		{
			name:     "demo",
			brief:    "show what mnemo stores and retrieves in a scripted conversation",
			synopsis: []string{"demo [flags]"},
			summary:  "Run a scripted conversation through the real server and show what is stored and retrieved (in a temporary data dir unless --data-dir is given).",
			maxArgs:  0, settings: true, helpSettings: true,
			plainOutput: true,
			run:         runDemo,
		},
		{
			name:     "rollback",
			brief:    "list or restore the kept versions of a memory",
			synopsis: []string{"rollback [--user U] [--agent A] [--list | --to N]"},
			summary:  "List the kept versions of a memory, or restore revision N (the restore is itself undoable).",
			flags: []flagSpec{flagUser, flagAgent,
				{name: "list", doc: "list the kept versions (the default)"},
				{name: "to", value: "N", doc: "restore revision N"}},
			maxArgs: 0, settings: true, dataDir: true,
			run: runRollback,
		},
		{
			name:  "forget",
			brief: "delete a user's memory, or single facts, exchanges or a thread",
			synopsis: []string{
				"forget --user U [--agent A] --all --yes",
				"forget --user U [--agent A] [--fact ID]... [--turn ID]... [--thread T] [--keep-facts] --yes",
			},
			summary: "Delete a user's whole memory (every agent's too, unless --agent names one) with --all, or single facts, exchanges or a thread (with the facts extracted from a thread left with no exchange, unless --keep-facts). The text leaves every file, earlier versions included. Without --yes it only shows what it would delete.",
			flags: []flagSpec{
				{name: "user", value: "U", doc: "the user whose memory it is (required)"}, flagAgent,
				{name: "all", doc: "delete the whole memory of the user (or of the agent with --agent)"},
				{name: "fact", value: "ID", doc: "delete this fact", repeat: true},
				{name: "turn", value: "ID", doc: "delete this exchange", repeat: true},
				{name: "thread", value: "T", doc: "delete every exchange of this thread"},
				{name: "keep-facts", doc: "keep the facts extracted from a thread left with no exchange"},
				{name: "yes", doc: "really delete; without it nothing is deleted"}},
			maxArgs: 0, settings: true, dataDir: true,
			run: runForget,
		},
		{
			name:  "profile",
			brief: "replace or clear one section of a profile",
			synopsis: []string{
				"profile set --section S [--user U] [--agent A] TEXT",
				"profile clear --section S [--user U] [--agent A]",
			},
			summary: "Replace or clear one section of a profile (work_context, personal_context, top_of_mind, recent_months, earlier_context, long_term_background); the previous document is kept as a version.",
			flags: []flagSpec{flagUser, flagAgent,
				{name: "section", value: "S", doc: "the section: " + strings.Join(memory.ProfileSections, ", ")}},
			maxArgs: 2, settings: true, dataDir: true,
			run: runProfile,
		},
		{
			name:     "show",
			brief:    "print a memory: profile, facts, threads, usage",
			synopsis: []string{"show [--user U] [--agent A] [--json] [--facts|--profile|--threads|--sessions|--usage]"},
			summary:  "Print a memory: profile, facts (with what to avoid for corrections), knowledge, threads and pending turns; --sessions: the mid-term topic sessions; --usage: the model and embedding calls counted by day, the daily token budget and whether extraction is deferred.",
			flags: []flagSpec{flagUser, flagAgent, flagJSON,
				{name: "facts", doc: "only the facts and knowledge"},
				{name: "profile", doc: "only the profile"},
				{name: "threads", doc: "only the threads"},
				{name: "sessions", doc: "the mid-term topic sessions"},
				{name: "usage", doc: "only the usage: model and embedding calls and tokens by day (UTC), the daily token budget"}},
			maxArgs: 0, settings: true, dataDir: true,
			run: runShow,
		},
		{
			name:     "search",
			brief:    "rank stored exchanges for a question, as retrieve_memory does",
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
			brief:    "write memory as JSON",
			synopsis: []string{"export [--out FILE] [--user U [--agent A] | --all]"},
			summary:  "Write memory as versioned JSON (docs/export.md); a user includes the user's agents.",
			flags: []flagSpec{
				{name: "out", value: "FILE", doc: "write to FILE (0600) instead of stdout"},
				flagUser, flagAgent,
				{name: "all", doc: "every user"}},
			maxArgs: 0, settings: true, dataDir: true,
			run: runExport,
		},
		{
			name:  "import",
			brief: "bring in ChatGPT or Claude history, a knowledge graph or an export",
			synopsis: []string{"import [--format chatgpt|claude|memory-graph] [--user U] [--agent A] [--graph-user NAME] [--dry-run] PATH",
				"import [--format mnemo|memoryos|deerflow] [--from-user U [--from-agent A]] [--user U] [--agent A] [--thread T] [--pending] PATH"},
			summary: "Import a ChatGPT or Claude export or a memory server's knowledge graph into a memory, or a mnemo export, a DeerFlow memory.json or a MemoryOS data directory into empty scopes.",
			details: `A ChatGPT or Claude data export (conversations.json, or the unpacked
export's directory) adds to what the scope holds: one thread per
conversation, one turn per question and answer at its original time.
System prompts, tool traffic and uploaded files are left out, secrets
redacted; importing the same export again adds nothing. With a model
configured, facts are extracted from the new turns, oldest first, within
daily_token_budget (--dry-run prints the estimated cost and writes
nothing); without one the turns wait, stored and searchable.
The memory server's memory.jsonl becomes facts: each observation and
relation one fact naming its entity; the entity named user, default_user
or me (or --graph-user NAME) is the user.

Each scope of a mnemo export is imported under its own name unless
--user names another user: that works for an export of one user (with the
user's agents); for an export of several users (mnemo export --all) pick
one with --from-user, e.g.
  mnemo import --from-user ana --user bob all.json
--agent renames a single scope: pick it with --from-user U --from-agent A.
When the export holds more than --user or --agent can take, the error
lists its scopes.`,
			flags: []flagSpec{
				{name: "format", value: "F", doc: "chatgpt, claude, memory-graph, mnemo, memoryos or deerflow (default: detected from the content)"},
				{name: "from-user", value: "U", doc: "import only this user's memory (and the user's agents') from a mnemo export"},
				{name: "from-agent", value: "A", doc: "import only this agent's memory from a mnemo export"},
				{name: "user", value: "U", doc: "import under this user instead of the one in the source"},
				{name: "agent", value: "A", doc: "import a single scope as this agent's memory"},
				{name: "thread", value: "T", doc: "thread of imported exchanges that have none"},
				{name: "pending", doc: "leave the imported exchanges for the LLM updater"},
				{name: "graph-user", value: "NAME", doc: "the entity of a knowledge graph that is the user (default: one named user, default_user or me)"},
				{name: "dry-run", doc: "say what a chat history or graph import would add, and what extraction would cost; write nothing"}},
			maxArgs: 1, settings: true, dataDir: true,
			run: runImport,
		},
		{
			name:     "add",
			brief:    "store one exchange, as add_memory does",
			synopsis: []string{"add [--user U] [--agent A] [--thread T] (--input TEXT --reply TEXT | --stdin) [--json]"},
			summary:  "Store one exchange, as add_memory does: for scripts and imports of single conversations.",
			details:  addDetails,
			flags: []flagSpec{flagUser, flagAgent,
				{name: "thread", value: "T", doc: "the conversation (default: default)"},
				{name: "input", value: "TEXT", doc: "what the user said"},
				{name: "reply", value: "TEXT", doc: "the assistant's final reply"},
				{name: "timestamp", value: "TIME", doc: "when it happened: RFC 3339 or 2026-05-01 12:00:00 (UTC); default now"},
				{name: "meta", value: "JSON", doc: "a JSON object stored with the exchange (meta_data)"},
				{name: "stdin", doc: "read the exchange as a JSON object (add_memory's arguments) from stdin"},
				flagJSON},
			maxArgs: 0, settings: true, dataDir: true,
			run: runAdd,
		},
		{
			name:     "facts add",
			brief:    "save a fact as stated",
			synopsis: []string{"facts add [--user U] [--agent A] [--category C] [--confidence X] [--json] TEXT"},
			summary:  "Save a fact as stated, as save_memory does (a fact that says the same is not stored twice).",
			flags:    []flagSpec{flagUser, flagAgent, flagCategory, flagConfidence, flagJSON},
			maxArgs:  -1, settings: true, dataDir: true,
			run: runFactsAdd,
		},
		{
			name:     "facts edit",
			brief:    "change a fact",
			synopsis: []string{"facts edit [--user U] [--agent A] [--content TEXT] [--category C] [--confidence X] [--json] ID"},
			summary:  "Change a fact's content, category or confidence, as update_memory does; the change is kept in the fact history.",
			flags: []flagSpec{flagUser, flagAgent,
				{name: "content", value: "TEXT", doc: "the new content"},
				flagCategory, flagConfidence, flagJSON},
			maxArgs: 1, settings: true, dataDir: true,
			run: runFactsEdit,
		},
		{
			name:     "facts restore",
			brief:    "bring back a retired fact",
			synopsis: []string{"facts restore [--user U] [--agent A] [--json] ID"},
			summary:  "Bring back a fact that was retired for not being confirmed, merged into a near-duplicate or replaced (memory_history names them); the restore is kept in the fact history.",
			flags:    []flagSpec{flagUser, flagAgent, flagJSON},
			maxArgs:  1, settings: true, dataDir: true,
			run: runFactsRestore,
		},
		{
			name:     "facts list",
			brief:    "list facts, newest first",
			synopsis: []string{"facts list [--user U] [--agent A] [--category C] [--confidence X] [--thread T] [--text S] [--limit N] [--offset N] [--json]"},
			summary:  "List facts, newest first, as list_memories does.",
			flags: []flagSpec{flagUser, flagAgent,
				{name: "category", value: "C", doc: "only this category"},
				{name: "confidence", value: "X", doc: "only facts at least this sure"},
				{name: "thread", value: "T", doc: "only facts extracted from this thread"},
				{name: "text", value: "S", doc: "only facts containing S (ignoring case)"},
				{name: "limit", value: "N", doc: "page size"},
				{name: "offset", value: "N", doc: "skip N facts (the next page's offset is printed)"},
				flagJSON},
			maxArgs: 0, settings: true, dataDir: true,
			run: runFactsList,
		},
		{
			name:     "setup",
			brief:    "write mnemo into an MCP host's configuration",
			synopsis: []string{"setup HOST [--npx] [--project [--project-dir DIR]] [--name N] [--dry-run | --print] [--file FILE]"},
			summary:  "Write mnemo into an MCP host's configuration (" + setupHostNames() + ") with this binary's absolute path and an absolute data directory, merging into the existing file (backup first; a second run changes nothing).",
			details:  setupDetails,
			flags: []flagSpec{
				{name: "npx", doc: "write the npm launcher's form (npx by its absolute path, -y " + npmPackage + "@VERSION serve ...) instead of this binary's path; the default when run from the launcher"},
				{name: "project", doc: "write the project's own file instead of the user-wide one, with the project's .mnemo as the data directory"},
				{name: "project-dir", value: "DIR", doc: "the project directory (default: the current directory); implies --project"},
				{name: "name", value: "N", doc: "the server's key in the host's configuration (default mnemo)"},
				{name: "dry-run", doc: "show what would change and the resulting file; write nothing"},
				{name: "print", doc: "print the host's configuration snippet; read and write no file"},
				{name: "file", value: "FILE", doc: "the configuration file to write instead of the host's usual one"}},
			maxArgs: 1, settings: true, dataDir: true,
			plainOutput: true,
			run:         runSetup,
		},
		{
			name:     "ui",
			brief:    "open the memory viewer in the browser",
			synopsis: []string{"ui [--port N] [--open] [--user U] [--agent A]"},
			summary:  "Start the memory viewer in the browser on 127.0.0.1: see, search, correct and forget what is remembered; prints its URL with a one-time access token.",
			details:  uiDetails,
			flags: []flagSpec{
				{name: "port", value: "N", doc: "port on 127.0.0.1 (default: a free one)"},
				{name: "open", doc: "open the viewer in the desktop's browser"},
				flagUser, flagAgent},
			maxArgs: 0, settings: true, dataDir: true,
			run: runUI,
		},
		{
			name:     "doctor",
			brief:    "check the configuration, the data directory and the model endpoints",
			synopsis: []string{"doctor [flags]"},
			summary:  "Check the configuration, the data directory, the token encoding and the LLM/embeddings endpoints (a real request); exit status 1 if something needs fixing.",
			maxArgs:  0, settings: true, configErrors: true,
			plainOutput: true,
			run:         runDoctor,
		},
		{
			name:     "bench",
			brief:    "measure a memory server's latency and memory use",
			synopsis: []string{"bench [-n N] [-m M] [--server CMD] [--data-dir DIR] [--seed S] [--http [--clients N [--mix add|retrieve|both]]]"},
			summary:  "Measure a memory server over stdio as a host uses it: latency percentiles, start-up time and peak memory; with --http --clients, the throughput of concurrent clients of one user.",
			details:  benchDetails,
			flags: []flagSpec{
				{name: "n", value: "N", doc: "exchanges to store (default 5000)"},
				{name: "m", value: "M", doc: "retrievals to run (default 1000)"},
				{name: "server", value: "CMD", doc: "server command line (split on spaces; {data_dir} is replaced); default: this binary's serve"},
				{name: "data-dir", value: "DIR", doc: "data directory, passed as MNEMO_DATA_DIR; default: a new temporary directory, removed afterwards"},
				{name: "seed", value: "S", doc: "seed of the generated conversation (default 1)"},
				{name: "http", doc: "talk to the server over Streamable HTTP on loopback (serve --http 127.0.0.1:0, with a token) instead of stdio"},
				{name: "clients", value: "N", doc: "with --http: N concurrent clients as one user; prints calls/s, p50/p99 and the server's CPU cores per phase"},
				{name: "mix", value: "MIX", doc: "with --clients: add (store only), retrieve (store, then measure retrievals only) or both (default)"}},
			maxArgs: 0,
			run:     runBench,
		},
		{
			name:  "token",
			brief: "manage the bearer tokens of serve --http",
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
			brief:    "print the version",
			synopsis: []string{"version"},
			summary:  "Print the version.",
			maxArgs:  0,
			run:      runVersion,
		},
		{
			name:        "help",
			brief:       "show this help, a command's, the settings' or all of it",
			synopsis:    []string{"help [COMMAND | settings | all]"},
			summary:     "Show the short help, one command's usage and flags, every setting, or all of it.",
			maxArgs:     2,
			plainOutput: true,
			run:         runHelp,
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

// commandWords are the words that name a command or a group of them
// (facts), for suggestions.
func commandWords() []string {
	var words []string
	for i := range commands {
		w, _, _ := strings.Cut(commands[i].name, " ")
		if !slices.Contains(words, w) {
			words = append(words, w)
		}
	}
	return words
}

// subcommands are the subcommands of group ("facts": add, edit, list),
// the rows named "group NAME".
func subcommands(group string) []string {
	var subs []string
	for i := range commands {
		if sub, ok := strings.CutPrefix(commands[i].name, group+" "); ok {
			subs = append(subs, sub)
		}
	}
	return subs
}

// runHelp is "mnemo help [COMMAND | settings | all]".
func runHelp(_ context.Context, c *call) int {
	name := strings.Join(c.args.positional, " ")
	switch name {
	case "":
		writeShortHelp(c.stdout, c.prog)
		return exitOK
	case "all":
		writeHelp(c.stdout, c.prog)
		return exitOK
	case "settings":
		writeSettingsHelp(c.stdout, c.prog)
		return exitOK
	}
	cmd := lookupCommand(name)
	if cmd == nil {
		if subs := subcommands(name); len(subs) > 0 {
			return c.fail(exitUsage, "mnemo %s has subcommands: %s; run 'mnemo help %s %s'", name, strings.Join(subs, ", "), name, subs[0])
		}
		if w := suggestWord(name, commandWords()); w != "" {
			return c.fail(exitUsage, "unknown command %q; did you mean 'mnemo help %s'?", name, w)
		}
		return c.fail(exitUsage, "unknown command %q; run 'mnemo help' for the list", name)
	}
	writeCommandHelp(c.stdout, cmd, c.prog)
	return exitOK
}
