package importers

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/mnemo-mcp/mnemo/memory"
)

// A ChatGPT data export's conversations.json is a list of conversations:
//
//	{"id"|"conversation_id", "title", "create_time": seconds, "current_node": node id,
//	 "mapping": {node id: {"id", "parent": node id|null, "children": [...],
//	   "message": null | {"id", "author": {"role": system|user|assistant|tool, "name"},
//	     "create_time": seconds|null, "recipient": "all"|tool name,
//	     "content": {"content_type": "text"|"multimodal_text"|"code"|..., "parts": [...], "text"},
//	     "metadata": {"is_visually_hidden_from_conversation", "is_user_system_message",
//	                  "attachments": [{"name"}]}}}}}
//
// The mapping is a tree: each regenerated reply or edited question
// starts a branch. The conversation the user last saw is the branch that
// ends at current_node, read from the root down.

type chatGPTConversation struct {
	ID             string                 `json:"id"`
	ConversationID string                 `json:"conversation_id"`
	Title          string                 `json:"title"`
	CreateTime     *float64               `json:"create_time"`
	CurrentNode    string                 `json:"current_node"`
	Mapping        map[string]chatGPTNode `json:"mapping"`
}

type chatGPTNode struct {
	Message *chatGPTMessage `json:"message"`
	Parent  *string         `json:"parent"`
}

type chatGPTMessage struct {
	ID     string `json:"id"`
	Author struct {
		Role string `json:"role"`
	} `json:"author"`
	CreateTime *float64 `json:"create_time"`
	Recipient  string   `json:"recipient"`
	Content    struct {
		ContentType string            `json:"content_type"`
		Parts       []json.RawMessage `json:"parts"`
		Text        string            `json:"text"`
	} `json:"content"`
	Metadata struct {
		Hidden       bool `json:"is_visually_hidden_from_conversation"`
		SystemByUser bool `json:"is_user_system_message"`
		Attachments  []struct {
			Name string `json:"name"`
		} `json:"attachments"`
	} `json:"metadata"`
}

// ParseChatGPT reads the conversations.json of a ChatGPT data export:
// each conversation with the messages of the branch that ends at its
// current_node. System messages, hidden context (custom instructions,
// the model's memory) and tool messages keep roles the filter drops;
// assistant messages addressed to a tool or holding reasoning are marked
// ToolCall; attached files and images are named in Uploads.
func ParseChatGPT(data []byte) ([]Conversation, error) {
	return parseConversations[chatGPTConversation](data, "ChatGPT")
}

func (c *chatGPTConversation) convert() (Conversation, error) {
	conv := Conversation{ID: c.ConversationID, Title: c.Title}
	if conv.ID == "" {
		conv.ID = c.ID
	}
	if conv.ID == "" {
		return conv, errors.New("has no id or conversation_id")
	}
	var err error
	if conv.Created, err = epochTime(c.CreateTime); err != nil {
		return conv, fmt.Errorf("create_time: %w", err)
	}
	if c.Mapping == nil {
		return conv, errors.New("has no mapping")
	}
	if _, ok := c.Mapping[c.CurrentNode]; !ok {
		return conv, fmt.Errorf("current_node %q is not a node of its mapping", c.CurrentNode)
	}
	// Walk up from current_node; a parent loop would never end.
	var branch []string
	for id := c.CurrentNode; ; {
		if len(branch) > len(c.Mapping) {
			return conv, fmt.Errorf("the mapping loops: node %q is its own ancestor", id)
		}
		branch = append(branch, id)
		n := c.Mapping[id]
		if n.Parent == nil || *n.Parent == "" {
			break
		}
		if _, ok := c.Mapping[*n.Parent]; !ok {
			return conv, fmt.Errorf("node %q has parent %q, which is not in the mapping", id, *n.Parent)
		}
		id = *n.Parent
	}
	for i := len(branch) - 1; i >= 0; i-- {
		node := c.Mapping[branch[i]]
		if node.Message == nil {
			continue
		}
		m, err := node.Message.convert(branch[i])
		if err != nil {
			return conv, fmt.Errorf("message %q: %w", m.ID, err)
		}
		conv.Messages = append(conv.Messages, m)
	}
	return conv, nil
}

func (m *chatGPTMessage) convert(nodeID string) (Message, error) {
	msg := Message{ID: m.ID}
	if msg.ID == "" {
		msg.ID = nodeID
	}
	if msg.ID == "" {
		return msg, errors.New("has no id")
	}
	var err error
	if msg.Time, err = epochTime(m.CreateTime); err != nil {
		return msg, fmt.Errorf("create_time: %w", err)
	}
	var texts []string
	for _, p := range m.Content.Parts {
		var s string
		if json.Unmarshal(p, &s) == nil {
			texts = append(texts, s)
			continue
		}
		var obj struct {
			ContentType string `json:"content_type"`
		}
		if json.Unmarshal(p, &obj) != nil {
			return msg, errors.New("content.parts holds something that is neither text nor an object")
		}
		if obj.ContentType == "" {
			obj.ContentType = "file"
		}
		msg.Uploads = append(msg.Uploads, obj.ContentType)
	}
	if len(m.Content.Parts) == 0 {
		texts = append(texts, m.Content.Text)
	}
	msg.Text = strings.Join(texts, "\n")
	for _, a := range m.Metadata.Attachments {
		msg.Uploads = append(msg.Uploads, a.Name)
	}
	ct := m.Content.ContentType
	switch role := m.Author.Role; {
	case role == "system" || role == "developer":
		msg.Role = memory.RoleSystem
	case m.Metadata.Hidden || m.Metadata.SystemByUser || ct == "user_editable_context" || ct == "model_editable_context":
		// Custom instructions and the model's own memory reach the model
		// as context, as a system prompt does.
		msg.Role = memory.RoleSystem
	case role == "tool":
		msg.Role = memory.RoleTool
	case role == "user":
		msg.Role = memory.RoleUser
	case role == "assistant":
		msg.Role = memory.RoleAssistant
		switch {
		case m.Recipient != "" && m.Recipient != "all":
			msg.ToolCall = m.Recipient
		case ct != "" && ct != "text" && ct != "multimodal_text":
			msg.ToolCall = ct // reasoning, code for a tool, browsing display
		}
	default:
		return msg, fmt.Errorf("author.role %q is not system, user, assistant or tool", role)
	}
	return msg, nil
}

// chatGPT is the format of a ChatGPT data export's conversations.json.
type chatGPT struct{}

// nameChatGPT is the --format name of a ChatGPT export.
const nameChatGPT = "chatgpt"

func (chatGPT) Name() string           { return nameChatGPT }
func (chatGPT) Title() string          { return "ChatGPT export" }
func (chatGPT) Detect(src Source) bool { return detectHistory(src.Data) == nameChatGPT }

func (f chatGPT) Parse(src Source, _ *Options) (*Parsed, error) {
	if err := historyOnly(src); err != nil {
		return nil, err
	}
	convs, err := ParseChatGPT(src.Data)
	if err != nil {
		return nil, err
	}
	return &Parsed{Conversations: convs}, nil
}

// historyOnly refuses a directory that holds no export file.
func historyOnly(src Source) error {
	if src.Dir {
		return fmt.Errorf("%s holds no conversations.json or memory.jsonl; name the file of the export", src.Path)
	}
	return nil
}
