package engine_test

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/mnemo-mcp/mnemo/memory"
)

// mentionIDs lists mentions as kind:id (or kind:section).
func mentionIDs(ms []memory.Mention) []string {
	var out []string
	for _, m := range ms {
		out = append(out, m.Kind+":"+m.ID+m.Section)
	}
	return out
}

// Forget tells the truth with no model: what the host wrote into the
// profile, the facts and the exchanges that still say the forgotten
// thing are listed, found by its words and names.
func TestForgetListsWhatStillMentionsIt(t *testing.T) {
	s := newManageService(t, t.TempDir())
	ctx := t.Context()
	mustAdd(t, s, "", "trip-lisbon", "We fly to Lisbon on Friday to see my sister Marguerite.", "Enjoy Lisbon!")
	mustAdd(t, s, "", "dinner", "I'm vegetarian, can you suggest a dinner with lentils?", "A lentil dal.")
	mustAdd(t, s, "", "work", "The build is slow again.", "Cache the modules.")
	if _, err := s.UpdateProfile(ctx, memory.UpdateProfileRequest{Section: "personal_context", Text: "Sister Marguerite lives in Alfama, Lisbon."}); err != nil {
		t.Fatal(err)
	}
	veg := mustSave(t, s, memory.SaveFactRequest{Content: "Alice is vegetarian."}).Fact
	res, err := s.Forget(ctx, memory.ForgetRequest{ThreadID: "trip-lisbon"})
	if err != nil {
		t.Fatal(err)
	}
	if got := mentionIDs(res.MayMention); !slices.Equal(got, []string{"profile_section:personal_context"}) || !slices.Contains(res.SectionsMayMention, "personal_context") {
		t.Errorf("Forget(thread) may mention = %v, sections %v; want the host-written personal section", got, res.SectionsMayMention)
	}
	if !slices.Contains(res.MentionWords, "Lisbon") {
		t.Errorf("Forget(thread) searched for %v, want Lisbon among them", res.MentionWords)
	}
	res, err = s.Forget(ctx, memory.ForgetRequest{FactIDs: []string{veg.ID}})
	if err != nil {
		t.Fatal(err)
	}
	if got := mentionIDs(res.MayMention); len(got) != 1 || res.MayMention[0].Kind != memory.MentionTurn || res.MayMention[0].Action != memory.ActionForget {
		t.Errorf("Forget(fact) may mention = %v, want the exchange that says it", got)
	}
}

// A topic forget removes exactly the chosen items of its preview, and
// refuses anything outside it.
func TestForgetTopic(t *testing.T) {
	s := newManageService(t, t.TempDir())
	ctx := t.Context()
	mustAdd(t, s, "", "trip", "Book a table in Lisbon for Friday.", "Booked, at eight.")
	mustAdd(t, s, "", "trip", "And a taxi to the airport.", "Done.")
	mustAdd(t, s, "", "work", "The build is slow again.", "Cache the modules.")
	if _, err := s.UpdateProfile(ctx, memory.UpdateProfileRequest{Section: "personal_context", Text: "Sister Marguerite lives in Alfama, Lisbon."}); err != nil {
		t.Fatal(err)
	}
	// A section that said it once and was rewritten since: its history
	// must not keep the topic.
	for _, text := range []string{"Flat in Lisbon until June.", "Works from home."} {
		if _, err := s.UpdateProfile(ctx, memory.UpdateProfileRequest{Section: "work_context", Text: text}); err != nil {
			t.Fatal(err)
		}
	}
	lis := mustSave(t, s, memory.SaveFactRequest{Content: "Visits Lisbon every spring"}).Fact
	other := mustSave(t, s, memory.SaveFactRequest{Content: "Prefers window seats"}).Fact
	pre, err := s.FindTopic(ctx, memory.TopicRequest{Topic: " Lisbon "})
	if err != nil {
		t.Fatal(err)
	}
	var turn string
	for _, m := range pre.Mentions {
		if m.Kind == memory.MentionTurn {
			turn = m.ID
		}
	}
	if got := mentionIDs(pre.Mentions); len(got) != 3 || turn == "" || pre.Confirm != "forget everything about Lisbon" {
		t.Fatalf("FindTopic(Lisbon) = %v (confirm %q), want the section, the fact and one exchange", got, pre.Confirm)
	}
	bad := []memory.ForgetRequest{
		{Topic: "Lisbon", FactIDs: []string{lis.ID}},                                         // no confirmation
		{Topic: "Lisbon", Confirm: pre.Confirm},                                              // nothing chosen
		{Topic: "Lisbon", Confirm: pre.Confirm, FactIDs: []string{lis.ID, other.ID}},         // outside the preview
		{Topic: "Lisbon", Confirm: pre.Confirm, Sections: []string{"top_of_mind"}},           // outside the preview
		{Topic: "Lisbon", Confirm: pre.Confirm, Sections: []string{"hobbies"}},               // no such section
		{Sections: []string{"personal_context"}},                                             // sections without topic
		{Topic: "the", Confirm: memory.ForgetTopicConfirm("the"), FactIDs: []string{lis.ID}}, // nothing to search
		{Topic: "Lisbon", Confirm: pre.Confirm, FactIDs: []string{lis.ID}, ThreadID: "trip"}, // with a thread
	}
	for _, req := range bad {
		if _, err := s.Forget(ctx, req); !errors.Is(err, memory.ErrInvalidInput) {
			t.Errorf("Forget(%+v) error = %v, want ErrInvalidInput", req, err)
		}
	}
	if again, _ := s.FindTopic(ctx, memory.TopicRequest{Topic: "Lisbon"}); len(again.Mentions) != 3 {
		t.Fatalf("a refused forget changed memory: %v", mentionIDs(again.Mentions))
	}
	res, err := s.Forget(ctx, memory.ForgetRequest{Topic: "Lisbon", Confirm: pre.Confirm, FactIDs: []string{lis.ID}, TurnIDs: []string{turn},
		Sections: []string{"personal_context"}})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.FactsRemoved) != 1 || len(res.TurnsRemoved) != 1 || !slices.Equal(res.SectionsCleared, []string{"personal_context"}) || len(res.DerivedFactsRemoved) != 0 {
		t.Errorf("Forget(topic) = %+v", res)
	}
	if after, _ := s.FindTopic(ctx, memory.TopicRequest{Topic: "Lisbon"}); len(after.Mentions) != 0 {
		t.Errorf("after the topic forget FindTopic(Lisbon) = %v", mentionIDs(after.Mentions))
	}
	list, err := s.List(ctx, memory.ListRequest{Kind: "turns"})
	if err != nil {
		t.Fatal(err)
	}
	if list.Total != 2 {
		t.Errorf("after the topic forget %d exchanges are left, want 2 (only the chosen one went)", list.Total)
	}
	facts, _ := s.List(ctx, memory.ListRequest{})
	if facts.Total != 1 || facts.Facts[0].ID != other.ID {
		t.Errorf("after the topic forget the facts are %+v, want only %s", facts.Facts, other.ID)
	}
	h, err := s.FactHistory(ctx, memory.HistoryRequest{Limit: 100})
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range h.SectionEvents {
		if strings.Contains(e.Old+e.New, "Lisbon") {
			t.Errorf("after the topic forget the section history keeps %+v", e)
		}
	}
	p, _ := s.Profile(ctx, memory.ProfileRequest{})
	if p.User.PersonalContext.Summary != "" {
		t.Errorf("after the topic forget the personal section says %q", p.User.PersonalContext.Summary)
	}
}
