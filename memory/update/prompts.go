package update

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/mnemo-mcp/mnemo/memory"
)

// ProfileForPrompt renders the profile and history sections as JSON.
func ProfileForPrompt(d *memory.Document) string {
	view := map[string]string{}
	for _, ns := range d.Sections() {
		view[ns.Name] = ns.Section.Summary
	}
	b, _ := json.MarshalIndent(view, "", "  ")
	return string(b)
}

func KnowledgeLines(list []memory.Fact) string {
	var b strings.Builder
	for _, f := range list {
		b.WriteString("- " + f.Content + "\n")
	}
	return strings.TrimSpace(b.String())
}

// promptFact is the view of a fact the model sees.
type promptFact struct {
	ID         string  `json:"id"`
	Content    string  `json:"content"`
	Category   string  `json:"category"`
	Confidence float64 `json:"confidence"`
}

// MemoryForPrompt renders the parts of the document the model may change.
func MemoryForPrompt(d *memory.Document) string {
	facts := make([]promptFact, len(d.Facts))
	for i, f := range d.Facts {
		facts[i] = promptFact{f.ID, f.Content, f.Category, f.Confidence}
	}
	summary := func(s memory.Section) map[string]string { return map[string]string{"summary": s.Summary} }
	view := map[string]any{
		"user": map[string]any{
			"workContext":     summary(d.User.WorkContext),
			"personalContext": summary(d.User.PersonalContext),
			"topOfMind":       summary(d.User.TopOfMind),
		},
		"history": map[string]any{
			"recentMonths":       summary(d.History.RecentMonths),
			"earlierContext":     summary(d.History.EarlierContext),
			"longTermBackground": summary(d.History.LongTermBackground),
		},
		"facts": facts,
	}
	b, _ := json.MarshalIndent(view, "", "  ")
	return string(b)
}

// ConversationForPrompt lays the turns out as a dated transcript.
func ConversationForPrompt(turns []memory.Turn) string {
	var sb strings.Builder
	for _, t := range turns {
		fmt.Fprintf(&sb, "[%s]\n", t.Time.UTC().Format("2006-01-02 15:04"))
		if t.User != "" {
			sb.WriteString("User: " + t.User + "\n")
		}
		if t.Reply != "" {
			sb.WriteString("Assistant: " + t.Reply + "\n")
		}
		sb.WriteString("\n")
	}
	return strings.TrimSpace(sb.String())
}
