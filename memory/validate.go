package memory

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"strings"
	"time"
	"unicode/utf8"
)

// Retrieval limits: what one retrieval may ask for (max_results,
// max_tokens) and what the configured defaults (retrieval_queue_capacity,
// max_injection_tokens) may be. Settings, tool schemas and the Service all
// use these.
const (
	MinRetrieveResults = 1
	MaxRetrieveResults = 100
	MinRetrieveTokens  = 100
	MaxRetrieveTokens  = 8000
)

// earliest and latest bound accepted timestamps.
var (
	earliest = time.Date(1900, 1, 1, 0, 0, 0, 0, time.UTC)
	latest   = time.Date(2200, 1, 1, 0, 0, 0, 0, time.UTC)
)

// ParseTimestamp accepts RFC 3339 (with or without fractional seconds) and
// "YYYY-MM-DD HH:MM:SS" or "YYYY-MM-DDTHH:MM:SS" (taken as UTC), between
// the years 1900 and 2200.
func ParseTimestamp(s string) (time.Time, error) {
	s = strings.TrimSpace(s)
	var t time.Time
	var err error
	for _, layout := range []string{time.RFC3339Nano, "2006-01-02 15:04:05", "2006-01-02T15:04:05", "2006-01-02 15:04:05Z07:00"} {
		if t, err = time.Parse(layout, s); err == nil {
			break
		}
	}
	if err != nil {
		return time.Time{}, invalid("timestamp", "%q is not a valid time; use RFC 3339 like 2024-05-08T13:56:00Z or \"2024-05-08 13:56:00\"", s)
	}
	if t.Before(earliest) || !t.Before(latest) {
		return time.Time{}, invalid("timestamp", "%q is out of range; use a date between 1900 and 2200", s)
	}
	return t.UTC(), nil
}

// validateMetaData checks that raw is a JSON object within the size limit
// and returns it compacted.
func validateMetaData(raw json.RawMessage, limit int) (json.RawMessage, error) {
	trimmed := bytes.TrimSpace(raw)
	if len(trimmed) == 0 || bytes.Equal(trimmed, []byte("null")) {
		return nil, nil
	}
	if len(trimmed) > limit {
		return nil, invalid("meta_data", "is %d bytes; the limit is %d", len(trimmed), limit)
	}
	if trimmed[0] != '{' {
		return nil, invalid("meta_data", "must be a JSON object like {\"source\": \"chat\"}")
	}
	var buf bytes.Buffer
	if err := json.Compact(&buf, trimmed); err != nil {
		return nil, invalid("meta_data", "is not valid JSON: %v", err)
	}
	if err := checkDepth(buf.Bytes(), 32); err != nil {
		return nil, err
	}
	return json.RawMessage(buf.Bytes()), nil
}

// checkDepth rejects JSON nested deeper than max levels.
func checkDepth(data []byte, max int) error {
	depth := 0
	inString, escaped := false, false
	for _, c := range data {
		switch {
		case escaped:
			escaped = false
		case inString && c == '\\':
			escaped = true
		case c == '"':
			inString = !inString
		case inString:
		case c == '{' || c == '[':
			depth++
			if depth > max {
				return invalid("meta_data", "is nested more than %d levels deep", max)
			}
		case c == '}' || c == ']':
			depth--
		}
	}
	return nil
}

// Text that enters memory follows one rule, whoever sends it: a turn's
// user input, reply and messages, a saved or updated fact, a query, what a
// language model writes into facts, profile sections and knowledge, and
// what mnemo import reads. It must be valid UTF-8, hold no U+FFFD (the
// replacement character: what invalid UTF-8 and lone surrogates such as
// \udc00 become when a JSON-RPC message is decoded, before any tool sees
// it) and no control character other than tab, newline and carriage
// return. The refused controls are C0 (NUL, BEL, ESC, ...), DEL and C1
// (U+0080–U+009F; U+009B is a one-character CSI): the bytes of terminal
// escape sequences such as OSC 52, which writes the clipboard. Text from a
// caller (tool arguments, imports) is refused with a message naming the
// field; text a language model wrote is cleaned (cleanText), with a note.

// controlRune reports whether r is a control character memory does not
// keep.
func controlRune(r rune) bool {
	return r < 0x20 && r != '\t' && r != '\n' && r != '\r' || r >= 0x7f && r <= 0x9f
}

// textProblem says what in text breaks the rule, or returns "".
func textProblem(text string) string {
	if !utf8.ValidString(text) {
		return "is not valid UTF-8"
	}
	for _, r := range text {
		switch {
		case controlRune(r):
			return fmt.Sprintf("contains control character %U; remove it", r)
		case r == utf8.RuneError:
			return "contains U+FFFD, the replacement character: the text was not valid UTF-8 or held a lone surrogate (like \\udc00) when it was sent; send it as valid UTF-8"
		}
	}
	return ""
}

// cleanText removes from text what the rule refuses: control characters,
// U+FFFD and bytes that are not UTF-8. It reports whether it removed any.
func cleanText(text string) (string, bool) {
	clean := strings.Map(func(r rune) rune {
		if controlRune(r) || r == utf8.RuneError {
			return -1
		}
		return r
	}, text)
	return clean, clean != text
}

// checkText refuses text that breaks the rule or is over limit bytes.
func checkText(field, text string, limit int) error {
	if len(text) > limit {
		return invalid(field, "is %d bytes; the limit is %d — split it into several calls", len(text), limit)
	}
	if p := textProblem(text); p != "" {
		return invalid(field, "%s", p)
	}
	return nil
}

// normalizeMessages validates the request and returns it as one message list.
func (s *Service) normalizeMessages(req *AddRequest) ([]Message, error) {
	hasPair := req.UserInput != "" || req.AgentResponse != ""
	switch {
	case hasPair && len(req.Messages) > 0:
		return nil, invalid("messages", "give either user_input/agent_response or messages, not both")
	case !hasPair && len(req.Messages) == 0:
		return nil, invalid("user_input", "nothing to store: give user_input and agent_response, or a messages list")
	}
	if hasPair {
		if err := checkText("user_input", req.UserInput, s.cfg.MaxMessageBytes); err != nil {
			return nil, err
		}
		if err := checkText("agent_response", req.AgentResponse, s.cfg.MaxMessageBytes); err != nil {
			return nil, err
		}
		return []Message{{Role: RoleUser, Content: req.UserInput}, {Role: RoleAssistant, Content: req.AgentResponse}}, nil
	}
	if len(req.Messages) > s.cfg.MaxMessages {
		return nil, invalid("messages", "has %d messages; the limit is %d per call", len(req.Messages), s.cfg.MaxMessages)
	}
	for i, m := range req.Messages {
		field := fmt.Sprintf("messages[%d]", i)
		if !m.Role.Valid() {
			return nil, invalid(field+".role", "%q is not a role; use system, developer, user, assistant or tool", m.Role)
		}
		if err := checkText(field+".content", m.Content, s.cfg.MaxMessageBytes); err != nil {
			return nil, err
		}
	}
	return req.Messages, nil
}

// manualSource checks the source of a manual change: SourceManual when
// empty, else SourceManual or SourceCLI.
func manualSource(src string) (string, error) {
	switch src {
	case "":
		return SourceManual, nil
	case SourceManual, SourceCLI:
		return src, nil
	}
	return "", invalid("source", "%q is not a source of manual changes; use %q or %q", src, SourceManual, SourceCLI)
}

// checkFactContent trims content and checks it is worth storing as a fact.
func checkFactContent(content string) (string, error) {
	content = strings.TrimSpace(content)
	switch {
	case content == "":
		return "", invalid("content", "is empty; state the fact as one short sentence, e.g. \"Prefers Go over Python\"")
	case textProblem(content) != "":
		return "", invalid("content", "%s", textProblem(content))
	case utf8.RuneCountInString(content) > updateMaxContentRunes:
		return "", invalid("content", "is %d characters long; keep a fact under %d characters", utf8.RuneCountInString(content), updateMaxContentRunes)
	case scrubUploads(content) == "":
		return "", invalid("content", "is only about an uploaded file; uploaded files are not remembered, state what was learned from it instead")
	case foldFactContent(content) == "":
		return "", invalid("content", "has no words; state the fact as a short sentence")
	}
	return content, nil
}

// checkCategory normalises a category; empty means def.
func checkCategory(cat, def string) (string, error) {
	cat = strings.ToLower(strings.TrimSpace(cat))
	if cat == "" {
		return def, nil
	}
	if !ValidCategory(cat) {
		return "", invalid("category", "%q is not a category; use one of %s", cat, strings.Join(Categories, ", "))
	}
	return cat, nil
}

// checkConfidence checks a confidence in (0, 1]; 0 means def.
func checkConfidence(c, def float64) (float64, error) {
	switch {
	case c == 0:
		return def, nil
	case math.IsNaN(c) || c < 0 || c > 1:
		return 0, invalid("confidence", "%v is not between 0 and 1; use 0.9 for something the user stated plainly", c)
	}
	return c, nil
}

// parseBound parses an optional RFC 3339 time or date argument.
func parseBound(field, v string) (time.Time, error) {
	if v == "" {
		return time.Time{}, nil
	}
	for _, layout := range []string{time.RFC3339Nano, "2006-01-02"} {
		if t, err := time.Parse(layout, v); err == nil {
			return t, nil
		}
	}
	return time.Time{}, invalid(field, "%q is not a time; use RFC 3339 like 2025-03-01T12:00:00Z, or a date like 2025-03-01", v)
}

// checkPage applies the pagination defaults and bounds.
func checkPage(offset, limit int) (int, int, error) {
	switch {
	case offset < 0:
		return 0, 0, invalid("offset", "is %d; use 0 or a next_offset from an earlier page", offset)
	case limit < 0 || limit > MaxListLimit:
		return 0, 0, invalid("limit", "is %d; use 1 to %d", limit, MaxListLimit)
	case limit == 0:
		limit = DefaultListLimit
	}
	return offset, limit, nil
}

// checkRetrieve checks a retrieval request and returns its result and
// token limits, the configured defaults where the request leaves them 0.
func (s *Service) checkRetrieve(req *RetrieveRequest) (maxResults, maxTokens int, err error) {
	if strings.TrimSpace(req.Query) == "" {
		return 0, 0, invalid("query", "must not be empty; pass what you want to remember, e.g. the user's latest message")
	}
	if err := checkText("query", req.Query, s.cfg.MaxQueryBytes); err != nil {
		return 0, 0, err
	}
	for _, f := range []struct{ name, v string }{{"relationship_with_user", req.RelationshipWithUser}, {"style_hint", req.StyleHint}} {
		if err := checkText(f.name, f.v, 512); err != nil {
			return 0, 0, err
		}
	}
	maxResults = req.MaxResults
	switch {
	case maxResults == 0:
		maxResults = s.cfg.RetrievalQueueCapacity
	case maxResults < MinRetrieveResults || maxResults > MaxRetrieveResults:
		return 0, 0, invalid("max_results", "%d is out of range; use %d to %d", maxResults, MinRetrieveResults, MaxRetrieveResults)
	}
	maxTokens = req.MaxTokens
	switch {
	case maxTokens == 0:
		maxTokens = s.cfg.MaxInjectionTokens
	case maxTokens < MinRetrieveTokens || maxTokens > MaxRetrieveTokens:
		return 0, 0, invalid("max_tokens", "%d is out of range; use %d to %d", maxTokens, MinRetrieveTokens, MaxRetrieveTokens)
	}
	return maxResults, maxTokens, nil
}

// checkForget checks a forget request for scope and returns the source of
// the change.
func checkForget(req *ForgetRequest, scope Scope) (string, error) {
	source, err := manualSource(req.Source)
	if err != nil {
		return "", err
	}
	if req.ThreadID != "" {
		if err := ValidateID("thread_id", req.ThreadID); err != nil {
			return "", err
		}
	}
	some := len(req.FactIDs) > 0 || len(req.TurnIDs) > 0 || req.ThreadID != ""
	switch {
	case req.AllOfScope && some:
		return "", invalid("all", "forgets the whole scope; leave fact_ids, turn_ids and thread_id out, or do not set all")
	case req.AllOfScope && req.Confirm != ForgetEverything:
		return "", invalid("confirm", "must be exactly %q to delete all memory of %s; ask the user first", ForgetEverything, scope.Key())
	case !req.AllOfScope && req.Confirm != "":
		return "", invalid("confirm", "is only for forgetting a whole scope (all: true); leave it out")
	case !req.AllOfScope && !some:
		return "", invalid("arguments", "nothing to forget; give fact_ids, turn_ids or thread_id (list_memories shows them), or all with confirm %q", ForgetEverything)
	}
	for i, id := range req.FactIDs {
		if strings.TrimSpace(id) == "" {
			return "", invalid("fact_ids", "item %d is empty", i)
		}
	}
	for i, id := range req.TurnIDs {
		if strings.TrimSpace(id) == "" {
			return "", invalid("turn_ids", "item %d is empty", i)
		}
	}
	return source, nil
}

// factChange is a checked save or update of one fact; for an update, the
// zero value of a field means it is left as it is.
type factChange struct {
	content, category string
	confidence        float64
	source            string
}

// checkSave checks a save request, applying the defaults.
func checkSave(req *SaveFactRequest) (factChange, error) {
	var ch factChange
	var err error
	if ch.content, err = checkFactContent(req.Content); err != nil {
		return factChange{}, err
	}
	if ch.category, err = checkCategory(req.Category, CategoryContext); err != nil {
		return factChange{}, err
	}
	if ch.confidence, err = checkConfidence(req.Confidence, DefaultManualConfidence); err != nil {
		return factChange{}, err
	}
	if ch.source, err = manualSource(req.Source); err != nil {
		return factChange{}, err
	}
	return ch, nil
}

// checkUpdate checks an update request.
func checkUpdate(req *UpdateFactRequest) (factChange, error) {
	if strings.TrimSpace(req.ID) == "" {
		return factChange{}, invalid("id", "is empty; pass the id of the fact to change (fact_…), as list_memories or retrieve_memory show it")
	}
	if req.Content == nil && req.Category == nil && req.Confidence == nil {
		return factChange{}, invalid("arguments", "nothing to change; set content, category or confidence")
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
			return factChange{}, invalid("category", "is empty; use one of %s, or leave it out", strings.Join(Categories, ", "))
		}
		if ch.category, err = checkCategory(*req.Category, ""); err != nil {
			return factChange{}, err
		}
	}
	if req.Confidence != nil {
		if *req.Confidence == 0 {
			return factChange{}, invalid("confidence", "must be above 0 and at most 1; to remove the fact, forget it")
		}
		if ch.confidence, err = checkConfidence(*req.Confidence, 0); err != nil {
			return factChange{}, err
		}
	}
	if ch.source, err = manualSource(req.Source); err != nil {
		return factChange{}, err
	}
	return ch, nil
}
