package prompts

import (
	"errors"
	"regexp"
	"strings"
	"sync"
)

// UpdateData is what the memory update prompt depends on.
type UpdateData struct {
	// CurrentMemory is the user's memory document as JSON, with fact ids.
	// Blank renders as an empty object.
	CurrentMemory string
	// Conversation is the new conversation as plain text; it must not be
	// blank.
	Conversation string
	// Correction says the user corrected the assistant in the conversation.
	Correction bool
	// Reinforcement says the user confirmed the assistant's approach.
	Reinforcement bool
	// Today is the current date (for example 2026-07-01), so the model can
	// place events in the history periods; empty leaves it out.
	Today string
}

// updateDelimiter matches an opening or closing tag of the prompt's data
// blocks, so that text inside a block cannot end it early or forge a new one.
var updateDelimiter = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`(?i)<\s*/?\s*(?:current_memory|conversation)\b[^>]*>`)
})

// neutralizeDelimiters escapes the "<" of every data block tag in s.
func neutralizeDelimiters(s string) string {
	return updateDelimiter().ReplaceAllStringFunc(s, func(tag string) string {
		return "&lt;" + tag[1:]
	})
}

// Update renders the prompt that asks the language model how a new
// conversation changes the user's memory: which profile and history
// sections to rewrite, which facts to add and which to remove, as one JSON
// object. Tags in the data that would close or open the prompt's data
// blocks are escaped. It fails when the conversation is blank.
func Update(d UpdateData) (string, error) {
	if strings.TrimSpace(d.Conversation) == "" {
		return "", errors.New("render update prompt: the conversation is empty")
	}
	if strings.TrimSpace(d.CurrentMemory) == "" {
		d.CurrentMemory = "{}"
	}
	d.CurrentMemory = neutralizeDelimiters(strings.TrimSpace(d.CurrentMemory))
	d.Conversation = neutralizeDelimiters(strings.TrimSpace(d.Conversation))
	d.Today = strings.TrimSpace(d.Today)
	return render("update.tmpl", d)
}
