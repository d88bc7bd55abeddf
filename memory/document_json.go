package memory

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"
)

// diskDocument is Document as memory.json spells it; its fields are
// Document's, in the same order (TestDiskDocumentFields).
type diskDocument struct {
	Version            string             `json:"version"`
	LastUpdated        time.Time          `json:"lastUpdated,omitzero"`
	User               diskUser           `json:"user"`
	History            diskHistory        `json:"history"`
	Facts              []diskFact         `json:"facts"`
	Knowledge          []diskFact         `json:"knowledge,omitempty"`
	AssistantKnowledge []diskFact         `json:"assistantKnowledge,omitempty"`
	Watermarks         map[string]int64   `json:"watermarks,omitempty"`
	Revision           int64              `json:"revision"`
	TurnLogEpoch       int64              `json:"turnLogEpoch,omitempty"`
	FactEvents         []diskFactEvent    `json:"factEvents,omitempty"`
	SectionEvents      []diskSectionEvent `json:"sectionEvents,omitempty"`
	PastFacts          []diskFact         `json:"pastFacts,omitempty"`
	RetiredFacts       []diskFact         `json:"retiredFacts,omitempty"`
	MaintainedAt       time.Time          `json:"maintainedAt,omitzero"`
	LLMConsolidatedAt  time.Time          `json:"llmConsolidatedAt,omitzero"`
	Usage              []diskUsageDay     `json:"usage,omitempty"`
}

// diskFact is Fact as memory.json spells it. Fact and diskFact convert
// into each other: a field added to one and not the other fails to compile.
type diskFact struct {
	ID            string    `json:"id"`
	Content       string    `json:"content"`
	Category      string    `json:"category"`
	Confidence    float64   `json:"confidence"`
	CreatedAt     time.Time `json:"createdAt"`
	Source        string    `json:"source"`
	SourceError   string    `json:"sourceError,omitempty"`
	Sources       []string  `json:"sources,omitempty"`
	ValidFrom     time.Time `json:"validFrom,omitzero"`
	ValidTo       time.Time `json:"validTo,omitzero"`
	LastConfirmed time.Time `json:"lastConfirmed,omitzero"`
	Pinned        bool      `json:"pinned,omitempty"`
	CorrectedAt   time.Time `json:"correctedAt,omitzero"`
	Replaced      string    `json:"replaced,omitempty"`
}

// diskSection is Section as memory.json spells it.
type diskSection struct {
	Summary   string    `json:"summary"`
	UpdatedAt time.Time `json:"updatedAt,omitzero"`
}

// diskUser is UserSections as memory.json spells it.
type diskUser struct {
	WorkContext     diskSection `json:"workContext"`
	PersonalContext diskSection `json:"personalContext"`
	TopOfMind       diskSection `json:"topOfMind"`
}

// diskHistory is HistorySections as memory.json spells it.
type diskHistory struct {
	RecentMonths       diskSection `json:"recentMonths"`
	EarlierContext     diskSection `json:"earlierContext"`
	LongTermBackground diskSection `json:"longTermBackground"`
}

// diskFactEvent is FactEvent as memory.json spells it.
type diskFactEvent struct {
	FactID     string    `json:"factId"`
	Event      string    `json:"event"`
	At         time.Time `json:"at"`
	Source     string    `json:"source"`
	Reason     string    `json:"reason,omitempty"`
	Content    string    `json:"content,omitempty"`
	Actor      Actor     `json:"actor,omitempty"`
	Into       string    `json:"into,omitempty"`
	Confidence float64   `json:"confidence,omitempty"`
	ValidFrom  time.Time `json:"validFrom,omitzero"`
	ValidTo    time.Time `json:"validTo,omitzero"`
}

// diskSectionEvent is SectionEvent as memory.json spells it.
type diskSectionEvent struct {
	Section string    `json:"section"`
	At      time.Time `json:"at"`
	Source  string    `json:"source"`
	Reason  string    `json:"reason,omitempty"`
	Actor   Actor     `json:"actor,omitempty"`
	Old     string    `json:"old,omitempty"`
	New     string    `json:"new,omitempty"`
}

// diskUsageDay is UsageDay as memory.json spells it.
type diskUsageDay struct {
	Day               string `json:"day"`
	LLMCalls          int    `json:"llmCalls,omitempty"`
	PromptTokens      int    `json:"promptTokens,omitempty"`
	CompletionTokens  int    `json:"completionTokens,omitempty"`
	LLMFailures       int    `json:"llmFailures,omitempty"`
	EmbeddingCalls    int    `json:"embeddingCalls,omitempty"`
	EmbeddingTokens   int    `json:"embeddingTokens,omitempty"`
	EmbeddingFailures int    `json:"embeddingFailures,omitempty"`
	Deferred          int    `json:"deferred,omitempty"`
}

// MarshalJSON encodes the document in the memory.json format. It leaves
// '<', '>' and '&' as they are: the caller's encoder escapes them or not.
func (d Document) MarshalJSON() ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(d.disk()); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n")), nil
}

// UnmarshalJSON decodes a document in the memory.json format.
func (d *Document) UnmarshalJSON(data []byte) error {
	var dd diskDocument
	if err := json.Unmarshal(data, &dd); err != nil {
		return err
	}
	*d = Document{
		Version:     dd.Version,
		LastUpdated: dd.LastUpdated,
		User: UserSections{
			WorkContext:     Section(dd.User.WorkContext),
			PersonalContext: Section(dd.User.PersonalContext),
			TopOfMind:       Section(dd.User.TopOfMind),
		},
		History: HistorySections{
			RecentMonths:       Section(dd.History.RecentMonths),
			EarlierContext:     Section(dd.History.EarlierContext),
			LongTermBackground: Section(dd.History.LongTermBackground),
		},
		Facts:              convertAll(dd.Facts, func(f diskFact) Fact { return Fact(f) }),
		Knowledge:          convertAll(dd.Knowledge, func(f diskFact) Fact { return Fact(f) }),
		AssistantKnowledge: convertAll(dd.AssistantKnowledge, func(f diskFact) Fact { return Fact(f) }),
		Watermarks:         dd.Watermarks,
		Revision:           dd.Revision,
		TurnLogEpoch:       dd.TurnLogEpoch,
		FactEvents:         convertAll(dd.FactEvents, func(e diskFactEvent) FactEvent { return FactEvent(e) }),
		SectionEvents:      convertAll(dd.SectionEvents, func(e diskSectionEvent) SectionEvent { return SectionEvent(e) }),
		PastFacts:          convertAll(dd.PastFacts, func(f diskFact) Fact { return Fact(f) }),
		RetiredFacts:       convertAll(dd.RetiredFacts, func(f diskFact) Fact { return Fact(f) }),
		MaintainedAt:       dd.MaintainedAt,
		LLMConsolidatedAt:  dd.LLMConsolidatedAt,
		Usage:              convertAll(dd.Usage, func(u diskUsageDay) UsageDay { return UsageDay(u) }),
	}
	return nil
}

// disk returns d in the memory.json spelling.
func (d *Document) disk() diskDocument {
	return diskDocument{
		Version:     d.Version,
		LastUpdated: d.LastUpdated,
		User: diskUser{
			WorkContext:     diskSection(d.User.WorkContext),
			PersonalContext: diskSection(d.User.PersonalContext),
			TopOfMind:       diskSection(d.User.TopOfMind),
		},
		History: diskHistory{
			RecentMonths:       diskSection(d.History.RecentMonths),
			EarlierContext:     diskSection(d.History.EarlierContext),
			LongTermBackground: diskSection(d.History.LongTermBackground),
		},
		Facts:              convertAll(d.Facts, func(f Fact) diskFact { return diskFact(f) }),
		Knowledge:          convertAll(d.Knowledge, func(f Fact) diskFact { return diskFact(f) }),
		AssistantKnowledge: convertAll(d.AssistantKnowledge, func(f Fact) diskFact { return diskFact(f) }),
		Watermarks:         d.Watermarks,
		Revision:           d.Revision,
		TurnLogEpoch:       d.TurnLogEpoch,
		FactEvents:         convertAll(d.FactEvents, func(e FactEvent) diskFactEvent { return diskFactEvent(e) }),
		SectionEvents:      convertAll(d.SectionEvents, func(e SectionEvent) diskSectionEvent { return diskSectionEvent(e) }),
		PastFacts:          convertAll(d.PastFacts, func(f Fact) diskFact { return diskFact(f) }),
		RetiredFacts:       convertAll(d.RetiredFacts, func(f Fact) diskFact { return diskFact(f) }),
		MaintainedAt:       d.MaintainedAt,
		LLMConsolidatedAt:  d.LLMConsolidatedAt,
		Usage:              convertAll(d.Usage, func(u UsageDay) diskUsageDay { return diskUsageDay(u) }),
	}
}

// convertAll converts every element of in, keeping nil apart from empty
// ("facts": [] is not "facts": null).
func convertAll[S, D any](in []S, conv func(S) D) []D {
	if in == nil {
		return nil
	}
	out := make([]D, len(in))
	for i, v := range in {
		out[i] = conv(v)
	}
	return out
}

// ParseDocument decodes a stored memory document (memory.json, a kept
// version, a database row), refusing one written with another major
// version; a document without facts gets an empty list. Both stores read
// documents through it.
func ParseDocument(raw []byte) (*Document, error) {
	var d Document
	if err := json.Unmarshal(raw, &d); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrCorrupt, err)
	}
	if err := CheckDocumentVersion(d.Version); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrCorrupt, err)
	}
	if d.Facts == nil {
		d.Facts = []Fact{}
	}
	return &d, nil
}

// CheckDocumentVersion accepts the document versions this build reads:
// those with the major number of SchemaVersion.
func CheckDocumentVersion(v string) error {
	want, _, _ := strings.Cut(SchemaVersion, ".")
	if major, _, _ := strings.Cut(v, "."); major != want {
		return fmt.Errorf("version %q is not %s.x (written by another version of mnemo?)", v, want)
	}
	return nil
}

// ImportDocument is what a Store's ImportScope writes of doc (a new
// document when nil): a copy with the schema version set and a facts list
// that is never null, after checking that this build can load it and that
// turns are in increasing Seq order with valid meta_data. The errors are
// InputErrors.
func ImportDocument(doc *Document, turns []Turn) (*Document, error) {
	if doc == nil {
		doc = NewDocument()
	}
	if err := checkImportOrder(doc, turns); err != nil {
		return nil, err
	}
	d := doc.Clone()
	if d.Version == "" {
		d.Version = SchemaVersion
	}
	if d.Facts == nil {
		d.Facts = []Fact{}
	}
	return d, nil
}

func checkImportOrder(doc *Document, turns []Turn) error {
	if doc.Version != "" {
		if err := CheckDocumentVersion(doc.Version); err != nil {
			return &InputError{Field: "version", Message: err.Error()}
		}
	}
	var prev int64
	for i, t := range turns {
		switch {
		case t.Seq <= prev:
			return &InputError{Field: "turns", Message: fmt.Sprintf("turn %d (%s) has seq %d, not above %d; seq must increase from 1", i, t.ID, t.Seq, prev)}
		case len(t.MetaData) > 0 && !json.Valid(t.MetaData):
			return &InputError{Field: "meta_data", Message: fmt.Sprintf("turn %d (%s): not valid JSON", i, t.ID)}
		}
		prev = t.Seq
	}
	return nil
}

// NextRevision is what every Store.UpdateDocument saves: a copy of cur
// changed by fn, one revision up, stamped now, with the schema version
// set (and one this build can load) and a facts list that is never null.
// fn's error, or ctx's once fn returned, is returned as is.
func NextRevision(ctx context.Context, cur *Document, fn func(*Document) error, now time.Time) (*Document, error) {
	next := cur.Clone()
	if err := fn(next); err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	next.Revision = cur.Revision + 1
	next.LastUpdated = now.UTC()
	if next.Version == "" {
		next.Version = SchemaVersion
	}
	if err := CheckDocumentVersion(next.Version); err != nil {
		return nil, fmt.Errorf("refusing to save a document this build could not load: %w", err)
	}
	if next.Facts == nil {
		next.Facts = []Fact{}
	}
	return next, nil
}
