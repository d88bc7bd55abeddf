package recall

import (
	"slices"
	"strings"
	"time"

	"github.com/mnemo-mcp/mnemo/memory"
	"github.com/mnemo-mcp/mnemo/memory/lexical"
)

// A corrected fact is one whose wording the person or the host changed
// (memory.Fact.Corrected). It is what memory knows now: it is dated by the
// correction, offered with the corrections (never crowded out), and an
// exchange from before the correction that still says what it replaced
// is marked superseded, so the model never reads only the outdated
// version.

// MarksSuperseded explains the superseded mark, after the intro and only
// when a line offered carries it.
const MarksSuperseded = "An exchange marked superseded says what the user later corrected: the corrected fact holds."

// ReplacedTerms returns the terms of the wording a corrected fact
// replaced that its current wording does not hold: the words that tell
// an exchange saying the old version. None for a fact never corrected.
func ReplacedTerms(f memory.Fact) []string {
	if !f.Corrected() || f.Replaced == "" {
		return nil
	}
	now := lexical.Tokenize(f.Content)
	var out []string
	for _, t := range lexical.Tokenize(f.Replaced) {
		if !slices.Contains(now, t) && !slices.Contains(out, t) {
			out = append(out, t)
		}
	}
	return out
}

// Supersedes reports whether the corrected fact f, whose replaced-only
// terms are old (ReplacedTerms), supersedes an item said at when with
// text: the item predates the correction and holds one of those terms.
func Supersedes(f memory.Fact, old []string, when time.Time, text string) bool {
	if len(old) == 0 || !when.Before(f.CorrectedAt) {
		return false
	}
	for _, t := range lexical.Tokenize(text) {
		if slices.Contains(old, t) {
			return true
		}
	}
	return false
}

// correctedNote is what a corrected fact's line adds after its wording.
func correctedNote(f memory.Fact) string {
	if !f.Corrected() {
		return ""
	}
	if r := strings.TrimSpace(f.Replaced); r != "" {
		return " — corrected by the user; it said before: " + CleanLine(r, maxFactRunes/2)
	}
	return " — corrected by the user"
}

// hasSuperseded reports whether an item offered carries the superseded
// mark.
func hasSuperseded(in InjectionInput) bool {
	for i := range in.Pages {
		if n := noteAt(in.PageNotes, i); n.Superseded && !n.Hidden {
			return true
		}
	}
	for i := range in.Recent {
		if noteAt(in.RecentNotes, i).Superseded {
			return true
		}
	}
	return false
}
