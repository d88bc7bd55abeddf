package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/mnemo-mcp/mnemo/memory"
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
	defaultUser string // the configured user_id
	thread      string // thread of imported turns that have none
	pending     bool   // leave imported turns for the updater
	now         time.Time
	newTurnID   func() string
	newFactID   func() string
	notes       []string // what the conversion changed, told to the user
}

func (o *importOptions) note(format string, args ...any) {
	o.notes = append(o.notes, fmt.Sprintf(format, args...))
}

// runImport is "mnemo import FILE [--format mnemo|memoryos|deerflow]
// [--user U] [--agent A]".
func runImport(ctx context.Context, e *call) int {
	stdout := e.stdout
	if len(e.args.positional) != 1 {
		return e.fail(exitUsage, "name one file or directory: mnemo import [--format mnemo|memoryos|deerflow] [--user U] [--agent A] PATH")
	}
	path := e.args.positional[0]
	opt := &importOptions{
		user:        e.args.str("user"),
		agent:       e.args.str("agent"),
		defaultUser: e.cfg.Memory.UserID,
		thread:      e.args.str("thread"),
		pending:     e.args.flag("pending"),
		now:         time.Now().UTC(),
		newTurnID:   func() string { return "turn_" + uuid.Must(uuid.NewV7()).String() },
		newFactID:   memory.NewFactID,
	}
	for _, id := range []struct{ field, v string }{{"--user", opt.user}, {"--agent", opt.agent}, {"--thread", opt.thread}} {
		if id.v != "" {
			if err := memory.ValidateID(id.field, id.v); err != nil {
				return e.fail(exitUsage, "%v", err)
			}
		}
	}
	format := e.args.str("format")
	if format == "" {
		f, err := detectFormat(path)
		if err != nil {
			return e.fail(exitUsage, "%v", err)
		}
		format = f
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
		return e.fail(exitUsage, "--format %q is not one of mnemo, memoryos, deerflow", format)
	}
	if err != nil {
		return e.fail(exitError, "read %s (%s format): %v", path, format, err)
	}
	if err := checkImport(scopes); err != nil {
		return e.fail(exitError, "%s: %v", path, err)
	}

	store, err := openStore(ctx, e.cfg, e.log)
	if err != nil {
		return e.fail(exitError, "%v", err)
	}
	defer store.Close()
	// Refuse before writing anything, so an import is all or nothing
	// unless writing itself fails.
	for _, s := range scopes {
		doc, err := store.LoadDocument(ctx, s.scope)
		if err != nil {
			return e.fail(exitError, "%v", err)
		}
		turns, err := store.ReadTurns(ctx, s.scope, 0)
		if err != nil {
			return e.fail(exitError, "%v", err)
		}
		if doc.Revision != 0 || len(turns) > 0 {
			return e.fail(exitError, "%s already holds memory (revision %d, %d turns); import only writes into an empty scope: import into another user with --user NAME, or delete it first with 'mnemo forget --user %s%s --yes' (after an export if you want to keep it)",
				s.scope.Key(), doc.Revision, len(turns), s.scope.UserID, agentFlag(s.scope))
		}
	}
	for i, s := range scopes {
		if err := store.ImportScope(ctx, s.scope, s.doc, s.turns); err != nil {
			done := make([]string, i)
			for j := range done {
				done[j] = scopes[j].scope.Key()
			}
			msg := fmt.Sprintf("import into %s: %v", s.scope.Key(), err)
			if i > 0 {
				msg += "; already imported: " + strings.Join(done, ", ")
			}
			return e.fail(exitError, "%s", msg)
		}
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
	data, err := os.ReadFile(path)
	if err != nil {
		return "", err
	}
	var top map[string]json.RawMessage
	if err := json.Unmarshal(data, &top); err != nil {
		return "", fmt.Errorf("%s is not a JSON object (%v); give a mnemo export, a DeerFlow memory.json or a MemoryOS data directory", path, err)
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
	return "", fmt.Errorf("cannot tell the format of %s; pass --format mnemo, memoryos or deerflow", path)
}

// readMnemoExport reads a mnemo export. --user moves every scope to
// that user; --agent names the agent of a single-scope export.
func readMnemoExport(path string, opt *importOptions) ([]importedScope, error) {
	data, err := os.ReadFile(path)
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
	if opt.agent != "" && len(file.Scopes) != 1 {
		return nil, fmt.Errorf("--agent renames the scope of a one-scope export, and this one holds %d", len(file.Scopes))
	}
	out := make([]importedScope, 0, len(file.Scopes))
	for i, s := range file.Scopes {
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

// checkImport validates what is about to be imported: distinct, valid
// scopes; turns with valid thread ids in increasing Seq order.
func checkImport(scopes []importedScope) error {
	if len(scopes) == 0 {
		return errors.New("holds no memory to import")
	}
	seen := map[memory.Scope]bool{}
	for _, s := range scopes {
		if err := s.scope.Validate(); err != nil {
			return err
		}
		if seen[s.scope] {
			return fmt.Errorf("holds scope %s twice", s.scope.Key())
		}
		seen[s.scope] = true
		if v := s.doc.Version; v != "" && v != memory.SchemaVersion {
			return fmt.Errorf("%s: memory document version %q is not %q", s.scope.Key(), v, memory.SchemaVersion)
		}
		var last int64
		for i, t := range s.turns {
			if t.Seq <= last {
				return fmt.Errorf("%s: turn %d has seq %d after seq %d; turns must be in increasing seq order", s.scope.Key(), i+1, t.Seq, last)
			}
			last = t.Seq
			if err := memory.ValidateID("thread_id", t.ThreadID); err != nil {
				return fmt.Errorf("%s: turn %s: %w", s.scope.Key(), t.ID, err)
			}
		}
	}
	return nil
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
