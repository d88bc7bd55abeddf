package prompts

import (
	"errors"
	"regexp"
	"strings"
	"sync"
)

// SessionSummaryData is what the mid-term session summary prompt depends on.
type SessionSummaryData struct {
	// Conversation is the session's exchanges as plain text; it must not
	// be blank.
	Conversation string
	// MaxKeywords bounds the keywords asked for; 0 means 8.
	MaxKeywords int
}

// SessionAnalysisData is what the long-term analysis prompt of a hot
// mid-term session depends on.
type SessionAnalysisData struct {
	// CurrentProfile is the user's profile sections as JSON; blank renders
	// as an empty object.
	CurrentProfile string
	// Conversation is the session's unanalysed exchanges as plain text; it
	// must not be blank.
	Conversation string
	// KnownUserKnowledge and KnownAssistantKnowledge are the entries
	// already kept, one per line; empty leaves them out.
	KnownUserKnowledge      string
	KnownAssistantKnowledge string
}

// tiersDelimiter matches an opening or closing tag of the tier prompts'
// data blocks.
var tiersDelimiter = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`(?i)<\s*/?\s*(?:current_profile|conversation)\b[^>]*>`)
})

func neutralizeTiers(s string) string {
	return tiersDelimiter().ReplaceAllStringFunc(strings.TrimSpace(s), func(tag string) string {
		return "&lt;" + tag[1:]
	})
}

// SessionSummary renders the prompt that asks the language model for the
// summary and keywords of a mid-term session, as one JSON object
// {"summary", "keywords"}. It fails when the conversation is blank.
func SessionSummary(d SessionSummaryData) (string, error) {
	if strings.TrimSpace(d.Conversation) == "" {
		return "", errors.New("render session summary prompt: the conversation is empty")
	}
	if d.MaxKeywords <= 0 {
		d.MaxKeywords = 8
	}
	d.Conversation = neutralizeTiers(d.Conversation)
	return render("session_summary.tmpl", d)
}

// SessionAnalysis renders the prompt that asks the language model what a
// hot mid-term session teaches about the user: profile sections to
// rewrite, user knowledge and assistant knowledge, as one JSON object. It
// fails when the conversation is blank.
func SessionAnalysis(d SessionAnalysisData) (string, error) {
	if strings.TrimSpace(d.Conversation) == "" {
		return "", errors.New("render session analysis prompt: the conversation is empty")
	}
	if strings.TrimSpace(d.CurrentProfile) == "" {
		d.CurrentProfile = "{}"
	}
	d.CurrentProfile = neutralizeTiers(d.CurrentProfile)
	d.Conversation = neutralizeTiers(d.Conversation)
	d.KnownUserKnowledge = neutralizeTiers(d.KnownUserKnowledge)
	d.KnownAssistantKnowledge = neutralizeTiers(d.KnownAssistantKnowledge)
	return render("session_analysis.tmpl", d)
}
