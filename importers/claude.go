package importers

import (
	"cmp"
	"errors"
	"fmt"
	"strings"

	"github.com/mnemo-mcp/mnemo/memory"
)

// A Claude data export's conversations.json is a list of conversations:
//
//	{"uuid", "name", "created_at": RFC 3339, "updated_at",
//	 "chat_messages": [{"uuid", "sender": "human"|"assistant", "created_at", "text",
//	   "content": [{"type": "text", "text"} | {"type": "tool_use", "name", "input"} |
//	               {"type": "tool_result", "content"} | {"type": "thinking", "thinking"}],
//	   "attachments": [{"file_name", "extracted_content"}], "files": [{"file_name"}]}]}
//
// The messages are in the order they were exchanged.

type claudeConversation struct {
	UUID         string          `json:"uuid"`
	Name         string          `json:"name"`
	CreatedAt    string          `json:"created_at"`
	ChatMessages []claudeMessage `json:"chat_messages"`
}

type claudeMessage struct {
	UUID        string        `json:"uuid"`
	Sender      string        `json:"sender"`
	CreatedAt   string        `json:"created_at"`
	Text        string        `json:"text"`
	Content     []claudeBlock `json:"content"`
	Attachments []struct {
		FileName string `json:"file_name"`
	} `json:"attachments"`
	Files []struct {
		FileName string `json:"file_name"`
	} `json:"files"`
}

type claudeBlock struct {
	Type string `json:"type"`
	Text string `json:"text"`
	Name string `json:"name"`
}

// ParseClaude reads the conversations.json of a Claude data export. A
// message whose content blocks mix text with tool use becomes several
// messages in order: the text as the sender's, each tool_use (and
// thinking block) an assistant ToolCall, each tool_result a tool
// message. Attachments and files are named in Uploads, never read.
func ParseClaude(data []byte) ([]Conversation, error) {
	return parseConversations[claudeConversation](data, "Claude")
}

func (c *claudeConversation) convert() (Conversation, error) {
	conv := Conversation{ID: c.UUID, Title: c.Name}
	if conv.ID == "" {
		return conv, errors.New("has no uuid")
	}
	var err error
	if conv.Created, err = isoTime(c.CreatedAt); err != nil {
		return conv, fmt.Errorf("created_at: %w", err)
	}
	if c.ChatMessages == nil {
		return conv, errors.New("has no chat_messages")
	}
	for i, m := range c.ChatMessages {
		msgs, err := m.convert()
		if err != nil {
			id := m.UUID
			if id == "" {
				id = fmt.Sprint(i + 1)
			}
			return conv, fmt.Errorf("message %s: %w", id, err)
		}
		conv.Messages = append(conv.Messages, msgs...)
	}
	return conv, nil
}

func (m *claudeMessage) convert() ([]Message, error) {
	if m.UUID == "" {
		return nil, errors.New("has no uuid")
	}
	base := Message{ID: m.UUID}
	switch m.Sender {
	case "human":
		base.Role = memory.RoleUser
	case "assistant":
		base.Role = memory.RoleAssistant
	default:
		return nil, fmt.Errorf("sender %q is not human or assistant", m.Sender)
	}
	var err error
	if base.Time, err = isoTime(m.CreatedAt); err != nil {
		return nil, fmt.Errorf("created_at: %w", err)
	}
	for _, a := range m.Attachments {
		base.Uploads = append(base.Uploads, a.FileName)
	}
	for _, f := range m.Files {
		base.Uploads = append(base.Uploads, f.FileName)
	}
	if len(m.Content) == 0 {
		base.Text = m.Text
		return []Message{base}, nil
	}
	var out []Message
	var text []string
	flush := func() {
		if len(text) > 0 {
			t := base
			t.Text, t.Uploads = strings.Join(text, "\n"), nil
			out = append(out, t)
			text = nil
		}
	}
	for _, b := range m.Content {
		switch b.Type {
		case "text":
			text = append(text, b.Text)
		case "tool_result":
			flush()
			out = append(out, Message{ID: m.UUID, Role: memory.RoleTool, Time: base.Time})
		default: // tool_use, thinking, and blocks of later versions
			flush()
			call := b.Name
			if call == "" {
				call = cmp.Or(b.Type, "unknown block")
			}
			out = append(out, Message{ID: m.UUID, Role: memory.RoleAssistant, Time: base.Time, ToolCall: call})
		}
	}
	flush()
	if len(base.Uploads) > 0 {
		// The uploads go with the first message of the sender's own.
		for i := range out {
			if out[i].Role == base.Role && out[i].ToolCall == "" {
				out[i].Uploads = base.Uploads
				return out, nil
			}
		}
		u := base
		u.Text = ""
		out = append([]Message{u}, out...)
	}
	return out, nil
}

// claude is the format of a Claude data export's conversations.json.
type claude struct{}

// nameClaude is the --format name of a Claude export.
const nameClaude = "claude"

func (claude) Name() string           { return nameClaude }
func (claude) Title() string          { return "Claude export" }
func (claude) Detect(src Source) bool { return detectHistory(src.Data) == nameClaude }

func (claude) Parse(src Source, _ *Options) (*Parsed, error) {
	if err := historyOnly(src); err != nil {
		return nil, err
	}
	convs, err := ParseClaude(src.Data)
	if err != nil {
		return nil, err
	}
	return &Parsed{Conversations: convs}, nil
}
