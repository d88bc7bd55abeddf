package update

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/mnemo-mcp/mnemo/memory"
)

// SectionUpdate is a new summary for one profile or history section.
type SectionUpdate struct {
	// Name is one of workContext, personalContext, topOfMind, recentMonths,
	// earlierContext, longTermBackground.
	Name    string
	Summary string
}

// NewFact is a fact the model proposes to add.
type NewFact struct {
	Content  string
	Category string
	// Confidence is in [0, 1].
	Confidence float64
	// SourceError is what went wrong; set only on correction facts.
	SourceError string
}

// Update is the validated content of a memory update reply.
type Update struct {
	// Sections are the sections to rewrite, in document order.
	Sections []SectionUpdate
	// NewFacts have a known category, non-empty content and a confidence in
	// [0, 1]; they are not yet checked against the threshold or the memory.
	NewFacts []NewFact
	// FactsToRemove are fact ids, deduplicated, in the order given; they are
	// not yet checked against the memory.
	FactsToRemove []string
	// UserKnowledge and AssistantKnowledge are MemoryOS knowledge entries
	// (from the analysis of a hot mid-term session); Category is
	// "knowledge", or "correction" for an entry that corrects earlier
	// knowledge. They are not yet checked against the memory.
	UserKnowledge      []NewFact
	AssistantKnowledge []NewFact
	// Notes say what was dropped or mapped, and why.
	Notes []string
}

// updateGroups are the section groups of the reply, with their sections in
// document order.
var updateGroups = []struct {
	key   string
	names []string
}{
	{"user", []string{"workContext", "personalContext", "topOfMind"}},
	{"history", []string{"recentMonths", "earlierContext", "longTermBackground"}},
}

// updateKeys are the top-level keys of an update object and the JSON kind
// (first byte) each must have.
var updateKeys = []struct {
	key  string
	kind byte
}{{"user", '{'}, {"history", '{'}, {"newFacts", '['}, {"factsToRemove", '['}}

// categorySynonyms maps names models use instead of the fact categories.
var categorySynonyms = sync.OnceValue(func() map[string]string {
	m := make(map[string]string)
	for cat, words := range map[string]string{
		memory.CategoryPreference: "preferences like likes dislike dislikes",
		memory.CategoryKnowledge:  "knowledges skill skills expertise",
		memory.CategoryContext:    "contexts background fact facts personal profile",
		memory.CategoryBehavior:   "behaviors behaviour behaviours habit habits pattern patterns",
		memory.CategoryGoal:       "goals objective objectives plan plans intention intentions",
		memory.CategoryCorrection: "corrections mistake mistakes error errors fix fixes",
	} {
		for _, w := range strings.Fields(words) {
			m[w] = cat
		}
	}
	return m
})

// ParseUpdate extracts a memory update from a language model reply. The
// reply may wrap the JSON object in prose, Markdown code fences or
// reasoning traces (<think>, <thinking>); the first JSON object that has
// at least one of the keys user, history, newFacts and factsToRemove, each
// of the right kind, is taken. Truncated or malformed JSON is never
// repaired. Items that do not validate are dropped one by one and noted in
// Update.Notes. The error wraps ErrBadReply when no update object is found.
func ParseUpdate(reply string) (*Update, error) {
	if len(reply) > memory.UpdateMaxReplyBytes {
		return nil, fmt.Errorf("parse update reply: %d bytes is over the %d-byte limit: %w", len(reply), memory.UpdateMaxReplyBytes, ErrBadReply)
	}
	obj, err := findUpdateObject(stripThinking(reply))
	if err != nil {
		return nil, err
	}
	p := &UpdateParser{}
	p.Sections(obj)
	if raw, ok := obj["newFacts"]; ok && !IsJSONNull(raw) {
		p.facts(raw)
	}
	if raw, ok := obj["factsToRemove"]; ok && !IsJSONNull(raw) {
		p.removals(raw)
	}
	if n := len(p.U.Notes); n > memory.UpdateMaxNotes {
		p.U.Notes = append(p.U.Notes[:memory.UpdateMaxNotes-1], fmt.Sprintf("and %d more notes", n-memory.UpdateMaxNotes+1))
	}
	return &p.U, nil
}

// findUpdateObject returns the first JSON object of s that is an update
// object.
func findUpdateObject(s string) (map[string]json.RawMessage, error) {
	truncated := false
	for obj, err := range jsonObjects(s) {
		switch {
		case err == nil && isUpdateObject(obj):
			return obj, nil
		case errors.Is(err, errTooManyCandidates):
			return nil, fmt.Errorf("parse update reply: no update object in the first %d candidates: %w", memory.UpdateMaxCandidates, ErrBadReply)
		case errors.Is(err, io.ErrUnexpectedEOF):
			truncated = true
		}
	}
	if truncated {
		return nil, fmt.Errorf("parse update reply: the JSON is truncated: %w", ErrBadReply)
	}
	return nil, fmt.Errorf("parse update reply: no JSON object with user, history, newFacts or factsToRemove: %w", ErrBadReply)
}

// isUpdateObject reports whether obj has at least one update key and every
// update key it has holds the right kind of value. A null counts as absent.
func isUpdateObject(obj map[string]json.RawMessage) bool {
	found := false
	for _, k := range updateKeys {
		raw, ok := obj[k.key]
		if !ok || IsJSONNull(raw) {
			continue
		}
		if jsonKind(raw) != k.kind {
			return false
		}
		found = true
	}
	return found
}

// UpdateParser collects a validated Update and its notes.
type UpdateParser struct{ U Update }

func (p *UpdateParser) note(format string, args ...any) {
	p.U.Notes = append(p.U.Notes, fmt.Sprintf(format, args...))
}

// Sections collects the sections marked for update, in document order.
func (p *UpdateParser) Sections(obj map[string]json.RawMessage) {
	for _, g := range updateGroups {
		raw, ok := obj[g.key]
		if !ok || IsJSONNull(raw) {
			continue
		}
		var group map[string]json.RawMessage
		if err := json.Unmarshal(raw, &group); err != nil {
			p.note("%s: not an object of sections, skipped", g.key)
			continue
		}
		for _, name := range g.names {
			if s, ok := group[name]; ok {
				p.section(g.key+"."+name, name, s)
			}
		}
		var unknown []string
		for name := range group {
			if !slices.Contains(g.names, name) {
				unknown = append(unknown, name)
			}
		}
		slices.Sort(unknown)
		for _, name := range unknown {
			p.note("%s.%s: unknown section, skipped", g.key, quoteForNote(name))
		}
	}
}

func (p *UpdateParser) section(path, name string, raw json.RawMessage) {
	if IsJSONNull(raw) {
		return
	}
	var in struct {
		Summary      json.RawMessage `json:"summary"`
		ShouldUpdate json.RawMessage `json:"shouldUpdate"`
	}
	if jsonKind(raw) != '{' || json.Unmarshal(raw, &in) != nil {
		p.note("%s: not an object, skipped", path)
		return
	}
	switch k := jsonKind(in.ShouldUpdate); {
	case k == 'f':
		return
	case k == 0 || k == 'n':
		if s, _ := jsonString(in.Summary); strings.TrimSpace(s) != "" {
			p.note("%s: has a summary but no shouldUpdate, skipped", path)
		}
		return
	case k != 't':
		p.note("%s: shouldUpdate is not a boolean, skipped", path)
		return
	}
	summary, ok := jsonString(in.Summary)
	summary = strings.TrimSpace(summary)
	switch {
	case !ok && len(in.Summary) > 0 && !IsJSONNull(in.Summary):
		p.note("%s: summary is not a string, skipped", path)
	case summary == "":
		p.note("%s: shouldUpdate is true but the summary is empty, skipped", path)
	case utf8.RuneCountInString(summary) > memory.UpdateMaxSummaryRunes:
		p.note("%s: summary is over %d characters, skipped", path, memory.UpdateMaxSummaryRunes)
	default:
		p.U.Sections = append(p.U.Sections, SectionUpdate{Name: name, Summary: summary})
	}
}

// facts collects the valid new facts.
func (p *UpdateParser) facts(raw json.RawMessage) {
	var items []json.RawMessage
	if err := json.Unmarshal(raw, &items); err != nil {
		p.note("newFacts: not a list, skipped")
		return
	}
	for i, item := range items {
		if len(p.U.NewFacts) == memory.UpdateMaxNewFacts {
			p.note("newFacts: more than %d valid facts, the last %d items skipped", memory.UpdateMaxNewFacts, len(items)-i)
			return
		}
		if f, ok := p.fact(fmt.Sprintf("newFacts[%d]", i), item); ok {
			p.U.NewFacts = append(p.U.NewFacts, f)
		}
	}
}

func (p *UpdateParser) fact(path string, raw json.RawMessage) (NewFact, bool) {
	var in struct {
		Content     json.RawMessage `json:"content"`
		Category    json.RawMessage `json:"category"`
		Confidence  json.RawMessage `json:"confidence"`
		SourceError json.RawMessage `json:"sourceError"`
	}
	if jsonKind(raw) != '{' || json.Unmarshal(raw, &in) != nil {
		p.note("%s: not an object, skipped", path)
		return NewFact{}, false
	}
	content, ok := jsonString(in.Content)
	content = strings.TrimSpace(content)
	switch {
	case !ok:
		p.note("%s: content is missing or not a string, skipped", path)
		return NewFact{}, false
	case content == "":
		p.note("%s: content is empty, skipped", path)
		return NewFact{}, false
	case utf8.RuneCountInString(content) > memory.UpdateMaxContentRunes:
		p.note("%s: content is over %d characters, skipped", path, memory.UpdateMaxContentRunes)
		return NewFact{}, false
	}
	conf, ok := p.confidence(path, in.Confidence)
	if !ok {
		return NewFact{}, false
	}
	cat, ok := p.category(path, in.Category)
	if !ok {
		return NewFact{}, false
	}
	f := NewFact{Content: content, Category: cat, Confidence: conf}
	if len(in.SourceError) > 0 && !IsJSONNull(in.SourceError) {
		se, ok := jsonString(in.SourceError)
		se = strings.TrimSpace(se)
		switch {
		case !ok:
			p.note("%s: sourceError is not a string, dropped", path)
		case se == "":
		case cat != memory.CategoryCorrection:
			p.note("%s: sourceError dropped: the category is %s, not correction", path, cat)
		case utf8.RuneCountInString(se) > memory.UpdateMaxContentRunes:
			p.note("%s: sourceError is over %d characters, dropped", path, memory.UpdateMaxContentRunes)
		default:
			f.SourceError = se
		}
	}
	return f, true
}

// confidence accepts a JSON number in [0, 1].
func (p *UpdateParser) confidence(path string, raw json.RawMessage) (float64, bool) {
	k := jsonKind(raw)
	if k == 0 || k == 'n' {
		p.note("%s: confidence is missing, skipped", path)
		return 0, false
	}
	if k != '-' && (k < '0' || k > '9') {
		p.note("%s: confidence is not a number, skipped", path)
		return 0, false
	}
	c, err := strconv.ParseFloat(string(bytes.TrimSpace(raw)), 64)
	if err != nil || math.IsNaN(c) || c < 0 || c > 1 {
		p.note("%s: confidence %s is not between 0 and 1, skipped", path, quoteForNote(string(raw)))
		return 0, false
	}
	if c == 0 {
		c = 0 // not -0
	}
	return c, true
}

// category maps a category name, case-insensitively, to a known category.
func (p *UpdateParser) category(path string, raw json.RawMessage) (string, bool) {
	s, ok := jsonString(raw)
	if !ok {
		p.note("%s: category is missing or not a string, skipped", path)
		return "", false
	}
	c := strings.ToLower(strings.TrimSpace(s))
	if memory.ValidCategory(c) {
		return c, true
	}
	if m, ok := categorySynonyms()[c]; ok {
		p.note("%s: category %s taken as %s", path, quoteForNote(s), m)
		return m, true
	}
	p.note("%s: unknown category %s, skipped", path, quoteForNote(s))
	return "", false
}

// removals collects the fact ids to remove.
func (p *UpdateParser) removals(raw json.RawMessage) {
	var items []json.RawMessage
	if err := json.Unmarshal(raw, &items); err != nil {
		p.note("factsToRemove: not a list, skipped")
		return
	}
	seen := make(map[string]bool)
	for i, item := range items {
		if len(p.U.FactsToRemove) == memory.UpdateMaxRemovals {
			p.note("factsToRemove: more than %d ids, the last %d items skipped", memory.UpdateMaxRemovals, len(items)-i)
			return
		}
		id, ok := jsonString(item)
		id = strings.TrimSpace(id)
		switch {
		case !ok:
			p.note("factsToRemove[%d]: not a string, skipped", i)
		case id == "":
			p.note("factsToRemove[%d]: empty id, skipped", i)
		case seen[id]:
		default:
			seen[id] = true
			p.U.FactsToRemove = append(p.U.FactsToRemove, id)
		}
	}
}
