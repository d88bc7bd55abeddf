package memory

import (
	"regexp"
	"strings"
	"sync"
)

// uploadBlock matches an <uploaded_files> block; uploads are session-only
// and must not become memory.
var uploadBlock = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`(?is)<uploaded_files>.*?</uploaded_files>`) })

// Exchange is a user input with the assistant's final reply to it.
type Exchange struct {
	User  string
	Reply string
}

// FilterReport says what the filter kept and dropped, and why.
type FilterReport struct {
	Kept                int `json:"kept_messages"`
	DroppedSystem       int `json:"dropped_system,omitempty"`
	DroppedTool         int `json:"dropped_tool_results,omitempty"`
	DroppedToolCalls    int `json:"dropped_tool_calls,omitempty"`
	DroppedEmpty        int `json:"dropped_empty,omitempty"`
	DroppedUploadOnly   int `json:"dropped_upload_only,omitempty"`
	DroppedUploadAnswer int `json:"dropped_upload_replies,omitempty"`
	StrippedUploads     int `json:"stripped_upload_blocks,omitempty"`
}

// Dropped is the number of messages the filter removed.
func (r FilterReport) Dropped() int {
	return r.DroppedSystem + r.DroppedTool + r.DroppedToolCalls + r.DroppedEmpty + r.DroppedUploadOnly + r.DroppedUploadAnswer
}

// Filter applies DeerFlow's rules to a conversation and groups what is left
// into exchanges. It keeps user messages and assistant messages without
// tool calls; it drops system and tool messages and assistant messages that
// carry tool calls (intermediate steps, not answers); it strips
// <uploaded_files> blocks from user text, and a user message left empty by
// that is dropped together with the assistant reply that answers it.
//
// A new exchange starts at each kept user message; consecutive assistant
// replies are joined. Assistant text before any user message forms an
// exchange of its own.
func Filter(msgs []Message) ([]Exchange, FilterReport) {
	var (
		out       []Exchange
		rep       FilterReport
		skipReply bool
		cur       *Exchange
		flushCur  = func() {
			if cur != nil && (cur.User != "" || cur.Reply != "") {
				out = append(out, *cur)
			}
			cur = nil
		}
	)
	for _, m := range msgs {
		switch m.Role {
		case RoleSystem, RoleDeveloper:
			rep.DroppedSystem++
		case RoleTool:
			rep.DroppedTool++
		case RoleUser:
			text := m.Content
			if uploadBlock().MatchString(text) {
				rep.StrippedUploads++
				text = uploadBlock().ReplaceAllString(text, "")
				if strings.TrimSpace(text) == "" {
					rep.DroppedUploadOnly++
					flushCur()
					skipReply = true
					continue
				}
			}
			text = strings.TrimSpace(text)
			if text == "" {
				rep.DroppedEmpty++
				continue
			}
			skipReply = false
			flushCur()
			cur = &Exchange{User: text}
			rep.Kept++
		case RoleAssistant:
			if len(m.ToolCalls) > 0 {
				rep.DroppedToolCalls++
				continue
			}
			text := strings.TrimSpace(m.Content)
			if skipReply {
				rep.DroppedUploadAnswer++
				skipReply = false
				continue
			}
			if text == "" {
				rep.DroppedEmpty++
				continue
			}
			if cur == nil {
				cur = &Exchange{}
			}
			if cur.Reply != "" {
				cur.Reply += "\n"
			}
			cur.Reply += text
			rep.Kept++
		}
	}
	flushCur()
	return out, rep
}
