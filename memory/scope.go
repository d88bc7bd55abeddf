package memory

import (
	"strings"
	"unicode/utf8"
)

// DefaultUserID is the user a scope belongs to when none is configured or given.
const DefaultUserID = "default"

// DefaultThreadID names the conversation of a turn that came without a thread_id.
const DefaultThreadID = "default"

// MaxIDLength is the longest user, agent or thread id accepted.
const MaxIDLength = 128

// Scope identifies one memory: a user's shared memory (AgentName empty) or
// the memory of one agent of that user.
type Scope struct {
	UserID    string `json:"user_id"`
	AgentName string `json:"agent_name,omitempty"`
}

// Key returns a stable string form of the scope, for maps and logs.
func (s Scope) Key() string {
	if s.AgentName == "" {
		return s.UserID
	}
	return s.UserID + "/" + s.AgentName
}

// Validate reports whether both ids are safe to use in a path or query.
func (s Scope) Validate() error {
	if err := ValidateID("user_id", s.UserID); err != nil {
		return err
	}
	if s.AgentName != "" {
		return ValidateID("agent_name", s.AgentName)
	}
	return nil
}

// ValidateID checks an id against the one rule for user, agent and thread
// ids: 1–128 characters from letters, digits, '.', '_' and '-', and not
// "." or "..". The error names field and says what to change.
func ValidateID(field, id string) error {
	switch {
	case id == "":
		return Invalid(field, "must not be empty")
	case !utf8.ValidString(id):
		return Invalid(field, "must be valid UTF-8")
	case len(id) > MaxIDLength:
		return Invalid(field, "is %d characters long; use at most %d", len(id), MaxIDLength)
	case id == "." || id == "..":
		return Invalid(field, "%q is not allowed; use letters, digits, '.', '_' or '-'", id)
	}
	if i := strings.IndexFunc(id, func(r rune) bool { return !idRune(r) }); i >= 0 {
		r, _ := utf8.DecodeRuneInString(id[i:])
		return Invalid(field, "contains %q; use only letters a-z A-Z, digits, '.', '_' and '-' (1-%d characters)", r, MaxIDLength)
	}
	return nil
}

func idRune(r rune) bool {
	return r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '.' || r == '_' || r == '-'
}
