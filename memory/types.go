package memory

import (
	"encoding/json"
	"slices"
	"time"
)

// Role is the author of a chat message (OpenManus / OpenAI message model).
type Role string

// The message roles. RoleDeveloper is OpenAI's newer name for the system
// role and is handled as one.
const (
	RoleSystem    Role = "system"
	RoleDeveloper Role = "developer"
	RoleUser      Role = "user"
	RoleAssistant Role = "assistant"
	RoleTool      Role = "tool"
)

// Valid reports whether r is one of the known roles.
func (r Role) Valid() bool {
	switch r {
	case RoleSystem, RoleDeveloper, RoleUser, RoleAssistant, RoleTool:
		return true
	}
	return false
}

// ToolCall is a function call requested by an assistant message.
type ToolCall struct {
	ID       string `json:"id,omitempty"`
	Type     string `json:"type,omitempty"`
	Function struct {
		Name      string `json:"name"`
		Arguments string `json:"arguments,omitempty"`
	} `json:"function"`
}

// Message is one chat message as the host hands it over.
type Message struct {
	Role       Role       `json:"role"`
	Content    string     `json:"content"`
	ToolCalls  []ToolCall `json:"tool_calls,omitempty"`
	Name       string     `json:"name,omitempty"`
	ToolCallID string     `json:"tool_call_id,omitempty"`
}

// Signals are the correction / reinforcement cues found in user messages.
type Signals struct {
	Correction    bool `json:"correction,omitempty"`
	Reinforcement bool `json:"reinforcement,omitempty"`
}

// Or merges two signal sets: a cue seen in either is kept.
func (s Signals) Or(o Signals) Signals {
	return Signals{Correction: s.Correction || o.Correction, Reinforcement: s.Reinforcement || o.Reinforcement}
}

// Turn is one stored exchange: a user input and the assistant's final reply
// (after filtering), with the context it arrived in. Turns are appended to
// the scope's turn log and never rewritten; everything else is derived.
type Turn struct {
	// ID is unique across processes ("turn_" + UUIDv7).
	ID string `json:"id"`
	// Seq is the turn's position in its scope's log, assigned by the Store
	// under the scope lock; 1 for the first turn.
	Seq      int64  `json:"seq"`
	ThreadID string `json:"thread_id"`
	// Time is when the exchange happened: the caller's timestamp, else the
	// time it was stored.
	Time time.Time `json:"time"`
	// Stored is when add_memory accepted it.
	Stored   time.Time       `json:"stored"`
	User     string          `json:"user,omitempty"`
	Reply    string          `json:"reply,omitempty"`
	Signals  Signals         `json:"signals,omitzero"`
	MetaData json.RawMessage `json:"meta_data,omitempty"`
	// IdempotencyKey is the key the client sent with the exchange, if
	// any: a retry with the same key is answered with this turn.
	IdempotencyKey string `json:"idempotency_key,omitempty"`
}

// Text is the searchable text of the turn: user input and reply.
func (t *Turn) Text() string {
	switch {
	case t.User == "":
		return t.Reply
	case t.Reply == "":
		return t.User
	}
	return t.User + "\n" + t.Reply
}

// Fact categories (DeerFlow).
const (
	CategoryPreference = "preference"
	CategoryKnowledge  = "knowledge"
	CategoryContext    = "context"
	CategoryBehavior   = "behavior"
	CategoryGoal       = "goal"
	CategoryCorrection = "correction"
)

// Categories lists the fact categories in the order they are documented.
var Categories = []string{CategoryPreference, CategoryKnowledge, CategoryContext, CategoryBehavior, CategoryGoal, CategoryCorrection}

// ValidCategory reports whether c is a known fact category.
func ValidCategory(c string) bool {
	for _, k := range Categories {
		if c == k {
			return true
		}
	}
	return false
}

// Fact is one discrete thing remembered about the user. Its JSON names are
// those of tool results (snake_case); memory.json spells them as DeerFlow
// does (document_json.go).
type Fact struct {
	ID         string    `json:"id"`
	Content    string    `json:"content"`
	Category   string    `json:"category"`
	Confidence float64   `json:"confidence"`
	CreatedAt  time.Time `json:"created_at"`
	// Source is the thread the fact was extracted from, or "manual".
	Source string `json:"source"`
	// SourceError is what went wrong, kept only on correction facts.
	SourceError string `json:"source_error,omitempty"`
	// Sources are the other threads (or "manual", "cli") that stated the
	// fact again, or stated a near-duplicate merged into it, oldest first;
	// Source stays the first. Absent in files of earlier builds.
	Sources []string `json:"sources,omitempty"`
	// ValidFrom is when the fact became true as far as memory knows: when
	// the conversation it came from happened. Zero in files of earlier
	// builds, where CreatedAt stands for it (Since).
	ValidFrom time.Time `json:"valid_from,omitzero"`
	// ValidTo is when a replaced fact stopped being true; set only on the
	// facts of Document.PastFacts.
	ValidTo time.Time `json:"valid_to,omitzero"`
	// LastConfirmed is when a later conversation last stated the fact
	// again (or, for a correction, when it was last retrieved); zero until
	// then. Staleness counts from it, else from CreatedAt.
	LastConfirmed time.Time `json:"last_confirmed,omitzero"`
	// Pinned marks a fact the person or the host asked to keep in mind
	// in every conversation: it enters every retrieval as a standing
	// fact (recall.Standing), whatever is asked.
	Pinned bool `json:"pinned,omitempty"`
	// CorrectedAt is when the person or the host last changed the fact's
	// wording (the viewer, update_memory, "mnemo facts edit"): the
	// correction is what memory knows now, so ValidFrom moves to it too.
	// The fact history keeps the original time and wording.
	CorrectedAt time.Time `json:"corrected_at,omitzero"`
	// Replaced is the wording the last correction replaced, so that an
	// exchange still saying it can be shown as superseded.
	Replaced string `json:"replaced,omitempty"`
}

// Corrected reports whether a person or the host corrected the fact's
// wording.
func (f *Fact) Corrected() bool { return !f.CorrectedAt.IsZero() }

// Since is when the fact became true: ValidFrom, else CreatedAt.
func (f *Fact) Since() time.Time {
	if !f.ValidFrom.IsZero() {
		return f.ValidFrom
	}
	return f.CreatedAt
}

// Confirmed is when the fact was last stated or confirmed: LastConfirmed,
// else CreatedAt.
func (f *Fact) Confirmed() time.Time {
	if f.LastConfirmed.After(f.CreatedAt) {
		return f.LastConfirmed
	}
	return f.CreatedAt
}

// AllSources lists Source and Sources without repeats, oldest first.
func (f *Fact) AllSources() []string {
	out := make([]string, 0, 1+len(f.Sources))
	for _, s := range append([]string{f.Source}, f.Sources...) {
		if s != "" && !slices.Contains(out, s) {
			out = append(out, s)
		}
	}
	return out
}

// Section is one summary paragraph of the profile or history.
type Section struct {
	Summary   string    `json:"summary"`
	UpdatedAt time.Time `json:"updated_at,omitzero"`
}

// UserSections is the "user" part of the memory document.
type UserSections struct {
	WorkContext     Section `json:"work_context"`
	PersonalContext Section `json:"personal_context"`
	TopOfMind       Section `json:"top_of_mind"`
}

// HistorySections is the "history" part of the memory document.
type HistorySections struct {
	RecentMonths       Section `json:"recent_months"`
	EarlierContext     Section `json:"earlier_context"`
	LongTermBackground Section `json:"long_term_background"`
}

// SchemaVersion is the memory document version written by this build.
const SchemaVersion = "1.0"

// Document is a scope's long-term memory (DeerFlow schema v1.0, extended
// with MemoryOS knowledge lists and the per-thread watermarks that say
// which turns have been processed). Its JSON is the memory.json format,
// DeerFlow's camelCase names included (MarshalJSON, document_json.go);
// the parts it shares with tool results (Fact, Section, FactEvent) are
// snake_case elsewhere.
type Document struct {
	Version     string          `json:"version"`
	LastUpdated time.Time       `json:"lastUpdated,omitzero"`
	User        UserSections    `json:"user"`
	History     HistorySections `json:"history"`
	Facts       []Fact          `json:"facts"`
	// Knowledge holds what is known about the user (MemoryOS user knowledge).
	Knowledge []Fact `json:"knowledge,omitempty"`
	// AssistantKnowledge holds what the assistant stated, provided or
	// committed to (MemoryOS assistant knowledge).
	AssistantKnowledge []Fact `json:"assistantKnowledge,omitempty"`
	// Watermarks maps a thread id to the highest turn Seq of that thread
	// whose content is reflected in this document.
	Watermarks map[string]int64 `json:"watermarks,omitempty"`
	// Revision increases by one with every saved change; readers use it to
	// notice that another process changed the document.
	Revision int64 `json:"revision"`
	// TurnLogEpoch increases by one each time turns are removed from the
	// scope's turn log (Store.DeleteTurns); a reader that sees it change
	// drops what it read of the log and reads it again from the start.
	TurnLogEpoch int64 `json:"turnLogEpoch,omitempty"`
	// FactEvents is how the facts came to be, oldest first, bounded to the
	// newest MaxFactEvents.
	FactEvents []FactEvent `json:"factEvents,omitempty"`
	// SectionEvents is how the profile sections came to be, oldest
	// first, bounded to the newest MaxSectionEvents.
	SectionEvents []SectionEvent `json:"sectionEvents,omitempty"`
	// PastFacts are facts that a later conversation replaced, with their
	// validity interval (ValidTo set), newest last, bounded to
	// MaxPastFacts: what was true before, for questions about the past.
	PastFacts []Fact `json:"pastFacts,omitempty"`
	// RetiredFacts are facts retired for not being confirmed for a long
	// time (or merged away), newest last, bounded to MaxRetiredFacts;
	// RestoreFact brings one back.
	RetiredFacts []Fact `json:"retiredFacts,omitempty"`
	// MaintainedAt is when the last maintenance pass (consolidation and
	// staleness, Maintain) ran; decay is counted from it.
	MaintainedAt time.Time `json:"maintainedAt,omitzero"`
	// LLMConsolidatedAt is when the last consolidation pass with the
	// language model ran (ConsolidateWithLLM); it runs at most once a day.
	LLMConsolidatedAt time.Time `json:"llmConsolidatedAt,omitzero"`
	// Usage counts the model and embedding calls made for this scope, by
	// day (UTC), the newest UsageDays days.
	Usage []UsageDay `json:"usage,omitempty"`
}

// Fact event kinds.
const (
	FactCreated = "created"
	FactUpdated = "updated"
	FactRemoved = "removed"
	// FactMerged: the fact (FactID) was merged into another (Into), a
	// near-duplicate; it is kept in RetiredFacts.
	FactMerged = "merged"
	// FactConfirmed: a later conversation stated the fact (or a
	// near-duplicate of it) again; its confidence rose.
	FactConfirmed = "confirmed"
	// FactDecayed: the fact was not confirmed for fact_stale_after and
	// its confidence fell.
	FactDecayed = "decayed"
	// FactRetired: the fact's confidence fell below the floor; it is kept
	// in RetiredFacts and can be restored.
	FactRetired = "retired"
	// FactReplaced: a later conversation replaced the fact; it is kept in
	// PastFacts with its validity interval.
	FactReplaced = "replaced"
	// FactRestored: a retired, merged or replaced fact was brought back.
	FactRestored = "restored"
)

// Fact event sources other than a thread id.
const (
	SourceManual   = "manual"
	SourceCLI      = "cli"
	SourceRollback = "rollback"
)

// MaxFactEvents bounds Document.FactEvents; the oldest events go first.
const MaxFactEvents = 1000

// MaxSectionEvents bounds Document.SectionEvents; the oldest go first.
const MaxSectionEvents = 500

// SectionEvent is one change to one profile section: who wrote it, when,
// from where, and its text before and after (empty after: cleared).
type SectionEvent struct {
	// Section is the section's ProfileSections name.
	Section string    `json:"section"`
	At      time.Time `json:"at"`
	// Source is the thread the updater wrote it from, or SourceManual,
	// SourceCLI or SourceRollback.
	Source string `json:"source"`
	Reason string `json:"reason,omitempty"`
	// Actor is who made the change (ActorViewer, ActorAssistant, …).
	Actor Actor  `json:"actor,omitempty"`
	Old   string `json:"old,omitempty"`
	New   string `json:"new,omitempty"`
}

// AddSectionEvent appends e to the document's section history, dropping
// the oldest events beyond MaxSectionEvents.
func (d *Document) AddSectionEvent(e SectionEvent) {
	d.SectionEvents = append(d.SectionEvents, e)
	if n := len(d.SectionEvents) - MaxSectionEvents; n > 0 {
		d.SectionEvents = append(d.SectionEvents[:0:0], d.SectionEvents[n:]...)
	}
}

// FactEvent is one change to one fact: when, where it came from and why,
// with the fact's content after the change (before it, for a removal).
type FactEvent struct {
	FactID string `json:"fact_id"`
	// Event is FactCreated, FactUpdated or FactRemoved.
	Event string    `json:"event"`
	At    time.Time `json:"at"`
	// Source is the thread the change came from, or SourceManual,
	// SourceCLI or SourceRollback.
	Source  string `json:"source"`
	Reason  string `json:"reason,omitempty"`
	Content string `json:"content,omitempty"`
	// Actor is who made the change (ActorViewer, ActorAssistant, …);
	// absent in events of earlier builds and of calls that set none.
	Actor Actor `json:"actor,omitempty"`
	// Into is the fact a merged fact was merged into (FactMerged).
	Into string `json:"into,omitempty"`
	// Confidence is the fact's confidence after a FactConfirmed,
	// FactDecayed or FactRetired event.
	Confidence float64 `json:"confidence,omitempty"`
	// ValidFrom and ValidTo are the validity interval of a replaced fact
	// (FactReplaced).
	ValidFrom time.Time `json:"valid_from,omitzero"`
	ValidTo   time.Time `json:"valid_to,omitzero"`
}

// AddFactEvent appends e to the document's fact history, dropping the
// oldest events beyond MaxFactEvents.
func (d *Document) AddFactEvent(e FactEvent) {
	d.FactEvents = append(d.FactEvents, e)
	if n := len(d.FactEvents) - MaxFactEvents; n > 0 {
		d.FactEvents = append(d.FactEvents[:0:0], d.FactEvents[n:]...)
	}
}

// NewDocument returns an empty memory document of the current schema.
func NewDocument() *Document {
	return &Document{Version: SchemaVersion, Facts: []Fact{}}
}

// Clone returns a deep copy, so updates can work on a copy and leave the
// original untouched when they fail.
func (d *Document) Clone() *Document {
	c := *d
	c.Facts = append([]Fact{}, d.Facts...)
	c.Knowledge = append([]Fact(nil), d.Knowledge...)
	c.AssistantKnowledge = append([]Fact(nil), d.AssistantKnowledge...)
	c.FactEvents = append([]FactEvent(nil), d.FactEvents...)
	c.SectionEvents = append([]SectionEvent(nil), d.SectionEvents...)
	c.PastFacts = append([]Fact(nil), d.PastFacts...)
	c.RetiredFacts = append([]Fact(nil), d.RetiredFacts...)
	c.Usage = append([]UsageDay(nil), d.Usage...)
	for _, list := range [][]Fact{c.Facts, c.Knowledge, c.AssistantKnowledge, c.PastFacts, c.RetiredFacts} {
		for i := range list {
			list[i].Sources = slices.Clone(list[i].Sources)
		}
	}
	if d.Watermarks != nil {
		c.Watermarks = make(map[string]int64, len(d.Watermarks))
		for k, v := range d.Watermarks {
			c.Watermarks[k] = v
		}
	}
	return &c
}

// NamedSection is a section with its JSON name, for rendering.
type NamedSection struct {
	Name    string
	Section Section
}

// Sections lists the six profile and history sections in reading order.
func (d *Document) Sections() []NamedSection {
	return []NamedSection{
		{"workContext", d.User.WorkContext},
		{"personalContext", d.User.PersonalContext},
		{"topOfMind", d.User.TopOfMind},
		{"recentMonths", d.History.RecentMonths},
		{"earlierContext", d.History.EarlierContext},
		{"longTermBackground", d.History.LongTermBackground},
	}
}
