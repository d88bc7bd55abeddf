package cli

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/mnemo-mcp/mnemo/memory"
	"github.com/mnemo-mcp/mnemo/memory/engine"
	"github.com/mnemo-mcp/mnemo/memory/update"
)

// Import formats.
const (
	formatMnemo    = "mnemo"
	formatMemoryOS = "memoryos"
	formatDeerFlow = "deerflow"
)

// importedScope is memory read from an import source, to be written into
// one empty scope.
type importedScope struct {
	scope memory.Scope
	doc   *memory.Document
	turns []memory.Turn
}

// importOptions are what the source formats need besides the source.
type importOptions struct {
	user, agent string // target scope from --user / --agent; may be empty
	// fromUser, fromAgent pick the scopes of a mnemo export to import
	// (--from-user / --from-agent); empty: every scope.
	fromUser, fromAgent string
	defaultUser         string // the configured user_id
	thread              string // thread of imported turns that have none
	pending             bool   // leave imported turns for the updater
	now                 time.Time
	newTurnID           func() string
	newFactID           func() string
	notes               []string // what the conversion changed, told to the user
}

func (o *importOptions) note(format string, args ...any) {
	o.notes = append(o.notes, fmt.Sprintf(format, args...))
}

// runImport is "mnemo import FILE [--format mnemo|memoryos|deerflow]
// [--user U] [--agent A]".
func runImport(ctx context.Context, e *call) int {
	stdout := e.stdout
	if len(e.args.positional) != 1 {
		return e.fail(exitUsage, "name one file or directory: mnemo import [--format chatgpt|claude|memory-graph|mnemo|memoryos|deerflow] [--user U] [--agent A] PATH")
	}
	path := e.args.positional[0]
	opt := &importOptions{
		user:        e.args.str("user"),
		agent:       e.args.str("agent"),
		fromUser:    e.args.str("from-user"),
		fromAgent:   e.args.str("from-agent"),
		defaultUser: e.cfg.Memory.UserID,
		thread:      e.args.str("thread"),
		pending:     e.args.flag("pending"),
		now:         time.Now().UTC(),
		newTurnID:   func() string { return "turn_" + uuid.Must(uuid.NewV7()).String() },
		newFactID:   update.NewFactID,
	}
	for _, id := range []struct{ field, v string }{{"--user", opt.user}, {"--agent", opt.agent}, {"--thread", opt.thread}, {"--from-user", opt.fromUser}, {"--from-agent", opt.fromAgent}} {
		if id.v != "" {
			if err := memory.ValidateID(id.field, id.v); err != nil {
				return e.fail(exitUsage, "%v", err)
			}
		}
	}
	format := e.args.str("format")
	if format == "" {
		if f, err := detectHistory(path); err == nil {
			format = f
		}
	}
	if isHistoryFormat(format) {
		return runImportHistory(ctx, e, path, format)
	}
	if e.args.flag("dry-run") || e.args.str("graph-user") != "" {
		return e.fail(exitUsage, "--dry-run and --graph-user apply to a ChatGPT or Claude export or a knowledge graph, not to a %s source", cmp.Or(format, "mnemo, DeerFlow or MemoryOS"))
	}
	if format == "" {
		f, err := detectFormat(path)
		if err != nil {
			return e.fail(exitUsage, "%v", err)
		}
		format = f
	}
	if (opt.fromUser != "" || opt.fromAgent != "") && format != formatMnemo {
		return e.fail(exitUsage, "--from-user and --from-agent pick scopes of a mnemo export; a %s source holds one user: name the target with --user and --agent", format)
	}
	var scopes []importedScope
	var err error
	switch format {
	case formatMnemo:
		scopes, err = readMnemoExport(path, opt)
	case formatDeerFlow:
		scopes, err = readDeerFlow(path, opt)
	case formatMemoryOS:
		scopes, err = readMemoryOS(path, opt)
	default:
		return e.fail(exitUsage, "--format %q is not one of chatgpt, claude, memory-graph, mnemo, memoryos, deerflow", format)
	}
	if err != nil {
		return e.fail(exitError, "read %s (%s format): %v", path, format, err)
	}
	redacted, err := checkImport(e.cfg.Memory, scopes)
	if err != nil {
		return e.fail(exitError, "%s: nothing imported: %v", path, err)
	}
	if len(redacted) > 0 {
		opt.note("%s", redactedNote(redacted))
	}

	store, err := openStore(ctx, e.cfg, e.log)
	if err != nil {
		return e.fail(exitError, "%v", err)
	}
	defer store.Close()
	prog := newProgress(e.stderr, "importing scopes", len(scopes))
	err = importInto(ctx, store, scopes, prog.set)
	prog.done()
	if err != nil {
		return e.fail(exitError, "%v", err)
	}
	for _, n := range opt.notes {
		fmt.Fprintf(stdout, "note: %s\n", n)
	}
	for _, s := range scopes {
		fmt.Fprintf(stdout, "imported into %s: %s in %s, %s, %d user and %d assistant knowledge entries, %s\n",
			s.scope.Key(), plural(len(s.turns), "turn"), plural(countThreads(s.turns), "thread"), plural(len(s.doc.Facts), "fact"),
			len(s.doc.Knowledge), len(s.doc.AssistantKnowledge), plural(countSections(s.doc), "profile section"))
	}
	return exitOK
}

// importInto writes scopes into store. It refuses before writing
// anything when a scope already holds memory (an error wrapping
// memory.ErrInvalidInput), so an import is all or nothing unless writing
// itself fails.
//
// onScope, when not nil, is told how many scopes are written so far.
func importInto(ctx context.Context, store memory.Store, scopes []importedScope, onScope func(done int)) error {
	for _, s := range scopes {
		doc, err := store.LoadDocument(ctx, s.scope)
		if err != nil {
			return err
		}
		turns, err := store.ReadTurns(ctx, s.scope, 0)
		if err != nil {
			return err
		}
		if doc.Revision != 0 || len(turns) > 0 {
			return &memory.InputError{Message: fmt.Sprintf("%s already holds memory (revision %d, %d turns); import only writes into an empty scope: import into another user with --user NAME, or delete it first with 'mnemo forget --user %s%s --yes' (after an export if you want to keep it)",
				s.scope.Key(), doc.Revision, len(turns), s.scope.UserID, agentFlag(s.scope))}
		}
	}
	for i, s := range scopes {
		if onScope != nil {
			onScope(i)
		}
		if err := store.ImportScope(ctx, s.scope, s.doc, s.turns); err != nil {
			done := make([]string, i)
			for j := range done {
				done[j] = scopes[j].scope.Key()
			}
			msg := fmt.Sprintf("import into %s: %v", s.scope.Key(), err)
			if i > 0 {
				msg += "; already imported: " + strings.Join(done, ", ")
			}
			return errors.New(msg)
		}
	}
	return nil
}

// detectFormat tells the format of path from its content: a directory is
// a MemoryOS data directory; a JSON file is a mnemo export when it says so,
// a DeerFlow memory.json when it has facts or profile sections.
func detectFormat(path string) (string, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return "", err
	}
	if fi.IsDir() {
		return formatMemoryOS, nil
	}
	data, err := readImportFile(path)
	if err != nil {
		return "", err
	}
	return detectFormatData(path, data)
}

// detectFormatData tells the format of a file's content; path names it
// in errors.
func detectFormatData(path string, data []byte) (string, error) {
	var top map[string]json.RawMessage
	if err := json.Unmarshal(data, &top); err != nil {
		return "", fmt.Errorf("%s is not a JSON object (%v); give a ChatGPT or Claude export (conversations.json), a memory server's memory.jsonl, a mnemo export, a DeerFlow memory.json or a MemoryOS data directory", path, err)
	}
	var format string
	json.Unmarshal(top["format"], &format)
	switch base := filepath.Base(path); {
	case format == exportFormat:
		return formatMnemo, nil
	case format != "":
		return "", fmt.Errorf("%s has format %q, which mnemo does not know; pass --format if it is one of mnemo, memoryos, deerflow", path, format)
	case top["facts"] != nil || top["user"] != nil && top["history"] != nil:
		return formatDeerFlow, nil
	case base == "short_term.json" || base == "mid_term.json" || base == "long_term_user.json" || base == "long_term_assistant.json":
		return "", fmt.Errorf("%s is one file of a MemoryOS memory; import its data directory (the one with users/ and assistants/) or its users/<id> directory", path)
	}
	return "", fmt.Errorf("cannot tell the format of %s; pass --format chatgpt, claude, memory-graph, mnemo, memoryos or deerflow", path)
}

// readMnemoExport reads a mnemo export. --user moves every scope to
// that user; --agent names the agent of a single-scope export.
func readMnemoExport(path string, opt *importOptions) ([]importedScope, error) {
	data, err := readImportFile(path)
	if err != nil {
		return nil, err
	}
	return parseMnemoExport(data, opt)
}

// parseMnemoExport converts the content of a mnemo export.
func parseMnemoExport(data []byte, opt *importOptions) ([]importedScope, error) {
	var file exportFile
	dec := json.NewDecoder(bytes.NewReader(data))
	if err := dec.Decode(&file); err != nil {
		return nil, fmt.Errorf("not a valid mnemo export: %w", err)
	}
	if file.Format != exportFormat {
		return nil, fmt.Errorf("format is %q, want %q", file.Format, exportFormat)
	}
	if file.Version > exportVersion {
		return nil, fmt.Errorf("written by a newer mnemo (export version %d; this one reads up to %d): upgrade mnemo", file.Version, exportVersion)
	}
	if file.Version < 1 {
		return nil, fmt.Errorf("export version %d is not valid", file.Version)
	}
	picked, err := pickScopes(file.Scopes, opt)
	if err != nil {
		return nil, err
	}
	out := make([]importedScope, 0, len(picked))
	for i, s := range picked {
		sc := s.Scope
		if opt.user != "" {
			sc.UserID = opt.user
		}
		if opt.agent != "" {
			sc.AgentName = opt.agent
		}
		if err := sc.Validate(); err != nil {
			return nil, fmt.Errorf("scope %d: %w", i+1, err)
		}
		doc := s.Document
		if doc == nil {
			doc = memory.NewDocument()
		}
		if doc.Facts == nil {
			doc.Facts = []memory.Fact{}
		}
		out = append(out, importedScope{scope: sc, doc: doc, turns: s.Turns})
	}
	return out, nil
}

// pickScopes is the scopes of an export to import: those --from-user and
// --from-agent pick (every scope without them). --user moves them to
// another user, so they must be one user's (the user and the user's
// agents); --agent renames one scope, so it must be a single one. When
// they are not, the error lists the scopes the export holds and how to
// pick.
func pickScopes(all []exportScope, opt *importOptions) ([]exportScope, error) {
	var picked []exportScope
	for _, s := range all {
		if (opt.fromUser == "" || s.Scope.UserID == opt.fromUser) && (opt.fromAgent == "" || s.Scope.AgentName == opt.fromAgent) {
			picked = append(picked, s)
		}
	}
	held := func() string {
		keys := make([]string, len(all))
		for i, s := range all {
			keys[i] = s.Scope.Key()
		}
		return strings.Join(keys, ", ")
	}
	users := map[string]bool{}
	for _, s := range picked {
		users[s.Scope.UserID] = true
	}
	switch {
	case len(picked) == 0 && (opt.fromUser != "" || opt.fromAgent != ""):
		return nil, fmt.Errorf("holds no scope matching --from-user %q --from-agent %q; it holds %s", opt.fromUser, opt.fromAgent, held())
	case opt.user != "" && len(users) > 1:
		return nil, fmt.Errorf("holds the memory of %d users (%s), and --user %s would put them all in one; pick one user with --from-user U (and one agent with --from-agent A), or leave out --user to import each under its own name", len(users), held(), opt.user)
	case opt.agent != "" && len(picked) > 1:
		return nil, fmt.Errorf("holds %d scopes (%s), and --agent %s renames a single one; pick one with --from-user U (a user without agents) or --from-user U --from-agent A", len(picked), held(), opt.agent)
	}
	return picked, nil
}

// checkImport validates what is about to be imported: distinct, valid
// scopes; turns in increasing Seq order; and everything engine.CheckImport
// checks (the limits and the text rule of the tools), redacting secrets
// in place. It returns the redactions of every scope.
func checkImport(cfg memory.Config, scopes []importedScope) ([]memory.Redaction, error) {
	if len(scopes) == 0 {
		return nil, errors.New("holds no memory to import")
	}
	var redacted []memory.Redaction
	seen := map[memory.Scope]bool{}
	for _, s := range scopes {
		if err := s.scope.Validate(); err != nil {
			return nil, err
		}
		if seen[s.scope] {
			return nil, fmt.Errorf("holds scope %s twice", s.scope.Key())
		}
		seen[s.scope] = true
		if v := s.doc.Version; v != "" && v != memory.SchemaVersion {
			return nil, fmt.Errorf("%s: memory document version %q is not %q", s.scope.Key(), v, memory.SchemaVersion)
		}
		var last int64
		for i, t := range s.turns {
			if t.Seq <= last {
				return nil, fmt.Errorf("%s: turn %d has seq %d after seq %d; turns must be in increasing seq order", s.scope.Key(), i+1, t.Seq, last)
			}
			last = t.Seq
		}
		found, err := engine.CheckImport(cfg, s.scope, s.doc, s.turns)
		if err != nil {
			return nil, err
		}
		redacted = append(redacted, found...)
	}
	return redacted, nil
}

// redactedNote says which secrets an import redacted, by kind.
func redactedNote(found []memory.Redaction) string {
	counts := map[string]int{}
	var kinds []string
	for _, f := range found {
		if counts[f.Kind] == 0 {
			kinds = append(kinds, f.Kind)
		}
		counts[f.Kind] += f.Count
	}
	parts := make([]string, len(kinds))
	for i, k := range kinds {
		parts[i] = fmt.Sprintf("%d %s", counts[k], k)
	}
	return "secrets replaced by [redacted: KIND]: " + strings.Join(parts, ", ")
}

// targetScope is the scope of a single-scope import: --user (else
// fallback, else the configured user) and --agent.
func (o *importOptions) targetScope(fallback string) (memory.Scope, error) {
	sc := memory.Scope{UserID: o.user, AgentName: o.agent}
	if sc.UserID == "" {
		sc.UserID = fallback
	}
	if sc.UserID == "" {
		sc.UserID = o.defaultUser
	}
	return sc, sc.Validate()
}

func countThreads(turns []memory.Turn) int {
	threads := map[string]bool{}
	for _, t := range turns {
		threads[t.ThreadID] = true
	}
	return len(threads)
}

func countSections(d *memory.Document) int {
	n := 0
	for _, s := range d.Sections() {
		if strings.TrimSpace(s.Section.Summary) != "" {
			n++
		}
	}
	return n
}

// parseLooseTime parses the timestamps other memory systems write:
// RFC 3339 or "YYYY-MM-DD HH:MM:SS" (taken as UTC); empty is the zero time.
func parseLooseTime(s string) (time.Time, error) {
	if strings.TrimSpace(s) == "" {
		return time.Time{}, nil
	}
	t, err := memory.ParseTimestamp(s)
	if err != nil {
		return time.Time{}, fmt.Errorf("%q is not a time like 2026-06-11 16:47:59 or 2026-06-11T16:47:59Z", s)
	}
	return t, nil
}

// creditImport records that an import brought each fact the document's
// history does not know (another tool's memory has no history), so the
// fact history says who brought it. A mnemo export keeps its own history
// and is imported as it was.
func creditImport(doc *memory.Document, at time.Time) {
	known := make(map[string]bool, len(doc.FactEvents))
	for _, e := range doc.FactEvents {
		known[e.FactID] = true
	}
	for _, list := range [][]memory.Fact{doc.Facts, doc.Knowledge, doc.AssistantKnowledge} {
		for _, f := range list {
			if !known[f.ID] {
				doc.AddFactEvent(memory.FactEvent{FactID: f.ID, Event: memory.FactCreated, At: at, Source: f.Source,
					Reason: "imported", Content: f.Content, Actor: memory.ActorImport})
			}
		}
	}
}

// maxImportBytes bounds a file mnemo import reads: above any chat export
// seen, far below what a machine running mnemo holds.
const maxImportBytes = 1 << 30

// openImportFile opens a file to import: a regular file (not a device, a
// pipe or a directory) of at most maxImportBytes.
func openImportFile(path string) (*os.File, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, err
	}
	if !fi.Mode().IsRegular() {
		f.Close()
		return nil, fmt.Errorf("%s is not a regular file (%s); give the export file itself", path, fileKind(fi.Mode()))
	}
	if fi.Size() > maxImportBytes {
		f.Close()
		return nil, fmt.Errorf("%s is %d bytes; mnemo imports files of at most %d bytes: split the export", path, fi.Size(), int64(maxImportBytes))
	}
	return f, nil
}

// fileKind names what a file that is not a regular file is.
func fileKind(m os.FileMode) string {
	switch {
	case m.IsDir():
		return "a directory"
	case m&os.ModeDevice != 0:
		return "a device"
	case m&os.ModeNamedPipe != 0:
		return "a pipe"
	case m&os.ModeSocket != 0:
		return "a socket"
	}
	return "a special file"
}

// readImportFile reads a file to import (openImportFile's rules), never
// more than maxImportBytes of it even when it grows while read.
func readImportFile(path string) ([]byte, error) {
	f, err := openImportFile(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, maxImportBytes+1))
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	if len(data) > maxImportBytes {
		return nil, fmt.Errorf("%s grew past %d bytes while read; mnemo imports files of at most that size", path, int64(maxImportBytes))
	}
	return data, nil
}
