package engine

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/mnemo-mcp/mnemo/memory"
	"github.com/mnemo-mcp/mnemo/memory/update"
)

// checkTopicChoice refuses a topic forget that chose an item the topic's
// search does not list: nothing outside the preview is touched.
func (s *Service) checkTopicChoice(ctx context.Context, scope memory.Scope, req memory.ForgetRequest) error {
	topic, key, err := checkTopic(req.Topic)
	if err != nil {
		return err
	}
	found, _, err := s.findMentions(ctx, scope, []mentionKey{key}, 1<<30)
	if err != nil {
		return err
	}
	listed := func(kind, id string) bool {
		return slices.ContainsFunc(found, func(m memory.Mention) bool {
			return m.Kind == kind && (m.ID == id || m.Section == id)
		})
	}
	var outside []string
	for _, c := range []struct {
		kind string
		ids  []string
	}{{memory.MentionFact, req.FactIDs}, {memory.MentionTurn, req.TurnIDs}, {memory.MentionSection, req.Sections}} {
		for _, id := range c.ids {
			if !listed(c.kind, id) && !slices.Contains(outside, id) {
				outside = append(outside, id)
			}
		}
	}
	if len(outside) > 0 {
		return memory.Invalid("topic", "%s: not among what mentions %q in the memory of %s (it changed, or was never listed); nothing was forgotten — search the topic again",
			strings.Join(outside, ", "), topic, scope.Key())
	}
	return nil
}

// clearSections clears the named profile sections, as a forget: the kept
// versions of the document that hold their text are deleted, and each
// clearing is a section event.
func (s *Service) clearSections(ctx context.Context, scope memory.Scope, names []string, source string, res *memory.ForgetResult) error {
	var cleared []string
	err := s.updateForgetting(ctx, scope, func(d *memory.Document) ([]string, error) {
		cleared = nil
		var texts []string
		for _, name := range names {
			i := slices.Index(memory.ProfileSections, name)
			sec := update.SectionByName(d, d.Sections()[i].Name)
			if sec.Summary == "" || slices.Contains(cleared, name) {
				continue
			}
			texts = append(texts, sec.Summary)
			scrubSectionEvents(d, name, &texts)
			d.AddSectionEvent(memory.SectionEvent{Section: name, At: s.now().UTC(), Source: source, Actor: memory.ActorFrom(ctx),
				Reason: manualReason(source, "cleared with a forget")})
			sec.Summary, sec.UpdatedAt = "", s.now().UTC()
			cleared = append(cleared, name)
		}
		if len(cleared) == 0 {
			return nil, errNoChange
		}
		return texts, nil
	}, res)
	if err != nil && !errors.Is(err, errNoChange) {
		return fmt.Errorf("clear profile sections of %s: %w", scope.Key(), err)
	}
	res.SectionsCleared = append(res.SectionsCleared, cleared...)
	return nil
}

// stillMentioned fills res.MentionWords and res.MayMention: the words and
// names of what the forget removed (facts, turns), and what in the memory
// left still holds them. The facts listed in DerivedFactsKept are not
// repeated; the profile sections listed in SectionsMayMention by time are
// added, and those found by words join SectionsMayMention.
func (s *Service) stillMentioned(ctx context.Context, scope memory.Scope, turns []memory.Turn, res *memory.ForgetResult) error {
	keys := forgottenKeys(append(slices.Clone(res.FactsRemoved), res.DerivedFactsRemoved...), turns)
	res.MentionWords = keyWords(keys)
	found, _, err := s.findMentions(ctx, scope, keys, memory.MaxMentions)
	if err != nil {
		return fmt.Errorf("forgotten, but %w", err)
	}
	found = slices.DeleteFunc(found, func(m memory.Mention) bool {
		return m.Kind == memory.MentionFact && slices.ContainsFunc(res.DerivedFactsKept, func(f memory.Fact) bool { return f.ID == m.ID })
	})
	for _, m := range found {
		if m.Kind == memory.MentionSection && !slices.Contains(res.SectionsMayMention, m.Section) {
			res.SectionsMayMention = append(res.SectionsMayMention, m.Section)
		}
	}
	if missing := slices.DeleteFunc(slices.Clone(res.SectionsMayMention), func(name string) bool {
		return slices.ContainsFunc(found, func(m memory.Mention) bool { return m.Section == name })
	}); len(missing) > 0 {
		doc, err := s.store.LoadDocument(ctx, scope)
		if err != nil {
			return fmt.Errorf("forgotten, but check the profile of %s: %w", scope.Key(), err)
		}
		var timed []memory.Mention
		for i, sec := range doc.Sections() {
			if slices.Contains(missing, memory.ProfileSections[i]) {
				timed = append(timed, memory.Mention{Kind: memory.MentionSection, Section: memory.ProfileSections[i], Time: sec.Section.UpdatedAt,
					Text: mentionText(sec.Section.Summary), Words: []string{}, Action: memory.ActionEdit})
			}
		}
		found = append(timed, found...)
	}
	// Sections in reading order, as the profile shows them.
	slices.SortStableFunc(res.SectionsMayMention, func(a, b string) int {
		return slices.Index(memory.ProfileSections, a) - slices.Index(memory.ProfileSections, b)
	})
	res.MayMention = found
	return nil
}

// scrubSectionEvents strips the text from every event of the named
// section, adding it to texts (for scrubbing the kept versions): the
// history says the section was written and cleared, not what it said.
func scrubSectionEvents(d *memory.Document, name string, texts *[]string) {
	for i := range d.SectionEvents {
		e := &d.SectionEvents[i]
		if e.Section != name {
			continue
		}
		*texts = append(*texts, e.Old, e.New)
		e.Old, e.New = "", ""
	}
}

// scrubTopicEvents strips from the profile sections' history every
// earlier text that mentions the forgotten topic: a section rewritten
// since would otherwise keep the topic in what it said before.
func (s *Service) scrubTopicEvents(ctx context.Context, scope memory.Scope, topic string, res *memory.ForgetResult) error {
	_, key, err := checkTopic(topic)
	if err != nil {
		return err
	}
	err = s.updateForgetting(ctx, scope, func(d *memory.Document) ([]string, error) {
		var texts []string
		for i := range d.SectionEvents {
			e := &d.SectionEvents[i]
			for _, t := range []*string{&e.Old, &e.New} {
				if *t != "" && matchKeys([]mentionKey{key}, *t) != nil {
					texts = append(texts, *t)
					*t = ""
				}
			}
		}
		if len(texts) == 0 {
			return nil, errNoChange
		}
		return texts, nil
	}, res)
	if err != nil && !errors.Is(err, errNoChange) {
		return fmt.Errorf("forget %q in the profile history of %s: %w", topic, scope.Key(), err)
	}
	return nil
}
