package importers

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/mnemo-mcp/mnemo/memory"
)

// Conversation is one chat of an export (the engine's
// memory.ImportedConversation).
type Conversation = memory.ImportedConversation

// Message is one message of a conversation.
type Message = memory.ImportedMessage

// RecordError names the record of a file that does not follow its
// format: which one (1-based), its id when it has one, and its line.
type RecordError struct {
	What  string // "conversation", "message", "line"
	Index int
	ID    string
	Line  int
	Err   error
}

func (e *RecordError) Error() string {
	where := fmt.Sprintf("%s %d", e.What, e.Index)
	if e.ID != "" {
		where += fmt.Sprintf(" (id %q)", e.ID)
	}
	if e.Line > 0 && e.What != "line" {
		where += fmt.Sprintf(" at line %d", e.Line)
	}
	return where + ": " + e.Err.Error()
}

func (e *RecordError) Unwrap() error { return e.Err }

// ErrTruncated marks a file that ends in the middle of a record.
var ErrTruncated = errors.New("the file ends in the middle of it (cut short? export or copy it again)")

// detectHistory tells the format of data: a JSON list of conversations
// with a mapping (ChatGPT) or with chat_messages (Claude), or JSON lines
// of entities and relations (the memory server's knowledge graph). It
// returns "" when data is none of them.
func detectHistory(data []byte) string {
	trimmed := bytes.TrimLeft(data, " \t\r\n\ufeff")
	if len(trimmed) == 0 {
		return ""
	}
	if trimmed[0] == '{' {
		line, _, _ := bytes.Cut(trimmed, []byte("\n"))
		var rec struct {
			Type string `json:"type"`
		}
		if json.Unmarshal(line, &rec) == nil && (rec.Type == "entity" || rec.Type == "relation") {
			return nameGraph
		}
		return ""
	}
	if trimmed[0] != '[' {
		return ""
	}
	dec := json.NewDecoder(bytes.NewReader(trimmed))
	if _, err := dec.Token(); err != nil || !dec.More() {
		return ""
	}
	var first map[string]json.RawMessage
	if dec.Decode(&first) != nil {
		return ""
	}
	switch {
	case first["mapping"] != nil:
		return nameChatGPT
	case first["chat_messages"] != nil:
		return nameClaude
	}
	return ""
}

// eachRecord walks data, a JSON list, decoding each element into a
// fresh value and handing it to fn with its 1-based index. Any error
// names the element and its line; a list cut short is ErrTruncated.
func eachRecord(data []byte, what string, fn func(i int, raw json.RawMessage) (id string, err error)) error {
	data = bytes.TrimPrefix(data, []byte("\ufeff"))
	dec := json.NewDecoder(bytes.NewReader(data))
	tok, err := dec.Token()
	if err != nil {
		return fmt.Errorf("not JSON: %w", err)
	}
	if d, ok := tok.(json.Delim); !ok || d != '[' {
		return fmt.Errorf("not a list of %ss: the file starts with %v", what, tok)
	}
	i := 0
	for dec.More() {
		i++
		line := lineAt(data, dec.InputOffset())
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			if errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF) {
				err = ErrTruncated
			}
			return &RecordError{What: what, Index: i, Line: line, Err: err}
		}
		if id, err := fn(i, raw); err != nil {
			return &RecordError{What: what, Index: i, ID: id, Line: line, Err: err}
		}
	}
	if _, err := dec.Token(); err != nil {
		if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
			return fmt.Errorf("the list of %ss is not closed after %s %d: %w", what, what, i, ErrTruncated)
		}
		return fmt.Errorf("after %s %d (line %d): %w", what, i, lineAt(data, dec.InputOffset()), err)
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return fmt.Errorf("line %d: more data after the list of %ss", lineAt(data, dec.InputOffset()), what)
	}
	return nil
}

// lineAt is the 1-based line of the first non-blank byte at or after
// offset.
func lineAt(data []byte, offset int64) int {
	off := int(min(max(offset, 0), int64(len(data))))
	for off < len(data) && bytes.IndexByte([]byte(" \t\r\n,"), data[off]) >= 0 {
		off++
	}
	return bytes.Count(data[:off], []byte("\n")) + 1
}

// epochTime converts the seconds since 1970 of a ChatGPT export; nil is
// the zero time.
func epochTime(sec *float64) (time.Time, error) {
	if sec == nil {
		return time.Time{}, nil
	}
	s := *sec
	// Any time a clock can hold is read; whether memory keeps it is the
	// engine's rule (the years of the tools), not the reader's.
	if !(s >= 0 && s < maxEpochSeconds) {
		return time.Time{}, fmt.Errorf("%v is not a time in seconds since 1970", s)
	}
	whole := int64(s)
	return time.Unix(whole, int64((s-float64(whole))*1e9)).UTC().Truncate(time.Millisecond), nil
}

// maxEpochSeconds bounds the seconds a time stamp can be (some 30
// million years after 1970), far inside what a time holds.
const maxEpochSeconds = 1e15

// isoTime parses the RFC 3339 times of a Claude export; "" is the zero
// time.
func isoTime(s string) (time.Time, error) {
	if s == "" {
		return time.Time{}, nil
	}
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return time.Time{}, fmt.Errorf("%q is not an RFC 3339 time", s)
	}
	return t.UTC(), nil
}

// parseConversations reads each record of data as a T (a format's
// conversation) and converts it; format names it in errors.
func parseConversations[T any, P interface {
	*T
	convert() (Conversation, error)
}](data []byte, format string) ([]Conversation, error) {
	var out []Conversation
	err := eachRecord(data, "conversation", func(_ int, raw json.RawMessage) (string, error) {
		c := P(new(T))
		if err := json.Unmarshal(raw, c); err != nil {
			return "", fmt.Errorf("not a %s conversation: %w", format, err)
		}
		conv, err := c.convert()
		if err != nil {
			return conv.ID, err
		}
		out = append(out, conv)
		return conv.ID, nil
	})
	return out, err
}
