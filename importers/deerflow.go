package importers

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/mnemo-mcp/mnemo/memory"
)

// DeerFlow keeps one memory.json per user (and per agent) in the schema
// mnemo's document extends (version "1.0"): user and history sections of
// {summary, updatedAt}, and facts {id, content, category, confidence,
// createdAt, source, sourceError?}. Its timestamps are RFC 3339 or
// "YYYY-MM-DD HH:MM:SS".

type deerFlowSection struct {
	Summary   string `json:"summary"`
	UpdatedAt string `json:"updatedAt"`
}

type deerFlowFact struct {
	ID          string   `json:"id"`
	Content     any      `json:"content"`
	Category    string   `json:"category"`
	Confidence  *float64 `json:"confidence"`
	CreatedAt   string   `json:"createdAt"`
	Source      string   `json:"source"`
	SourceError string   `json:"sourceError"`
}

type deerFlowMemory struct {
	Version     string                     `json:"version"`
	LastUpdated string                     `json:"lastUpdated"`
	User        map[string]deerFlowSection `json:"user"`
	History     map[string]deerFlowSection `json:"history"`
	Facts       []deerFlowFact             `json:"facts"`
}

// deerFlow is the format of a DeerFlow memory.json.
type deerFlow struct{}

func (deerFlow) Name() string  { return "deerflow" }
func (deerFlow) Title() string { return "DeerFlow memory" }

// Detect takes a JSON object with facts, or with user and history
// sections, for a DeerFlow memory.
func (deerFlow) Detect(src Source) bool {
	top := jsonObject(src)
	return top["format"] == nil && (top["facts"] != nil || top["user"] != nil && top["history"] != nil)
}

// Parse converts a DeerFlow memory.json into one scope's document:
// --user (default the configured user) and --agent.
func (f deerFlow) Parse(src Source, opt *Options) (*Parsed, error) {
	if err := fileOnly(src, f); err != nil {
		return nil, err
	}
	return parseDeerFlow(src.Data, opt)
}

// parseDeerFlow converts the content of a DeerFlow memory.json.
func parseDeerFlow(data []byte, opt *Options) (*Parsed, error) {
	p := &Parsed{}
	var m deerFlowMemory
	if err := json.Unmarshal(data, &m); err != nil {
		return nil, fmt.Errorf("not a DeerFlow memory.json: %w", err)
	}
	if m.Version != "" && !strings.HasPrefix(m.Version, "1.") {
		p.note("DeerFlow memory version %q is not 1.x; read as 1.0", m.Version)
	}
	scope, err := opt.targetScope("")
	if err != nil {
		return nil, err
	}
	doc := memory.NewDocument()
	doc.Revision = 1
	if doc.LastUpdated, err = parseLooseTime(m.LastUpdated); err != nil {
		return nil, fmt.Errorf("lastUpdated: %w", err)
	}
	if doc.LastUpdated.IsZero() {
		doc.LastUpdated = opt.Now
	}
	targets := map[string]*memory.Section{
		"user.workContext":           &doc.User.WorkContext,
		"user.personalContext":       &doc.User.PersonalContext,
		"user.topOfMind":             &doc.User.TopOfMind,
		"history.recentMonths":       &doc.History.RecentMonths,
		"history.earlierContext":     &doc.History.EarlierContext,
		"history.longTermBackground": &doc.History.LongTermBackground,
	}
	for _, part := range []string{"user", "history"} {
		sections := m.User
		if part == "history" {
			sections = m.History
		}
		for _, name := range slices.Sorted(maps.Keys(sections)) {
			s := sections[name]
			dst := targets[part+"."+name]
			if dst == nil {
				p.note("skipped unknown section %s.%s", part, name)
				continue
			}
			dst.Summary = strings.TrimSpace(s.Summary)
			if dst.UpdatedAt, err = parseLooseTime(s.UpdatedAt); err != nil {
				return nil, fmt.Errorf("%s.%s.updatedAt: %w", part, name, err)
			}
		}
	}
	ids := map[string]bool{}
	renamed, skipped := 0, 0
	for i, f := range m.Facts {
		content, _ := f.Content.(string)
		content = strings.TrimSpace(content)
		if content == "" {
			skipped++
			continue
		}
		fact := memory.Fact{
			ID:         f.ID,
			Content:    content,
			Category:   f.Category,
			Confidence: 0.5, // DeerFlow's default
			Source:     strings.TrimSpace(f.Source),
		}
		if f.Confidence != nil {
			fact.Confidence = min(max(*f.Confidence, 0), 1)
		}
		if !memory.ValidCategory(fact.Category) {
			p.note("fact %d (%s): category %q is not one of %s; imported as context", i+1, f.ID, f.Category, strings.Join(memory.Categories, ", "))
			fact.Category = memory.CategoryContext
		}
		if fact.CreatedAt, err = parseLooseTime(f.CreatedAt); err != nil {
			return nil, fmt.Errorf("fact %d (%s) createdAt: %w", i+1, f.ID, err)
		}
		if fact.Source == "" {
			fact.Source = "unknown" // what DeerFlow writes without a thread
		}
		if se := strings.TrimSpace(f.SourceError); se != "" {
			if fact.Category == memory.CategoryCorrection {
				fact.SourceError = se
			} else {
				p.note("fact %s: sourceError dropped; mnemo keeps it on correction facts only", f.ID)
			}
		}
		if !validFactID(fact.ID) || ids[fact.ID] {
			fact.ID = newUniqueFactID(opt.NewFactID, ids)
			renamed++
		}
		ids[fact.ID] = true
		doc.Facts = append(doc.Facts, fact)
	}
	if skipped > 0 {
		p.note("skipped %s without text content", plural(skipped, "fact"))
	}
	if renamed > 0 {
		p.note("gave %s a new id (missing, malformed or repeated)", plural(renamed, "fact"))
	}
	creditImport(doc, opt.Now)
	p.Scopes = []memory.ImportedScope{{Scope: scope, Doc: doc}}
	return p, nil
}

// validFactID reports whether id is "fact_" + 8 lowercase hex digits, the
// form DeerFlow and mnemo write.
func validFactID(id string) bool {
	h, ok := strings.CutPrefix(id, "fact_")
	if !ok || len(h) != 8 {
		return false
	}
	return strings.Trim(h, "0123456789abcdef") == ""
}

// newUniqueFactID draws fact ids until one is not in taken.
func newUniqueFactID(newID func() string, taken map[string]bool) string {
	for {
		if id := newID(); !taken[id] && validFactID(id) {
			return id
		}
	}
}
