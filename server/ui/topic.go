package ui

import (
	"net/http"
	"strings"

	"github.com/mnemo-mcp/mnemo/memory"
)

// topicData is the topic page: what was searched for and, once it was,
// what mentions it (the preview of a topic forget).
type topicData struct {
	Query  string
	Result *memory.TopicResult
}

// topicPage searches memory for a word or a name: looking changes
// nothing; the page's form forgets the items left ticked.
func (h *handler) topicPage(r *http.Request, v *view) error {
	v.Title, v.Page = "Forget a topic", "topic"
	data := &topicData{Query: strings.TrimSpace(r.URL.Query().Get("q"))}
	v.Data = data
	if data.Query == "" {
		return nil
	}
	res, err := h.svc.FindTopic(r.Context(), memory.TopicRequest{UserID: v.Scope.UserID, AgentName: v.Scope.AgentName, Topic: data.Query})
	if err != nil {
		return err
	}
	data.Result = res
	// What the preview lists is what the person chooses from: it does
	// not change under them by itself.
	v.Live = false
	return nil
}

// developersPage links the pages written for the people who build with
// mnemo: sessions and their heat, what a retrieval injects, pending work
// and settings.
func (h *handler) developersPage(_ *http.Request, v *view) error {
	v.Title, v.Page = "For developers", "developers"
	return nil
}

// pickName is the form field a mention's box posts: fact, turn or section.
func pickName(m memory.Mention) string {
	switch m.Kind {
	case memory.MentionFact:
		return "fact"
	case memory.MentionSection:
		return "section"
	}
	return "turn"
}

// pickValue is the value a mention's box posts: its id or section name.
func pickValue(m memory.Mention) string {
	if m.Kind == memory.MentionSection {
		return m.Section
	}
	return m.ID
}

// kindName says in words what a mention is.
func kindName(m memory.Mention) string {
	switch m.Kind {
	case memory.MentionFact:
		return "Fact:"
	case memory.MentionSection:
		return "Profile, " + sectionTitle(m.Section) + ":"
	}
	return "Exchange, " + m.Time.UTC().Format("2006-01-02") + ":"
}
