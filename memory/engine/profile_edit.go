package engine

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/mnemo-mcp/mnemo/memory"
	"github.com/mnemo-mcp/mnemo/memory/update"
)

// UpdateProfile replaces or clears one section of the profile by hand,
// through the same atomic document save as every other change: the
// document it replaces is kept as a version (mnemo rollback undoes it).
// The updater may rewrite the section again from later conversations.
// No language model is needed.
func (s *Service) UpdateProfile(ctx context.Context, req memory.UpdateProfileRequest) (*memory.UpdateProfileResult, error) {
	scope, err := s.resolveScope(req.UserID, req.AgentName)
	if err != nil {
		return nil, err
	}
	source, err := memory.ManualSource(req.Source)
	if err != nil {
		return nil, err
	}
	i := slices.Index(memory.ProfileSections, req.Section)
	if i < 0 {
		return nil, memory.Invalid("section", "%q is not a profile section; use one of %s", req.Section, strings.Join(memory.ProfileSections, ", "))
	}
	text := strings.TrimSpace(req.Text)
	if err := memory.CheckText("text", text, 4*memory.MaxSectionRunes); err != nil {
		return nil, err
	}
	if n := utf8.RuneCountInString(text); n > memory.MaxSectionRunes {
		return nil, memory.Invalid("text", "is %d characters long; keep a section under %d characters", n, memory.MaxSectionRunes)
	}
	red := &memory.Redactor{On: s.cfg.RedactSecrets}
	text = red.Text(text)
	res := &memory.UpdateProfileResult{Scope: scope, Section: req.Section, Text: text, Redacted: red.Take()}
	_, err = s.store.UpdateDocument(ctx, scope, func(d *memory.Document) error {
		sec := update.SectionByName(d, d.Sections()[i].Name)
		res.Previous = sec.Summary
		if sec.Summary == text {
			return errNoChange
		}
		verb := "written"
		if text == "" {
			verb = "cleared"
		}
		d.AddSectionEvent(memory.SectionEvent{Section: req.Section, At: s.now().UTC(), Source: source, Actor: memory.ActorFrom(ctx),
			Reason: manualReason(source, verb), Old: sec.Summary, New: text})
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
