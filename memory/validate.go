package memory

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/mnemo-mcp/mnemo/memory/redact"
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
	// MaxRetrieveKeywords and MaxKeywordBytes bound retrieve_memory's
	// keywords: how many, and the length of each.
	MaxRetrieveKeywords = 20
	MaxKeywordBytes     = 100
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
	t, err := ParseTime(s)
	if err != nil {
		return time.Time{}, err
	}
	if !InTimeRange(t) {
		return time.Time{}, Invalid("timestamp", "%q is out of range; use a date between 1900 and 2200", strings.TrimSpace(s))
	}
	return t, nil
}

// ParseTime reads a time written as ParseTimestamp accepts it, in any
// year: a reader of other files parses with it and leaves the range to
// the rules of what is stored (CheckTime).
func ParseTime(s string) (time.Time, error) {
	s = strings.TrimSpace(s)
	var t time.Time
	var err error
	for _, layout := range []string{time.RFC3339Nano, "2006-01-02 15:04:05", "2006-01-02T15:04:05", "2006-01-02 15:04:05Z07:00"} {
		if t, err = time.Parse(layout, s); err == nil {
			break
		}
	}
	if err != nil {
		return time.Time{}, Invalid("timestamp", "%q is not a valid time; use RFC 3339 like 2024-05-08T13:56:00Z or \"2024-05-08 13:56:00\"", s)
	}
	return t.UTC(), nil
}

// InTimeRange reports whether t is a time memory accepts: from the year
// 1900 up to, not including, 2200 — the range of the tools' timestamps.
func InTimeRange(t time.Time) bool { return !t.Before(earliest) && t.Before(latest) }

// CheckTime refuses a time outside the tools' range (InTimeRange); the
// zero time (not given) passes.
func CheckTime(field string, t time.Time) error {
	if t.IsZero() || InTimeRange(t) {
		return nil
	}
	return Invalid(field, "%s is out of range; a time of memory is between 1900 and 2200", t.UTC().Format(time.RFC3339))
}

// CheckID applies the id rule (ValidateID) and refuses an id that the
// redaction rule recognises as a credential: ids are stored as written (a
// user_id names a directory, a thread_id is listed and logged), so a
// secret given as one would be kept in the clear. The error names the
// kind, never the id. Every way in (tools, imports, the viewer) checks ids
// with it.
func CheckID(field, id string) error {
	if err := ValidateID(field, id); err != nil {
		return err
	}
	if _, found := redact.Text(id); len(found) > 0 {
		return Invalid(field, "looks like a credential (%s), and ids are stored and shown as written; use a name that is not a secret",
			strings.Join(redact.Kinds(found), ", "))
	}
	return nil
}

// ValidateMetaData checks that raw is a JSON object within the size limit
// and returns it compacted.
func ValidateMetaData(raw json.RawMessage, limit int) (json.RawMessage, error) {
	trimmed := bytes.TrimSpace(raw)
	if len(trimmed) == 0 || bytes.Equal(trimmed, []byte("null")) {
		return nil, nil
	}
	if len(trimmed) > limit {
		return nil, Invalid("meta_data", "is %d bytes; the limit is %d", len(trimmed), limit)
	}
	if trimmed[0] != '{' {
		return nil, Invalid("meta_data", "must be a JSON object like {\"source\": \"chat\"}")
	}
	var buf bytes.Buffer
	if err := json.Compact(&buf, trimmed); err != nil {
		return nil, Invalid("meta_data", "is not valid JSON: %v", err)
	}
	if err := checkDepth(buf.Bytes(), 32); err != nil {
		return nil, err
	}
	if err := checkJSONText(buf.Bytes()); err != nil {
		return nil, err
	}
	return json.RawMessage(buf.Bytes()), nil
}

// checkJSONText applies the text rule (TextProblem) to every string of a
// JSON document, keys included: a control character or terminal escape
// in meta_data is refused as it is in a message.
func checkJSONText(data []byte) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	for {
		tok, err := dec.Token()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return Invalid("meta_data", "is not valid JSON: %v", err)
		}
		if s, ok := tok.(string); ok {
			if p := TextProblem(s); p != "" {
				return Invalid("meta_data", "a string %s", p)
			}
		}
	}
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
				return Invalid("meta_data", "is nested more than %d levels deep", max)
			}
		case c == '}' || c == ']':
			depth--
		}
	}
	return nil
}

// ControlRune reports whether r is a control character memory does not
// keep.
func ControlRune(r rune) bool {
	return r < 0x20 && r != '\t' && r != '\n' && r != '\r' || r >= 0x7f && r <= 0x9f
}

// TextProblem says what in text breaks the rule, or returns "".
func TextProblem(text string) string {
	if !utf8.ValidString(text) {
		return "is not valid UTF-8"
	}
	for _, r := range text {
		switch {
		case ControlRune(r):
			return fmt.Sprintf("contains control character %U; remove it", r)
		case r == utf8.RuneError:
			return "contains U+FFFD, the replacement character: the text was not valid UTF-8 or held a lone surrogate (like \\udc00) when it was sent; send it as valid UTF-8"
		}
	}
	return ""
}

// CleanText removes from text what the rule refuses: control characters,
// U+FFFD and bytes that are not UTF-8. It reports whether it removed any.
func CleanText(text string) (string, bool) {
	clean := strings.Map(func(r rune) rune {
		if ControlRune(r) || r == utf8.RuneError {
			return -1
		}
		return r
	}, text)
	return clean, clean != text
}

// CheckText refuses text that breaks the rule or is over limit bytes.
func CheckText(field, text string, limit int) error {
	if len(text) > limit {
		return Invalid(field, "is %d bytes; the limit is %d — split it into several calls", len(text), limit)
	}
	if p := TextProblem(text); p != "" {
		return Invalid(field, "%s", p)
	}
	return nil
}

// ManualSource checks the source of a manual change: SourceManual when
// empty, else SourceManual or SourceCLI.
func ManualSource(src string) (string, error) {
	switch src {
	case "":
		return SourceManual, nil
	case SourceManual, SourceCLI:
		return src, nil
	}
	return "", Invalid("source", "%q is not a source of manual changes; use %q or %q", src, SourceManual, SourceCLI)
}

// CheckCategory normalises a category; empty means def.
func CheckCategory(cat, def string) (string, error) {
	cat = strings.ToLower(strings.TrimSpace(cat))
	if cat == "" {
		return def, nil
	}
	if !ValidCategory(cat) {
		return "", Invalid("category", "%q is not a category; use one of %s", cat, strings.Join(Categories, ", "))
	}
	return cat, nil
}

// CheckConfidence checks a confidence in (0, 1]; 0 means def.
func CheckConfidence(c, def float64) (float64, error) {
	switch {
	case c == 0:
		return def, nil
	case math.IsNaN(c) || c < 0 || c > 1:
		return 0, Invalid("confidence", "%v is not between 0 and 1; use 0.9 for something the user stated plainly", c)
	}
	return c, nil
}

// ParseBound parses an optional RFC 3339 time or date argument.
func ParseBound(field, v string) (time.Time, error) {
	if v == "" {
		return time.Time{}, nil
	}
	for _, layout := range []string{time.RFC3339Nano, "2006-01-02"} {
		if t, err := time.Parse(layout, v); err == nil {
			return t, nil
		}
	}
	return time.Time{}, Invalid(field, "%q is not a time; use RFC 3339 like 2025-03-01T12:00:00Z, or a date like 2025-03-01", v)
}

// CheckPage applies the pagination defaults and bounds.
func CheckPage(offset, limit int) (int, int, error) {
	switch {
	case offset < 0:
		return 0, 0, Invalid("offset", "is %d; use 0 or a next_offset from an earlier page", offset)
	case limit < 0 || limit > MaxListLimit:
		return 0, 0, Invalid("limit", "is %d; use 1 to %d", limit, MaxListLimit)
	case limit == 0:
		limit = DefaultListLimit
	}
	return offset, limit, nil
}

// CheckForget checks a forget request for scope and returns the source of
// the change.
func CheckForget(req *ForgetRequest, scope Scope) (string, error) {
	source, err := ManualSource(req.Source)
	if err != nil {
		return "", err
	}
	if req.ThreadID != "" {
		if err := ValidateID("thread_id", req.ThreadID); err != nil {
			return "", err
		}
	}
	some := len(req.FactIDs) > 0 || len(req.TurnIDs) > 0 || req.ThreadID != ""
	if req.Topic != "" || len(req.Sections) > 0 {
		return source, checkForgetTopic(req, scope)
	}
	switch {
	case req.AllOfScope && some:
		return "", Invalid("all", "forgets the whole scope; leave fact_ids, turn_ids and thread_id out, or do not set all")
	case req.AllOfScope && req.Confirm != ForgetEverything:
		return "", Invalid("confirm", "must be exactly %q to delete all memory of %s; ask the user first", ForgetEverything, scope.Key())
	case !req.AllOfScope && req.Confirm != "":
		return "", Invalid("confirm", "is only for forgetting a whole scope (all: true); leave it out")
	case !req.AllOfScope && !some:
		return "", Invalid("arguments", "nothing to forget; give fact_ids, turn_ids or thread_id (list_memories shows them), or all with confirm %q", ForgetEverything)
	}
	for i, id := range req.FactIDs {
		if strings.TrimSpace(id) == "" {
			return "", Invalid("fact_ids", "item %d is empty", i)
		}
	}
	for i, id := range req.TurnIDs {
		if strings.TrimSpace(id) == "" {
			return "", Invalid("turn_ids", "item %d is empty", i)
		}
	}
	return source, nil
}

// checkForgetTopic checks a forget of a topic's chosen items: a topic,
// its confirmation, at least one item chosen, no thread and no whole scope.
func checkForgetTopic(req *ForgetRequest, scope Scope) error {
	topic := strings.TrimSpace(req.Topic)
	switch {
	case topic == "":
		return Invalid("topic", "is empty; sections are cleared only with the topic whose preview listed them")
	case req.AllOfScope || req.ThreadID != "":
		return Invalid("topic", "forgets the items chosen from its preview; leave all and thread_id out")
	case req.Confirm != ForgetTopicConfirm(topic):
		return Invalid("confirm", "must be exactly %q to forget the chosen items about %q in the memory of %s; show the user the preview first", ForgetTopicConfirm(topic), topic, scope.Key())
	case len(req.FactIDs) == 0 && len(req.TurnIDs) == 0 && len(req.Sections) == 0:
		return Invalid("arguments", "nothing chosen; give the fact_ids, turn_ids and sections of the preview to forget (an empty choice never means all)")
	}
	for i, id := range req.FactIDs {
		if strings.TrimSpace(id) == "" {
			return Invalid("fact_ids", "item %d is empty", i)
		}
	}
	for i, id := range req.TurnIDs {
		if strings.TrimSpace(id) == "" {
			return Invalid("turn_ids", "item %d is empty", i)
		}
	}
	for _, name := range req.Sections {
		if !slices.Contains(ProfileSections, name) {
			return Invalid("sections", "%q is not a profile section; use one of %s", name, strings.Join(ProfileSections, ", "))
		}
	}
	return nil
}
