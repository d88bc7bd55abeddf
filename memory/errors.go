package memory

import (
	"errors"
	"fmt"
)

// Sentinel errors, matched with errors.Is.
var (
	// ErrInvalidInput marks an error the caller can fix by changing its
	// arguments. Tools turn it into an isError result with the message.
	ErrInvalidInput = errors.New("invalid input")
	// ErrNotFound marks a missing fact, turn or scope.
	ErrNotFound = errors.New("not found")
	// ErrNoLLM means the work needs a language model and none is configured.
	ErrNoLLM = errors.New("no llm configured")
	// ErrCorrupt marks stored data that cannot be parsed.
	ErrCorrupt = errors.New("corrupt data")
	// ErrUnavailable marks a failure to reach the storage (a database
	// that is down, restarting or out of connections) that may pass: the
	// call changed nothing and can be tried again; the store reconnects
	// by itself. Stores wrap it; tools tell the model to try again.
	ErrUnavailable = errors.New("storage unavailable")
	// ErrOutcomeUnknown marks a write whose connection to the storage
	// broke after the write was sent: it may have been stored or not. A
	// retry of an add with the same idempotency_key is stored once.
	ErrOutcomeUnknown = errors.New("outcome unknown")
	// ErrStale is wrapped by a store's refusal to save a cache (page
	// index snapshot, mid-term state, vectors) of a scope whose turns were
	// removed, or which was deleted, since the store read it: the cache
	// may hold forgotten text. The Service then drops its in-memory state
	// of the scope and reads it again.
	ErrStale = errors.New("the scope's turns changed since they were read (forgotten by another call or process); not saving a cache of the old ones")
)

// InputError is an ErrInvalidInput with a message that says what to fix.
type InputError struct {
	Field   string
	Message string
}

// Error implements error.
func (e *InputError) Error() string {
	if e.Field == "" {
		return e.Message
	}
	return e.Field + ": " + e.Message
}

// Is reports whether target is ErrInvalidInput.
func (e *InputError) Is(target error) bool { return target == ErrInvalidInput }

// Invalid builds an InputError for field with a formatted message. A
// string argument longer than MaxEchoBytes is shown by its start and its
// length (see Echo): an error never quotes a big argument back.
func Invalid(field, format string, args ...any) error {
	for i, a := range args {
		if s, ok := a.(string); ok && len(s) > MaxEchoBytes {
			args[i] = Echo(s)
		}
	}
	return &InputError{Field: field, Message: fmt.Sprintf(format, args...)}
}

// MaxEchoBytes is the longest argument an error message quotes whole.
const MaxEchoBytes = 256

// echoRunes is how much of a longer one it shows.
const echoRunes = 48

// Echo is s as an error message may quote it: whole up to MaxEchoBytes,
// else its first 48 characters and its length, with %s, %v and %q alike
// ("abc…" (204800 bytes) under %q).
func Echo(s string) fmt.Formatter { return echo(s) }

type echo string

// Format implements fmt.Formatter.
func (e echo) Format(f fmt.State, verb rune) {
	s := string(e)
	if len(s) <= MaxEchoBytes {
		fmt.Fprintf(f, fmt.FormatString(f, verb), s)
		return
	}
	head := []rune(s)
	if len(head) > echoRunes {
		head = head[:echoRunes]
	}
	if verb == 'q' {
		fmt.Fprintf(f, "%q… (%d bytes)", string(head), len(s))
		return
	}
	fmt.Fprintf(f, "%s… (%d bytes)", string(head), len(s))
}

// NotFoundError is an ErrNotFound with a message for the model: what is
// missing and where to look. The message never holds a file path; a store
// that wraps the error (with its path) does not change it, so tools match
// it with errors.As and show Message alone.
type NotFoundError struct {
	Message string
}

// Error implements error.
func (e *NotFoundError) Error() string { return "not found: " + e.Message }

// Is reports whether target is ErrNotFound.
func (e *NotFoundError) Is(target error) bool { return target == ErrNotFound }

// NotFound builds a NotFoundError with a formatted message.
func NotFound(format string, args ...any) error {
	return &NotFoundError{Message: fmt.Sprintf(format, args...)}
}
