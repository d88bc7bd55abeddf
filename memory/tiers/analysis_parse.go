package tiers

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/mnemo-mcp/mnemo/memory"
	"github.com/mnemo-mcp/mnemo/memory/update"
)

// ParseSessionSummary reads {"summary": "...", "keywords": [...]} from a
// reply that may wrap it in prose or code fences.
func ParseSessionSummary(reply string) (string, []string, error) {
	obj, err := update.FindObject(reply, "summary")
	if err != nil {
		return "", nil, err
	}
	var summary string
	var keywords []string
	if json.Unmarshal(obj["summary"], &summary) != nil || strings.TrimSpace(summary) == "" {
		return "", nil, fmt.Errorf("parse session summary: no summary text: %w", update.ErrBadReply)
	}
	_ = json.Unmarshal(obj["keywords"], &keywords) // keywords are optional
	out := make([]string, 0, len(keywords))
	for _, k := range keywords {
		k = strings.Join(strings.Fields(k), " ")
		if k != "" && len(out) < MidTermKeywords && !slices.Contains(out, k) {
			out = append(out, ClipRunes(k, 60))
		}
	}
	return strings.Join(strings.Fields(summary), " "), out, nil
}

// ParseAnalysis reads a session analysis reply: profile sections as in a
// memory update, plus userKnowledge and assistantKnowledge lists whose
// entries are strings or {"content", "correction"} objects. Facts in the
// reply are ignored: the analysis changes the profile and knowledge only.
func ParseAnalysis(reply string) (*update.Update, error) {
	obj, err := update.FindObject(reply, "user", "history", "userKnowledge", "assistantKnowledge")
	if err != nil {
		return nil, err
	}
	p := &update.UpdateParser{}
	p.Sections(obj)
	p.U.UserKnowledge = parseKnowledge(obj["userKnowledge"], &p.U.Notes)
	p.U.AssistantKnowledge = parseKnowledge(obj["assistantKnowledge"], &p.U.Notes)
	return &p.U, nil
}

func parseKnowledge(raw json.RawMessage, notes *[]string) []update.NewFact {
	if len(raw) == 0 || update.IsJSONNull(raw) {
		return nil
	}
	var items []json.RawMessage
	if err := json.Unmarshal(raw, &items); err != nil {
		*notes = append(*notes, "knowledge list is not a JSON array")
		return nil
	}
	var out []update.NewFact
	for _, it := range items[:min(len(items), memory.UpdateMaxNewFacts)] {
		var e struct {
			Content    string `json:"content"`
			Correction bool   `json:"correction"`
		}
		if json.Unmarshal(it, &e.Content) != nil && json.Unmarshal(it, &e) != nil {
			continue
		}
		c := strings.Join(strings.Fields(e.Content), " ")
		if c == "" || strings.EqualFold(strings.Trim(c, "-. "), "none") {
			continue
		}
		cat := memory.CategoryKnowledge
		if e.Correction {
			cat = memory.CategoryCorrection
		}
		out = append(out, update.NewFact{Content: ClipRunes(c, memory.UpdateMaxContentRunes), Category: cat, Confidence: 1})
	}
	return out
}
