package memory

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"unicode/utf8"
)

// ProfileSections names the six profile and history sections as the
// tools and the command line do, in the order of Document.Sections.
var ProfileSections = []string{"work_context", "personal_context", "top_of_mind", "recent_months", "earlier_context", "long_term_background"}

// MaxSectionRunes bounds the text of one profile section set by hand, as
// the updater's summaries are bounded.
const MaxSectionRunes = updateMaxSummaryRunes

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

// UpdateProfile replaces or clears one section of the profile by hand,
// through the same atomic document save as every other change: the
// document it replaces is kept as a version (mnemo rollback undoes it).
// The updater may rewrite the section again from later conversations.
// No language model is needed.
func (s *Service) UpdateProfile(ctx context.Context, req UpdateProfileRequest) (*UpdateProfileResult, error) {
	scope, err := s.resolveScope(req.UserID, req.AgentName)
	if err != nil {
		return nil, err
	}
	source, err := manualSource(req.Source)
	if err != nil {
		return nil, err
	}
	i := slices.Index(ProfileSections, req.Section)
	if i < 0 {
		return nil, invalid("section", "%q is not a profile section; use one of %s", req.Section, strings.Join(ProfileSections, ", "))
	}
	text := strings.TrimSpace(req.Text)
	if err := checkText("text", text, 4*MaxSectionRunes); err != nil {
		return nil, err
	}
	if n := utf8.RuneCountInString(text); n > MaxSectionRunes {
		return nil, invalid("text", "is %d characters long; keep a section under %d characters", n, MaxSectionRunes)
	}
	red := &redactor{on: s.cfg.RedactSecrets}
	text = red.text(text)
	res := &UpdateProfileResult{Scope: scope, Section: req.Section, Text: text, Redacted: red.take()}
	_, err = s.store.UpdateDocument(ctx, scope, func(d *Document) error {
		sec := sectionByName(d, d.Sections()[i].Name)
		res.Previous = sec.Summary
		if sec.Summary == text {
			return errNoChange
		}
		sec.Summary = text
		sec.UpdatedAt = s.now().UTC()
		return nil
	})
	switch {
	case errors.Is(err, errNoChange):
		return res, nil
	case err != nil:
		return nil, fmt.Errorf("update profile of %s: %w", scope.Key(), err)
	}
	res.Changed = true
	s.log.Info("profile section changed", "scope", scope.Key(), "section", req.Section, "cleared", text == "", "source", source)
	s.notifyChange(scope)
	return res, nil
}
