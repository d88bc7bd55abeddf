package importers

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/mnemo-mcp/mnemo/memory"
)

// The mnemo export format: one JSON object (see docs/export.md), written
// by mnemo export and read here.
const (
	ExportFormat  = "mnemo-export"
	ExportVersion = 1
)

// ExportFile is a whole export: the memory of one or more scopes.
type ExportFile struct {
	Format     string        `json:"format"`
	Version    int           `json:"version"`
	ExportedAt time.Time     `json:"exported_at"`
	Generator  string        `json:"generator,omitempty"`
	Scopes     []ExportScope `json:"scopes"`
}

// ExportScope is one scope's memory: its document exactly as stored and
// its whole turn log in Seq order.
type ExportScope struct {
	Scope    memory.Scope     `json:"scope"`
	Document *memory.Document `json:"document"`
	Turns    []memory.Turn    `json:"turns"`
}

// mnemoExport is the format of a mnemo export.
type mnemoExport struct{}

func (mnemoExport) Name() string  { return "mnemo" }
func (mnemoExport) Title() string { return "mnemo export" }

// Detect takes a JSON object whose format is mnemo-export.
func (mnemoExport) Detect(src Source) bool {
	var format string
	json.Unmarshal(jsonObject(src)["format"], &format)
	return format == ExportFormat
}

// Parse reads a mnemo export. --user moves every scope to that user;
// --agent names the agent of a single-scope export.
func (f mnemoExport) Parse(src Source, opt *Options) (*Parsed, error) {
	if err := fileOnly(src, f); err != nil {
		return nil, err
	}
	return parseMnemoExport(src.Data, opt)
}

// jsonObject is the members of src's content when it is a JSON object;
// nil otherwise.
func jsonObject(src Source) map[string]json.RawMessage {
	if src.Dir {
		return nil
	}
	trimmed := bytes.TrimLeft(src.Data, " \t\r\n\ufeff")
	if len(trimmed) == 0 || trimmed[0] != '{' {
		return nil
	}
	var top map[string]json.RawMessage
	if json.Unmarshal(src.Data, &top) != nil {
		return nil
	}
	return top
}

// parseMnemoExport converts the content of a mnemo export.
func parseMnemoExport(data []byte, opt *Options) (*Parsed, error) {
	var file ExportFile
	dec := json.NewDecoder(bytes.NewReader(data))
	if err := dec.Decode(&file); err != nil {
		return nil, fmt.Errorf("not a valid mnemo export: %w", err)
	}
	if file.Format != ExportFormat {
		return nil, fmt.Errorf("format is %q, want %q", file.Format, ExportFormat)
	}
	if file.Version > ExportVersion {
		return nil, fmt.Errorf("written by a newer mnemo (export version %d; this one reads up to %d): upgrade mnemo", file.Version, ExportVersion)
	}
	if file.Version < 1 {
		return nil, fmt.Errorf("export version %d is not valid", file.Version)
	}
	picked, err := pickScopes(file.Scopes, opt)
	if err != nil {
		return nil, err
	}
	p := &Parsed{Scopes: make([]memory.ImportedScope, 0, len(picked))}
	for i, s := range picked {
		sc := s.Scope
		if opt.User != "" {
			sc.UserID = opt.User
		}
		if opt.Agent != "" {
			sc.AgentName = opt.Agent
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
		p.Scopes = append(p.Scopes, memory.ImportedScope{Scope: sc, Doc: doc, Turns: s.Turns})
	}
	return p, nil
}

// pickScopes is the scopes of an export to import: those --from-user and
// --from-agent pick (every scope without them). --user moves them to
// another user, so they must be one user's (the user and the user's
// agents); --agent renames one scope, so it must be a single one. When
// they are not, the error lists the scopes the export holds and how to
// pick.
func pickScopes(all []ExportScope, opt *Options) ([]ExportScope, error) {
	var picked []ExportScope
	for _, s := range all {
		if (opt.FromUser == "" || s.Scope.UserID == opt.FromUser) && (opt.FromAgent == "" || s.Scope.AgentName == opt.FromAgent) {
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
	case len(picked) == 0 && (opt.FromUser != "" || opt.FromAgent != ""):
		return nil, fmt.Errorf("holds no scope matching --from-user %q --from-agent %q; it holds %s", opt.FromUser, opt.FromAgent, held())
	case opt.User != "" && len(users) > 1:
		return nil, fmt.Errorf("holds the memory of %d users (%s), and --user %s would put them all in one; pick one user with --from-user U (and one agent with --from-agent A), or leave out --user to import each under its own name", len(users), held(), opt.User)
	case opt.Agent != "" && len(picked) > 1:
		return nil, fmt.Errorf("holds %d scopes (%s), and --agent %s renames a single one; pick one with --from-user U (a user without agents) or --from-user U --from-agent A", len(picked), held(), opt.Agent)
	}
	return picked, nil
}
