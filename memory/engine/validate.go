package engine

import (
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/mnemo-mcp/mnemo/memory"
	"github.com/mnemo-mcp/mnemo/memory/update"
)

// normalizeMessages validates the request and returns it as one message list.
func (s *Service) normalizeMessages(req *memory.AddRequest) ([]memory.Message, error) {
	hasPair := req.UserInput != "" || req.AgentResponse != ""
	switch {
	case hasPair && len(req.Messages) > 0:
		return nil, memory.Invalid("messages", "give either user_input/agent_response or messages, not both")
	case !hasPair && len(req.Messages) == 0:
		return nil, memory.Invalid("user_input", "nothing to store: give user_input and agent_response, or a messages list")
	}
	if hasPair {
		if err := memory.CheckText("user_input", req.UserInput, s.cfg.MaxMessageBytes); err != nil {
			return nil, err
		}
		if err := memory.CheckText("agent_response", req.AgentResponse, s.cfg.MaxMessageBytes); err != nil {
			return nil, err
		}
		return []memory.Message{{Role: memory.RoleUser, Content: req.UserInput}, {Role: memory.RoleAssistant, Content: req.AgentResponse}}, nil
	}
	if len(req.Messages) > s.cfg.MaxMessages {
		return nil, memory.Invalid("messages", "has %d messages; the limit is %d per call", len(req.Messages), s.cfg.MaxMessages)
	}
	for i, m := range req.Messages {
		field := fmt.Sprintf("messages[%d]", i)
		if !m.Role.Valid() {
			return nil, memory.Invalid(field+".role", "%q is not a role; use system, developer, user, assistant or tool", m.Role)
		}
		if err := memory.CheckText(field+".content", m.Content, s.cfg.MaxMessageBytes); err != nil {
			return nil, err
		}
	}
	return req.Messages, nil
}

// checkFactContent trims content and checks it is worth storing as a fact.
func checkFactContent(content string) (string, error) {
	content = strings.TrimSpace(content)
	switch {
	case content == "":
		return "", memory.Invalid("content", "is empty; state the fact as one short sentence, e.g. \"Prefers Go over Python\"")
	case memory.TextProblem(content) != "":
		return "", memory.Invalid("content", "%s", memory.TextProblem(content))
	case utf8.RuneCountInString(content) > memory.UpdateMaxContentRunes:
		return "", memory.Invalid("content", "is %d characters long; keep a fact under %d characters", utf8.RuneCountInString(content), memory.UpdateMaxContentRunes)
	case update.ScrubUploads(content) == "":
		return "", memory.Invalid("content", "is only about an uploaded file; uploaded files are not remembered, state what was learned from it instead")
	case update.FoldFactContent(content) == "":
		return "", memory.Invalid("content", "has no words; state the fact as a short sentence")
	}
	return content, nil
}

// checkRetrieve checks a retrieval request and returns its result and
// token limits, the configured defaults where the request leaves them 0.
func (s *Service) checkRetrieve(req *memory.RetrieveRequest) (maxResults, maxTokens int, err error) {
	if strings.TrimSpace(req.Query) == "" {
		return 0, 0, memory.Invalid("query", "must not be empty; pass what you want to remember, e.g. the user's latest message")
	}
	if err := memory.CheckText("query", req.Query, s.cfg.MaxQueryBytes); err != nil {
		return 0, 0, err
	}
	if len(req.Keywords) > memory.MaxRetrieveKeywords {
		return 0, 0, memory.Invalid("keywords", "has %d entries; give at most %d of the likeliest", len(req.Keywords), memory.MaxRetrieveKeywords)
	}
	for _, kw := range req.Keywords {
		if err := memory.CheckText("keywords", kw, memory.MaxKeywordBytes); err != nil {
			return 0, 0, err
		}
	}
	for _, f := range []struct{ name, v string }{{"relationship_with_user", req.RelationshipWithUser}, {"style_hint", req.StyleHint}} {
		if err := memory.CheckText(f.name, f.v, 512); err != nil {
			return 0, 0, err
		}
	}
	maxResults = req.MaxResults
	switch {
	case maxResults == 0:
		maxResults = s.cfg.RetrievalQueueCapacity
	case maxResults < memory.MinRetrieveResults || maxResults > memory.MaxRetrieveResults:
		return 0, 0, memory.Invalid("max_results", "%d is out of range; use %d to %d", maxResults, memory.MinRetrieveResults, memory.MaxRetrieveResults)
	}
	maxTokens = req.MaxTokens
	switch {
	case maxTokens == 0:
		maxTokens = s.cfg.MaxInjectionTokens
	case maxTokens < memory.MinRetrieveTokens || maxTokens > memory.MaxRetrieveTokens:
		return 0, 0, memory.Invalid("max_tokens", "%d is out of range; use %d to %d", maxTokens, memory.MinRetrieveTokens, memory.MaxRetrieveTokens)
	}
	return maxResults, maxTokens, nil
}

// factChange is a checked save or update of one fact; for an update, the
// zero value of a field means it is left as it is.
type factChange struct {
	content, category string
	confidence        float64
	source            string
}

// checkSave checks a save request, applying the defaults.
func checkSave(req *memory.SaveFactRequest) (factChange, error) {
	var ch factChange
	var err error
	if ch.content, err = checkFactContent(req.Content); err != nil {
		return factChange{}, err
	}
	if ch.category, err = memory.CheckCategory(req.Category, memory.CategoryContext); err != nil {
		return factChange{}, err
	}
	if ch.confidence, err = memory.CheckConfidence(req.Confidence, memory.DefaultManualConfidence); err != nil {
		return factChange{}, err
	}
	if ch.source, err = memory.ManualSource(req.Source); err != nil {
		return factChange{}, err
	}
	return ch, nil
}

// checkUpdate checks an update request.
func checkUpdate(req *memory.UpdateFactRequest) (factChange, error) {
	if strings.TrimSpace(req.ID) == "" {
		return factChange{}, memory.Invalid("id", "is empty; pass the id of the fact to change (fact_…), as list_memories or retrieve_memory show it")
	}
	if req.Content == nil && req.Category == nil && req.Confidence == nil && req.Pinned == nil {
		return factChange{}, memory.Invalid("arguments", "nothing to change; set content, category, confidence or pinned")
	}
	var ch factChange
	var err error
	if req.Content != nil {
		if ch.content, err = checkFactContent(*req.Content); err != nil {
			return factChange{}, err
		}
	}
	if req.Category != nil {
		if strings.TrimSpace(*req.Category) == "" {
			return factChange{}, memory.Invalid("category", "is empty; use one of %s, or leave it out", strings.Join(memory.Categories, ", "))
		}
		if ch.category, err = memory.CheckCategory(*req.Category, ""); err != nil {
			return factChange{}, err
		}
	}
	if req.Confidence != nil {
		if *req.Confidence == 0 {
			return factChange{}, memory.Invalid("confidence", "must be above 0 and at most 1; to remove the fact, forget it")
		}
		if ch.confidence, err = memory.CheckConfidence(*req.Confidence, 0); err != nil {
			return factChange{}, err
		}
	}
	if ch.source, err = memory.ManualSource(req.Source); err != nil {
		return factChange{}, err
	}
	return ch, nil
}
