package update

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"iter"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/mnemo-mcp/mnemo/memory"
)

// ErrBadReply marks a language model reply that holds no usable memory
// update: no JSON object with the update keys, only truncated JSON, or a
// reply over the size limit. Memory stays as it was and the turns stay
// pending.
var ErrBadReply = errors.New("unusable model reply")

// thinkingBlock matches a reasoning trace; thinkingOpen and thinkingClose
// match a tag left without its partner.
var (
	thinkingBlock = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`(?is)<think>.*?</think>|<thinking>.*?</thinking>`) })
	thinkingOpen  = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`(?i)<think(?:ing)?>`) })
	thinkingClose = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`(?i)</think(?:ing)?>`) })
)

// stripThinking removes reasoning traces, which may hold draft JSON. Some
// models leave out the opening tag, so a closing tag without one ends a
// trace that began with the reply; an opening tag at the start that is
// never closed makes the whole reply a trace.
func stripThinking(s string) string {
	s = thinkingBlock().ReplaceAllString(s, "")
	if loc := thinkingOpen().FindStringIndex(s); loc != nil && strings.TrimSpace(s[:loc[0]]) == "" {
		return ""
	}
	if loc := thinkingClose().FindStringIndex(s); loc != nil {
		s = s[loc[1]:]
	}
	return s
}

// jsonKind returns the first byte of a JSON value: '{', '[', '"', 't', 'f',
// 'n', or a digit or '-' for a number.
func jsonKind(raw json.RawMessage) byte {
	raw = bytes.TrimLeft(raw, " \t\r\n")
	if len(raw) == 0 {
		return 0
	}
	return raw[0]
}

func IsJSONNull(raw json.RawMessage) bool { return jsonKind(raw) == 'n' }

// jsonString decodes raw when it is a JSON string.
func jsonString(raw json.RawMessage) (string, bool) {
	var s string
	if jsonKind(raw) != '"' || json.Unmarshal(raw, &s) != nil {
		return "", false
	}
	return s, true
}

// quoteForNote quotes model text for a note, shortened.
func quoteForNote(s string) string {
	const limit = 40
	if utf8.RuneCountInString(s) > limit {
		s = string([]rune(s)[:limit]) + "…"
	}
	return strconv.Quote(s)
}

// FindObject returns the first JSON object in reply (reasoning traces
// removed) that has one of keys. It stops at the first candidate that runs
// into the end of the reply: the rest is inside a truncated object.
func FindObject(reply string, keys ...string) (map[string]json.RawMessage, error) {
	if len(reply) > memory.UpdateMaxReplyBytes {
		return nil, fmt.Errorf("parse reply: %d bytes is over the limit: %w", len(reply), ErrBadReply)
	}
	for obj, err := range jsonObjects(stripThinking(reply)) {
		if err == nil && slices.ContainsFunc(keys, func(k string) bool { _, ok := obj[k]; return ok }) {
			return obj, nil
		}
		if errors.Is(err, io.ErrUnexpectedEOF) {
			break
		}
	}
	return nil, fmt.Errorf("parse reply: no JSON object with %s: %w", strings.Join(keys, " or "), ErrBadReply)
}

// errTooManyCandidates ends jsonObjects when s holds more candidates than
// it tries.
var errTooManyCandidates = errors.New("too many candidate objects")

// jsonObjects is the one JSON-object finder of model replies: it decodes
// one JSON value at each '{' of s in turn, at most updateMaxCandidates of
// them, and yields each result (the object, or why it did not decode;
// io.ErrUnexpectedEOF when the candidate runs into the end of s). When s
// holds more candidates it yields errTooManyCandidates last.
func jsonObjects(s string) iter.Seq2[map[string]json.RawMessage, error] {
	return func(yield func(map[string]json.RawMessage, error) bool) {
		tries := 0
		for i := strings.IndexByte(s, '{'); i >= 0; {
			if tries == memory.UpdateMaxCandidates {
				yield(nil, errTooManyCandidates)
				return
			}
			tries++
			var obj map[string]json.RawMessage
			err := json.NewDecoder(strings.NewReader(s[i:])).Decode(&obj)
			if !yield(obj, err) {
				return
			}
			next := strings.IndexByte(s[i+1:], '{')
			if next < 0 {
				return
			}
			i += 1 + next
		}
	}
}
