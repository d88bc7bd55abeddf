package memory

import (
	"encoding/json"
	"strings"
	"time"
)

// AddRequest is one add_memory call: either UserInput+AgentResponse or
// Messages, plus where it belongs.
type AddRequest struct {
	UserID        string
	AgentName     string
	ThreadID      string
	UserInput     string
	AgentResponse string
	Messages      []Message
	// Timestamp is when the exchange happened: RFC 3339 or
	// "YYYY-MM-DD HH:MM:SS" (UTC); empty means now.
	Timestamp string
	// MetaData is a JSON object stored with the turn and returned verbatim.
	MetaData json.RawMessage
	// IdempotencyKey, when set, identifies the exchange across a client's
	// retries: the same exchange sent again with it within DuplicateWindow
	// is answered with the stored turns instead of being stored twice.
	IdempotencyKey string
	// Facts are the lasting facts the host's model distilled from the
	// exchange; they take the path of extracted facts (host_facts.go).
	Facts []HostFact
}

// DuplicateWindow is how long after an exchange was stored the same
// exchange sent again to the same thread (a client retrying after a
// time-out) is answered with the stored turns rather than stored twice.
const DuplicateWindow = 2 * time.Minute

// AddResult reports what add_memory stored.
type AddResult struct {
	Scope    Scope        `json:"scope"`
	ThreadID string       `json:"thread_id"`
	TurnIDs  []string     `json:"turn_ids"`
	Filter   FilterReport `json:"filter"`
	Signals  Signals      `json:"signals"`
	Pending  PendingInfo  `json:"pending"`
	// Duplicate is set when the exchange was already stored (a retry):
	// TurnIDs are the turns stored then, and nothing was stored again.
	Duplicate bool `json:"duplicate,omitempty"`
	// Redacted counts the secrets replaced by "[redacted: KIND]" before
	// the turns were written, by kind; empty when there were none.
	Redacted []Redaction `json:"redacted,omitempty"`
	// Facts says what became of each fact passed with the exchange, in
	// order: kept, merged with a known fact, or refused with the reason.
	Facts []HostFactResult `json:"facts,omitempty"`
	// Ask is what the memory needs from the host's model, if anything:
	// the lasting facts of the exchange when no extraction model is
	// configured, or the right approach after a correction.
	Ask string `json:"ask,omitempty"`
	// Note explains a call that stored nothing.
	Note string `json:"note,omitempty"`
}

// PendingInfo says how much background work waits for the updater.
// Without an extraction model there is no updater and nothing waits: the
// host's model passes the facts with add_memory, so Turns is 0 and LLM is
// KeylessMode.
type PendingInfo struct {
	Turns int `json:"turns"`
	// Threads maps a thread id to its pending turns: the thread of the
	// call and otherwise the maxPendingThreads busiest ones.
	Threads map[string]int `json:"threads,omitempty"`
	// OtherThreads counts the threads with pending turns left out of
	// Threads, so an answer stays small however many threads a user has.
	OtherThreads int `json:"other_threads,omitempty"`
	// LLM is KeylessMode or the state of the configured model.
	LLM string `json:"llm"`
	// Deferred, when set, says that extraction waits for the daily token
	// budget to renew (daily_token_budget).
	Deferred string `json:"deferred,omitempty"`
}

// KeylessMode is PendingInfo.LLM without an extraction model: a complete
// mode in which the host's model is the extraction model.
const KeylessMode = "not configured, and none is needed: the host's model passes the lasting facts with add_memory (facts), kept at once; " +
	"every exchange is stored and searchable, and none waits for extraction"

// SourceConsolidation is the source of the events of the consolidation
// pass with the model.
const SourceConsolidation = "consolidation"

// DefaultManualConfidence is the confidence of a saved fact that gives none.
const DefaultManualConfidence = 0.9

// SaveFactRequest is one save_memory call: a fact to remember as given.
type SaveFactRequest struct {
	UserID    string
	AgentName string
	Content   string
	// Category is one of Categories; empty means CategoryContext.
	Category string
	// Confidence is in (0, 1]; 0 means DefaultManualConfidence.
	Confidence float64
	// Pinned makes the fact standing: it enters every retrieval
	// (Fact.Pinned). Saving a stored fact again with Pinned pins it.
	Pinned bool
	// Source is SourceManual (the default) or SourceCLI.
	Source string
}

// SaveFactResult is what SaveFact stored, or the fact that already said
// the same thing.
type SaveFactResult struct {
	Scope Scope `json:"scope"`
	Fact  Fact  `json:"fact"`
	// Duplicate is true when a fact with the same content was already
	// stored (Fact is that fact and nothing changed), or one that says
	// nearly the same (Fact is that fact, the new wording merged into it
	// and its confidence raised; Notes say so).
	Duplicate bool `json:"duplicate"`
	// Evicted are ids of facts dropped to stay within max_facts.
	Evicted []string `json:"evicted,omitempty"`
	// Notes say what was adjusted (for example upload sentences removed).
	Notes []string `json:"notes,omitempty"`
	// Redacted counts the secrets replaced by "[redacted: KIND]" in the
	// content, by kind.
	Redacted []Redaction `json:"redacted,omitempty"`
}

// UpdateFactRequest is one update_memory call. Nil fields are left as
// they are; at least one must be set.
type UpdateFactRequest struct {
	UserID     string
	AgentName  string
	ID         string
	Content    *string
	Category   *string
	Confidence *float64
	// Pinned, when set, pins the fact (true) or unpins it (false).
	Pinned *bool
	// Source is SourceManual (the default) or SourceCLI.
	Source string
}

// UpdateFactResult is the fact after the change and what it was before.
type UpdateFactResult struct {
	Scope    Scope    `json:"scope"`
	Fact     Fact     `json:"fact"`
	Previous Fact     `json:"previous"`
	Changed  []string `json:"changed"`
	// Redacted counts the secrets replaced by "[redacted: KIND]" in the
	// new content, by kind.
	Redacted []Redaction `json:"redacted,omitempty"`
}

// FlushRequest is one flush_memory call: the scope, optionally one thread.
type FlushRequest struct {
	UserID    string
	AgentName string
	ThreadID  string
	// Progress, when set, is called before each thread is processed and
	// at the end, with the turns processed so far of those pending and
	// what is being done.
	Progress func(done, total int, message string)
}

// FlushResult reports what a flush did and what is still pending, and why.
type FlushResult struct {
	Scope          Scope    `json:"scope"`
	ThreadID       string   `json:"thread_id,omitempty"`
	TurnsProcessed int      `json:"turns_processed"`
	FactsAdded     []string `json:"facts_added"`
	FactsRemoved   []string `json:"facts_removed"`
	// FactsConfirmed are facts stated again by the conversations: their
	// confidence rose.
	FactsConfirmed []string `json:"facts_confirmed,omitempty"`
	// Maintenance is what the maintenance pass at the end of the flush
	// merged, decayed and retired (consolidation and staleness).
	Maintenance     *MaintainReport `json:"maintenance,omitempty"`
	SectionsUpdated []string        `json:"sections_updated"`
	Ignored         []string        `json:"ignored,omitempty"`
	Pending         PendingInfo     `json:"pending"`
	// Running lists the threads whose update was still running (or not
	// yet started) when the wait ended; it goes on in the background.
	Running []string `json:"running,omitempty"`
	// EmbeddingBacklog is how many stored exchanges are not embedded yet
	// (vector retrieval only); they are ranked by words until they are.
	EmbeddingBacklog int `json:"embedding_backlog,omitempty"`
	// Reason says why turns are still pending, if any are.
	Reason string `json:"reason,omitempty"`
}

// ForgetEverything is the confirmation Forget needs to delete a whole scope.
const ForgetEverything = "forget everything"

// ForgetRequest is one forget_memory call: facts by id, exchanges by id or
// whole thread, or — with AllOfScope and Confirm set to ForgetEverything
// — the whole scope.
type ForgetRequest struct {
	UserID     string
	AgentName  string
	FactIDs    []string
	TurnIDs    []string
	ThreadID   string
	AllOfScope bool
	Confirm    string
	// Source is SourceManual (the default) or SourceCLI.
	Source string
	// KeepFacts keeps the facts extracted from a thread that the forget
	// leaves without turns; they are listed in DerivedFactsKept.
	KeepFacts bool
	// Topic forgets the items chosen (FactIDs, TurnIDs, Sections) from
	// what FindTopic lists for it: each must be among them, Confirm must
	// be ForgetTopicConfirm(Topic), and nothing else is touched (the
	// facts of a thread left without turns are kept).
	Topic string
	// Sections are profile sections (ProfileSections names) to clear;
	// only with Topic.
	Sections []string
}

// ForgetTopicConfirm is the confirmation a forget of a topic's items
// needs.
func ForgetTopicConfirm(topic string) string {
	return "forget everything about " + strings.Join(strings.Fields(topic), " ")
}

// Kinds of Mention.
const (
	MentionFact    = "fact"
	MentionSection = "profile_section"
	MentionTurn    = "turn"
)

// Actions a Mention suggests.
const (
	ActionForget = "forget"
	ActionEdit   = "edit"
)

// Mention is one remembered item that mentions a topic, or what a forget
// removed: a fact, a profile section or a stored exchange.
type Mention struct {
	// Kind is MentionFact, MentionSection or MentionTurn.
	Kind string `json:"kind"`
	// ID is the fact's or the exchange's id; Section the profile
	// section's name (ProfileSections).
	ID       string    `json:"id,omitempty"`
	Section  string    `json:"section,omitempty"`
	ThreadID string    `json:"thread_id,omitempty"`
	Time     time.Time `json:"timestamp,omitzero"`
	// Text is what the item says (an exchange's two sides joined), cut.
	Text string `json:"text"`
	// Words are the words and names it was found by.
	Words []string `json:"words"`
	// Action is what to do with it: ActionForget for a fact or an
	// exchange, ActionEdit for a profile section (edit or clear it).
	Action string `json:"action"`
}

// MaxMentions bounds the mentions a forget or a topic search lists.
const MaxMentions = 200

// TopicRequest is a search for everything that mentions a topic.
type TopicRequest struct {
	UserID    string
	AgentName string
	// Topic is a few words or a name ("Lisbon"); an item mentions it when
	// it holds every one of its words (word forms meet).
	Topic string
}

// TopicResult is what mentions a topic: the preview of a topic forget.
type TopicResult struct {
	Scope Scope  `json:"scope"`
	Topic string `json:"topic"`
	// Words are the topic's words searched for.
	Words    []string  `json:"words"`
	Mentions []Mention `json:"mentions"`
	// More counts the mentions left out beyond MaxMentions.
	More int `json:"more,omitempty"`
	// Confirm is the phrase ForgetRequest.Confirm needs to forget them.
	Confirm string `json:"confirm"`
}

// ForgottenTurn identifies a removed exchange.
type ForgottenTurn struct {
	ID       string    `json:"id"`
	ThreadID string    `json:"thread_id"`
	Time     time.Time `json:"timestamp"`
}

// ForgetResult is what Forget removed.
type ForgetResult struct {
	Scope        Scope           `json:"scope"`
	FactsRemoved []Fact          `json:"facts_removed"`
	TurnsRemoved []ForgottenTurn `json:"turns_removed"`
	// NotFound are requested fact and turn ids the scope does not hold.
	NotFound []string `json:"not_found,omitempty"`
	// ScopeForgotten is true when the whole scope was deleted; for a
	// user's shared memory, every agent memory of the user went with it.
	ScopeForgotten bool `json:"scope_forgotten"`
	// DerivedFactsRemoved are facts and knowledge entries that the updater
	// extracted from a thread this forget left with no turn: their only
	// source is gone, so they are forgotten with it (unless KeepFacts).
	DerivedFactsRemoved []Fact `json:"derived_facts_removed"`
	// DerivedFactsKept are facts extracted from a thread that lost turns
	// but were kept: the thread still has turns (a fact records its
	// thread, not its turns, so it may come from one that is kept), or
	// KeepFacts was set. They may still say what was forgotten.
	DerivedFactsKept []Fact `json:"derived_facts_kept,omitempty"`
	// SectionsMayMention are the profile sections (ProfileSections names)
	// that may still mention it: rewritten since the first forgotten turn
	// that the updater had processed was stored, or holding its words and
	// names (MayMention). They are not re-derived; clear or rewrite them
	// with UpdateProfile.
	SectionsMayMention []string `json:"sections_may_mention,omitempty"`
	// VersionsScrubbed is how many kept versions of the memory document
	// were deleted because they held forgotten text.
	VersionsScrubbed int `json:"versions_scrubbed"`
	// SectionsCleared are the profile sections a topic forget cleared.
	SectionsCleared []string `json:"sections_cleared,omitempty"`
	// MentionWords are the words and names of what was forgotten that
	// the rest of memory was searched for; MayMention what still holds
	// them (facts, profile sections whoever wrote them, exchanges), each
	// with its action. An empty MayMention after a search means none
	// was found.
	MentionWords []string  `json:"mention_words"`
	MayMention   []Mention `json:"may_mention"`
	// Preview is what mentions a topic, when forget_memory was given a
	// topic to preview: nothing was deleted.
	Preview *TopicResult `json:"preview,omitempty"`
}

// HistoryRequest is one memory_history call.
type HistoryRequest struct {
	UserID    string
	AgentName string
	// FactID selects one fact's events; empty means the latest events of
	// every fact.
	FactID string
	// Section selects one profile section's events (ProfileSections
	// name) instead of the facts'; not used with FactID.
	Section string
	// Limit bounds the events returned: DefaultListLimit when 0, at most
	// MaxListLimit.
	Limit int
	// Offset skips that many of the newest events of the scope (a page of
	// the latest events); not used with FactID.
	Offset int
}

// HistoryResult is how facts came to be. For one fact the events are
// oldest first (its story); for all facts, newest first.
type HistoryResult struct {
	Scope  Scope       `json:"scope"`
	FactID string      `json:"fact_id,omitempty"`
	Events []FactEvent `json:"events"`
	// Section is the profile section asked about; SectionEvents its
	// events oldest first, or without FactID and Section the latest
	// events of every section, newest first. Who wrote a section (Actor)
	// and what it said before and after are kept until a forget clears
	// the section.
	Section       string         `json:"section,omitempty"`
	SectionEvents []SectionEvent `json:"section_events"`
	// Current is the fact as it is now; absent when it was removed.
	Current *Fact `json:"current,omitempty"`
	// Total is how many events there are for the request.
	Total int `json:"total"`
}

// Limits on the facts the host's model passes with an exchange.
const (
	// MaxHostFacts is the most facts one add_memory call may carry; the
	// rest are refused. An exchange rarely holds more than a few.
	MaxHostFacts = 20
	// MaxHostFactRunes bounds one fact's content: a fact is one short
	// sentence, not a summary of the exchange.
	MaxHostFactRunes = 500
)

// Outcomes of a host fact.
const (
	HostFactKept    = "kept"
	HostFactMerged  = "merged"
	HostFactRefused = "refused"
)

// HostFact is a fact the host's model distilled from the exchange it
// stores with add_memory: it takes the same path as the facts a language
// model extracts (threshold, de-duplication, limits, history).
type HostFact struct {
	Content  string
	Category string
	// Confidence is in (0, 1]; 0 means DefaultManualConfidence.
	Confidence float64
	// SourceError is what went wrong; kept on correction facts only.
	SourceError string
}

// HostFactResult says what became of one host fact.
type HostFactResult struct {
	Content string `json:"content"`
	// Status is kept (a new fact), merged (the fact was known already:
	// FactID is the known one) or refused (Reason says why).
	Status string `json:"status"`
	FactID string `json:"fact_id,omitempty"`
	Reason string `json:"reason,omitempty"`
}

// List kinds.
const (
	ListFacts   = "facts"
	ListTurns   = "turns"
	ListThreads = "threads"
)

// Pagination bounds of List and FactHistory.
const (
	DefaultListLimit = 20
	MaxListLimit     = 100
)

// ListRequest is one list_memories call: a page of one kind of stored
// memory, filtered.
type ListRequest struct {
	UserID    string
	AgentName string
	// Kind is ListFacts (the default), ListTurns or ListThreads.
	Kind string
	// Category and MinConfidence filter facts only.
	Category      string
	MinConfidence float64
	// ThreadID keeps facts extracted from that thread, or the turns of it.
	ThreadID string
	// Since and Until (RFC 3339) bound a fact's creation time, a turn's
	// time, or a thread's last exchange.
	Since, Until string
	// Text keeps items containing it, ignoring case.
	Text string
	// Offset skips that many matching items; Limit is the page size,
	// DefaultListLimit when 0, at most MaxListLimit.
	Offset, Limit int
}

// ListedTurn is a stored exchange in a list.
type ListedTurn struct {
	ID       string    `json:"id"`
	Seq      int64     `json:"seq"`
	ThreadID string    `json:"thread_id"`
	Time     time.Time `json:"timestamp"`
	User     string    `json:"user_input,omitempty"`
	Reply    string    `json:"agent_response,omitempty"`
	// Processed is true once the updater has read the exchange, and
	// always without an extraction model: then nothing waits for one.
	Processed bool `json:"processed"`
}

// ListedThread is one conversation of a scope.
type ListedThread struct {
	ID      string    `json:"thread_id"`
	Turns   int       `json:"turns"`
	Pending int       `json:"pending"` // 0 without an extraction model
	First   time.Time `json:"first"`
	Last    time.Time `json:"last"`
}

// ListResult is one page of a list, newest first.
type ListResult struct {
	Scope Scope  `json:"scope"`
	Kind  string `json:"kind"`
	// Total is how many items match the filters.
	Total  int `json:"total"`
	Offset int `json:"offset"`
	// NextOffset is the offset of the next page; 0 when this is the last.
	NextOffset int            `json:"next_offset"`
	Facts      []Fact         `json:"facts,omitempty"`
	Turns      []ListedTurn   `json:"turns,omitempty"`
	Threads    []ListedThread `json:"threads,omitempty"`
}

// MaintainReport says what a maintenance pass changed.
type MaintainReport struct {
	// Merged maps each fact merged away to the fact it was merged into.
	Merged map[string]string `json:"merged,omitempty"`
	// Decayed are the facts whose confidence fell.
	Decayed []string `json:"decayed,omitempty"`
	// Retired are the facts retired for not being confirmed.
	Retired []string `json:"retired,omitempty"`
}

// Changed reports whether the pass changed any fact.
func (r MaintainReport) Changed() bool {
	return len(r.Merged)+len(r.Decayed)+len(r.Retired) > 0
}

// SourceMaintenance is the source of the events of a maintenance pass.
const SourceMaintenance = "maintenance"

// RestoreFactRequest is one restore of a retired, merged or replaced fact.
type RestoreFactRequest struct {
	UserID    string
	AgentName string
	ID        string
	// Source is SourceManual (the default) or SourceCLI.
	Source string
}

// RestoreFactResult is the fact brought back.
type RestoreFactResult struct {
	Scope Scope `json:"scope"`
	Fact  Fact  `json:"fact"`
}

// SessionHit is a mid-term session that matched a retrieval, with its
// heat after the visit.
type SessionHit struct {
	ID       string   `json:"id"`
	Summary  string   `json:"summary"`
	Keywords []string `json:"keywords,omitempty"`
	Heat     float64  `json:"heat"`
	// Score is the session's rank score for the query: its best page's
	// score relative to the best page of the retrieval (1 = holds it).
	Score float64 `json:"score"`
	// PageCount is how many pages the session holds in all.
	PageCount int `json:"page_count"`
	// PageIDs are the session's pages among the retrieved ones.
	PageIDs []string `json:"page_ids"`
	// Summarized says the summary came from the language model; without
	// one it is the opening of the session's first page.
	Summarized bool `json:"summarized,omitempty"`
}

// MidTermView is a snapshot of a scope's mid-term sessions, with heat at
// the time of the call, hottest first.
type MidTermView struct {
	Sessions []MidTermSessionView `json:"sessions"`
}

// MidTermSessionView is one session in a MidTermView.
type MidTermSessionView struct {
	ID       string   `json:"id"`
	Summary  string   `json:"summary"`
	Keywords []string `json:"keywords"`
	// Pages are the session's exchanges in the order they joined, each
	// with its neighbours in its thread (page continuity).
	Pages        []PageLink `json:"pages"`
	Analyzed     int        `json:"analyzed"`
	Visits       int        `json:"visits"`
	Interactions int        `json:"interactions"`
	Uses         int        `json:"uses"`
	LastVisit    time.Time  `json:"last_visit"`
	Heat         float64    `json:"heat"`
}

// PageLink is a page (turn id) with the turns before and after it in its
// thread; "" where there is none.
type PageLink struct {
	ID   string `json:"id"`
	Prev string `json:"prev,omitempty"`
	Next string `json:"next,omitempty"`
}

// ProfileRequest is one get_user_profile call.
type ProfileRequest struct {
	UserID                    string
	AgentName                 string
	IncludeKnowledge          bool
	IncludeAssistantKnowledge bool
}

// ProfileResult is the scope's long-term memory document plus its
// injection-formatted text.
type ProfileResult struct {
	Scope              Scope           `json:"scope"`
	Version            string          `json:"version"`
	LastUpdated        string          `json:"last_updated,omitempty"`
	User               UserSections    `json:"user"`
	History            HistorySections `json:"history"`
	Facts              []Fact          `json:"facts"`
	Knowledge          []Fact          `json:"knowledge,omitempty"`
	AssistantKnowledge []Fact          `json:"assistant_knowledge,omitempty"`
	StoredTurns        int             `json:"stored_turns"`
	Pending            PendingInfo     `json:"pending"`
	// BuiltFromFacts lists the profile sections built from the stored
	// facts and knowledge, by category, newest first: with no extraction
	// model nothing writes the sections above, and the facts the host's
	// model passes are the profile.
	BuiltFromFacts  []ProfileSection `json:"built_from_facts,omitempty"`
	Empty           bool             `json:"empty"`
	Injection       string           `json:"injection"`
	InjectionTokens int              `json:"injection_tokens"`
	// Usage is the model and embedding usage of the scope by day, with
	// the daily token budget.
	Usage ScopeUsage `json:"usage"`
	// PastFacts are facts a later conversation replaced, with their
	// validity interval, newest last; RetiredFacts those retired for not
	// being confirmed, or merged into another (restorable).
	PastFacts    []Fact `json:"past_facts,omitempty"`
	RetiredFacts []Fact `json:"retired_facts,omitempty"`
}

// ProfileSections names the six profile and history sections as the
// tools and the command line do, in the order of Document.Sections.
var ProfileSections = []string{"work_context", "personal_context", "top_of_mind", "recent_months", "earlier_context", "long_term_background"}

// MaxSectionRunes bounds the text of one profile section set by hand, as
// the updater's summaries are bounded.
const MaxSectionRunes = 8000

// UpdateProfileRequest is one update_profile call: the new text of one
// section, or an empty Text to clear it.
type UpdateProfileRequest struct {
	UserID    string
	AgentName string
	// Section is one of ProfileSections.
	Section string
	// Text replaces the section's summary; empty clears it.
	Text string
	// Source is SourceManual (the default) or SourceCLI.
	Source string
}

// UpdateProfileResult is the section before and after the change.
type UpdateProfileResult struct {
	Scope    Scope  `json:"scope"`
	Section  string `json:"section"`
	Text     string `json:"text"`
	Previous string `json:"previous"`
	// Changed is false when the section already read Text.
	Changed bool `json:"changed"`
	// Redacted counts the secrets replaced by "[redacted: KIND]" in Text.
	Redacted []Redaction `json:"redacted,omitempty"`
}

// Limits on what one reply may carry. Replies are untrusted input.
const (
	UpdateMaxReplyBytes   = 512 << 10
	UpdateMaxCandidates   = 256 // '{' positions tried as the start of the update object
	UpdateMaxContentRunes = 2000
	UpdateMaxSummaryRunes = MaxSectionRunes
	UpdateMaxNewFacts     = 200
	UpdateMaxRemovals     = 1000
	UpdateMaxNotes        = 100
)

// RetrieveRequest is one retrieve_memory call.
type RetrieveRequest struct {
	UserID    string
	AgentName string
	ThreadID  string
	Query     string
	// Keywords are other words the user may have used for what the query
	// asks (synonyms, names, the likely answer's terms), searched
	// alongside the query with a lower weight. Optional.
	Keywords []string
	// MaxResults is how many pages to return; 0 means the configured
	// retrieval_queue_capacity.
	MaxResults int
	// MaxTokens is the injection budget; 0 means max_injection_tokens.
	MaxTokens int
	// RelationshipWithUser and StyleHint (MemoryOS) are echoed in the
	// injection header so the host's model can adjust its tone.
	RelationshipWithUser string
	StyleHint            string
	// Peek looks without touching: no visit to a topic session is
	// counted, so no heat changes and no analysis starts (the memory
	// viewer's preview and search).
	Peek bool
	// Now is the reference time of the query: relative dates in it ("last
	// Tuesday", "yesterday") and the current conversation's idle gap are
	// read against it. Zero means the clock; a replayed or imported
	// history passes the time of the conversation.
	Now time.Time
}

// PageHit is a past exchange that matches the query.
type PageHit struct {
	ID       string          `json:"id"`
	ThreadID string          `json:"thread_id"`
	Time     time.Time       `json:"timestamp"`
	User     string          `json:"user_input,omitempty"`
	Reply    string          `json:"agent_response,omitempty"`
	Score    float64         `json:"score"`
	MetaData json.RawMessage `json:"meta_data,omitempty"`
	// PrevID and NextID are the ids of the exchanges before and after
	// this one in its thread (page continuity).
	PrevID string `json:"prev_id,omitempty"`
	NextID string `json:"next_id,omitempty"`
	// MatchedKeywords are the host's keywords whose words the exchange
	// holds: why it came, beside the query's own words.
	MatchedKeywords []string `json:"matched_keywords,omitempty"`
}

// FactHit is a remembered fact with its retrieval score.
type FactHit struct {
	Fact
	Score float64 `json:"score"`
	// Standing says the fact entered because it bears on every answer
	// (pinned, a correction or behaviour rule, a diet, allergy, health or
	// accessibility constraint), not because the query matched it.
	Standing bool `json:"standing,omitempty"`
	// MatchedKeywords are the host's keywords whose words the fact holds.
	MatchedKeywords []string `json:"matched_keywords,omitempty"`
}

// RecentTurn is one of the thread's latest turns (short-term memory).
type RecentTurn struct {
	ID    string    `json:"id"`
	Time  time.Time `json:"timestamp"`
	User  string    `json:"user_input,omitempty"`
	Reply string    `json:"agent_response,omitempty"`
}

// ProfileSection is one non-empty profile or history summary.
type ProfileSection struct {
	Name      string    `json:"name"`
	Summary   string    `json:"summary"`
	UpdatedAt time.Time `json:"updated_at,omitzero"`
}

// RetrieveResult is what retrieve_memory returns. Pages come first: they
// are the ranked answer.
type RetrieveResult struct {
	Pages []PageHit `json:"pages"`
	Facts []FactHit `json:"facts,omitempty"`
	// PastFacts are replaced facts that match a query about the past
	// ("before", "used to", …), with their validity interval.
	PastFacts       []FactHit        `json:"past_facts,omitempty"`
	Profile         []ProfileSection `json:"profile,omitempty"`
	Recent          []RecentTurn     `json:"recent,omitempty"`
	Injection       string           `json:"injection"`
	InjectionTokens int              `json:"injection_tokens"`
	Scope           Scope            `json:"scope"`
	ThreadID        string           `json:"thread_id"`
	StoredTurns     int              `json:"stored_turns"`
	Pending         PendingInfo      `json:"pending"`
	// Sessions are the mid-term topic sessions of the pages returned,
	// with their summaries; returning a page counts as a visit.
	Sessions []SessionHit `json:"sessions,omitempty"`
	// UserKnowledge and AssistantKnowledge are the long-term knowledge
	// entries that share terms with the query.
	UserKnowledge      []FactHit `json:"user_knowledge,omitempty"`
	AssistantKnowledge []FactHit `json:"assistant_knowledge,omitempty"`
	// Ranking says how the pages were ranked: by words alone or by words
	// and vectors, and why vectors were not used when they are configured.
	Ranking RankingInfo `json:"ranking"`
}

// How pages were ranked (RankingInfo.Method).
const (
	RankedByWords     = "words"
	RankedByWordsVecs = "words+vectors"
)

// RankingInfo says how a retrieval ranked its pages.
type RankingInfo struct {
	// Method is RankedByWords or RankedByWordsVecs.
	Method string `json:"method"`
	// VectorFallback is set when vectors are configured but this
	// retrieval ranked by words only: why, as a short reason.
	VectorFallback string `json:"vector_fallback,omitempty"`
	// Note is one sentence for the model or the user saying the same,
	// empty when nothing fell back.
	Note string `json:"note,omitempty"`
}

// CacheStats says how many scope states a Service holds in memory and
// their estimated size, for tests, benchmarks and logs.
type CacheStats struct {
	Scopes int   `json:"scopes"`
	Bytes  int64 `json:"bytes"`
	Budget int64 `json:"budget"`
}

// LLMUsage is how much the updater has used the model since start.
type LLMUsage struct {
	Calls            int `json:"calls"`
	PromptTokens     int `json:"prompt_tokens"`
	CompletionTokens int `json:"completion_tokens"`
}
