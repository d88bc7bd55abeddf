package memory

import "time"

// The import vocabulary: what the importers package reads out of another
// assistant's files, and what the engine's Import verb takes and says.
// Readers convert; only Import stores, under the rules the tools apply.

// ImportedConversation is one chat of a history export, its messages in
// the order they were exchanged.
type ImportedConversation struct {
	// ID is the export's id of the conversation; never empty.
	ID    string
	Title string
	// Created is when the conversation started; zero when the export
	// does not say.
	Created  time.Time
	Messages []ImportedMessage
}

// ImportedMessage is one message of an imported conversation.
type ImportedMessage struct {
	// ID is the export's id of the message; never empty.
	ID   string
	Role Role
	// Text is what the message says; empty for a message that holds
	// only files or tool traffic.
	Text string
	// Time is when the message was sent; zero when the export does not
	// say.
	Time time.Time
	// ToolCall marks an assistant message that is an intermediate step
	// (a call to a tool, or the model's reasoning), not an answer.
	ToolCall string
	// Uploads names the files the user attached to the message. Their
	// content is never returned.
	Uploads []string
}

// ImportedFact is one fact read from another memory (an observation or a
// relation of a knowledge graph), to be added beside what a scope knows.
type ImportedFact struct {
	Content    string
	Category   string
	Confidence float64
	// Source is the fact's source and that of its history event.
	Source string
	// Reason says where the fact came from, for its history.
	Reason string
}

// ImportedScope is a whole memory (a mnemo export's scope, a DeerFlow or
// MemoryOS user), to be written into an empty scope.
type ImportedScope struct {
	Scope Scope
	Doc   *Document
	// Turns are in increasing Seq order.
	Turns []Turn
}

// ImportRequest is one import. Conversations and Facts are added to
// Scope beside what it holds, each only once however often the same
// export is imported; Scopes are written into empty scopes, all or none.
type ImportRequest struct {
	// Format names the source of Conversations: it begins their thread
	// ids and idempotency keys and is kept in their meta_data.
	Format        string
	Scope         Scope
	Conversations []ImportedConversation
	Facts         []ImportedFact
	Scopes        []ImportedScope
	// DryRun checks and plans everything and writes nothing.
	DryRun bool
	// Progress, when not nil, is told how many conversations (or scopes)
	// of total are done.
	Progress func(done, total int)
}

// ImportResult says what an import stored (or, on a dry run, would store)
// and what it left out, and why.
type ImportResult struct {
	// Turns are the new turns, oldest conversation first.
	Turns []Turn
	// Threads are the threads of every conversation imported, new turns
	// or not, in the order of the export.
	Threads []string
	// Facts are the facts added.
	Facts    []Fact
	Messages int
	Filter   FilterReport
	// Already counts the exchanges and facts imported before (or
	// repeated in the source); they are not stored twice.
	Already int
	// TooLong counts the exchanges over max_message_bytes.
	TooLong int
	// Refused counts the records the tools would refuse; RefusedWhy is
	// the first one's reason.
	Refused    int
	RefusedWhy string
	// Undated counts the exchanges dated at the import.
	Undated  int
	Redacted []Redaction
}
