package importers

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"time"

	"github.com/mnemo-mcp/mnemo/memory"
)

// A Format reads one foreign format. It converts and never stores: what
// it returns goes to the engine's Import, which applies the rules of the
// tools to every record.
type Format interface {
	// Name is the format's --format name.
	Name() string
	// Title names the format for people.
	Title() string
	// Detect reports whether src is of this format.
	Detect(src Source) bool
	// Parse reads src. Its errors name the record that is wrong.
	Parse(src Source, opt *Options) (*Parsed, error)
}

// Formats are the formats mnemo imports, in the order Detect tries them.
var Formats = []Format{chatGPT{}, claude{}, graph{}, mnemoExport{}, deerFlow{}, memoryOS{}}

// Lookup returns the format named name, or nil.
func Lookup(name string) Format {
	for _, f := range Formats {
		if f.Name() == name {
			return f
		}
	}
	return nil
}

// Names lists the names of Formats, for messages.
func Names() string {
	names := make([]string, len(Formats))
	for i, f := range Formats {
		names[i] = f.Name()
	}
	return strings.Join(names, ", ")
}

// IsHistory reports whether f is imported into an existing scope beside
// what it holds (a chat history or a knowledge graph) rather than into
// empty scopes.
func IsHistory(f Format) bool {
	switch f.(type) {
	case chatGPT, claude, graph:
		return true
	}
	return false
}

// Source is what a format reads: a file's content, or a directory.
type Source struct {
	// Path is the file or directory read, as named; it names the source
	// in messages.
	Path string
	// Dir marks a directory; Data is then nil.
	Dir bool
	// Data is the file's content.
	Data []byte
}

// Options are what the formats need besides the source.
type Options struct {
	// User and Agent name the target scope (--user, --agent); either may
	// be empty.
	User, Agent string
	// FromUser and FromAgent pick the scopes of a mnemo export
	// (--from-user, --from-agent); empty: every scope.
	FromUser, FromAgent string
	// DefaultUser is the configured user_id.
	DefaultUser string
	// Thread is the thread of imported turns that have none (MemoryOS).
	Thread string
	// Pending leaves imported MemoryOS turns for the updater.
	Pending bool
	// GraphUser names the user's entity of a knowledge graph.
	GraphUser string
	Now       time.Time
	NewTurnID func() string
	NewFactID func() string
}

// Parsed is what a format read: conversations, facts or whole scopes.
type Parsed struct {
	Conversations []memory.ImportedConversation
	Facts         []memory.ImportedFact
	Scopes        []memory.ImportedScope
	// Graph says what a knowledge graph held.
	Graph *GraphSummary
	// Notes say what the conversion changed, for the user.
	Notes []string
}

func (p *Parsed) note(format string, args ...any) {
	p.Notes = append(p.Notes, fmt.Sprintf(format, args...))
}

// Detect tells the format of src: a chat history or knowledge graph by
// its first record, a JSON object by what it says (a mnemo export) or
// holds (a DeerFlow memory.json), a directory as a MemoryOS data
// directory. The error says why none fits.
func Detect(src Source) (Format, error) {
	for _, f := range Formats {
		if f.Detect(src) {
			return f, nil
		}
	}
	var top map[string]json.RawMessage
	if err := json.Unmarshal(src.Data, &top); err != nil {
		return nil, fmt.Errorf("%s is not a JSON object (%v); give a ChatGPT or Claude export (conversations.json), a memory server's memory.jsonl, a mnemo export, a DeerFlow memory.json or a MemoryOS data directory", src.Path, err)
	}
	var format string
	json.Unmarshal(top["format"], &format)
	switch base := filepath.Base(src.Path); {
	case format != "":
		return nil, fmt.Errorf("%s has format %q, which mnemo does not know; pass --format if it is one of mnemo, memoryos, deerflow", src.Path, format)
	case base == "short_term.json" || base == "mid_term.json" || base == "long_term_user.json" || base == "long_term_assistant.json":
		return nil, fmt.Errorf("%s is one file of a MemoryOS memory; import its data directory (the one with users/ and assistants/) or its users/<id> directory", src.Path)
	}
	return nil, fmt.Errorf("cannot tell the format of %s; pass --format %s", src.Path, strings.ReplaceAll(Names(), ", memoryos", " or memoryos"))
}

// fileOnly refuses a directory for a format that reads a file.
func fileOnly(src Source, f Format) error {
	if src.Dir {
		return fmt.Errorf("%s is a directory; a %s is a file", src.Path, f.Title())
	}
	return nil
}
