package cli

import (
	"cmp"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/mnemo-mcp/mnemo/cli/importers"
	"github.com/mnemo-mcp/mnemo/memory"
	"github.com/mnemo-mcp/mnemo/memory/engine"
)

// A chat history (a ChatGPT or Claude export) is imported into an
// existing scope, next to what it holds: each conversation becomes one
// thread ("chatgpt-<conversation id>"), each question with its answer one
// turn at the time it was asked. Every message goes through the filter
// add_memory applies (system prompts, tool traffic and uploaded files
// never become memory), then the limits and text rules of the tools and
// redaction. Each turn carries an idempotency key made from the id of
// its source message, so importing the same export again adds nothing.

// maxImportTitleRunes bounds the conversation title kept in a turn's
// meta_data.
const maxImportTitleRunes = 200

// chatPlan is what importing a chat history will write: the new turns,
// and what was read and left out, and why.
type chatPlan struct {
	format        string
	conversations int
	messages      int
	turns         []memory.Turn // new turns, by conversation, oldest conversation first
	threads       map[string]bool
	filter        memory.FilterReport
	already       int // exchanges imported before
	tooLong       int // over max_message_bytes
	refused       int // broke the text rules of the tools
	refusedWhy    string
	undated       int
	redacted      []memory.Redaction
}

// historyThread is the stable thread id of a conversation: the format
// and the export's id when that makes a valid id, else a digest of it.
func historyThread(format, convID string) string {
	return stableID(format, convID)
}

// historyKey is the idempotency key of the exchange that starts with the
// source message msgID (n > 0 for a further exchange of the same
// message).
func historyKey(format, msgID string, n int) string {
	if n > 0 {
		msgID = fmt.Sprintf("%s-%d", msgID, n)
	}
	return stableID(format, msgID)
}

func stableID(prefix, id string) string {
	s := prefix + "-" + id
	if memory.ValidateID("id", s) == nil {
		return s
	}
	sum := sha256.Sum256([]byte(id))
	return prefix + "-" + hex.EncodeToString(sum[:12])
}

// planChat converts conversations into the turns to append to scope,
// leaving out the exchanges whose keys are in seen (thread + "\x00" +
// key of turns already stored). onConversation, when not nil, is told
// how many conversations are done.
func planChat(cfg memory.Config, scope memory.Scope, format string, convs []importers.Conversation, seen map[string]bool,
	now time.Time, newID func() string, onConversation func(int)) *chatPlan {
	p := &chatPlan{format: format, conversations: len(convs), threads: map[string]bool{}}
	type convTurns struct {
		first time.Time
		turns []memory.Turn
	}
	var byConv []convTurns
	for ci, c := range convs {
		if onConversation != nil {
			onConversation(ci)
		}
		p.messages += len(c.Messages)
		thread := historyThread(format, c.ID)
		title := c.Title
		if utf8.RuneCountInString(title) > maxImportTitleRunes {
			title = string([]rune(title)[:maxImportTitleRunes])
		}
		meta, _ := json.Marshal(map[string]string{"imported_from": format, "conversation": title})
		var ct convTurns
		for _, seg := range segments(c.Messages) {
			msgs := make([]memory.Message, len(seg))
			for i, m := range seg {
				msgs[i] = memory.Message{Role: m.Role, Content: m.Text}
				if m.ToolCall != "" {
					call := memory.ToolCall{Type: "function"}
					call.Function.Name = m.ToolCall
					msgs[i].ToolCalls = []memory.ToolCall{call}
				}
				if len(m.Uploads) > 0 && m.Role == memory.RoleUser {
					// The filter strips the block, and drops the reply to a
					// message that was nothing but files.
					msgs[i].Content += "\n<uploaded_files>" + strings.Join(m.Uploads, "\n") + "</uploaded_files>"
				}
			}
			exchanges, rep := memory.Filter(msgs)
			addFilterReport(&p.filter, rep)
			when := segmentTime(seg, c.Created)
			if when.IsZero() && len(exchanges) > 0 {
				when = now
				p.undated += len(exchanges)
			}
			for n, ex := range exchanges {
				key := historyKey(format, seg[0].ID, n)
				if seen[thread+"\x00"+key] {
					p.already++
					continue
				}
				seen[thread+"\x00"+key] = true
				if len(ex.User) > cfg.MaxMessageBytes || len(ex.Reply) > cfg.MaxMessageBytes {
					p.tooLong++
					continue
				}
				t := memory.Turn{ID: newID(), ThreadID: thread, Time: when, Stored: now, User: ex.User, Reply: ex.Reply,
					Signals:  memory.DetectSignals([]memory.Message{{Role: memory.RoleUser, Content: ex.User}}),
					MetaData: meta, IdempotencyKey: key}
				one := []memory.Turn{t}
				red, err := engine.CheckImport(cfg, scope, nil, one)
				if err != nil {
					p.refused++
					if p.refusedWhy == "" {
						p.refusedWhy = fmt.Sprintf("conversation %q: %v", c.ID, err)
					}
					continue
				}
				p.redacted = append(p.redacted, red...)
				if ct.first.IsZero() || one[0].Time.Before(ct.first) {
					ct.first = one[0].Time
				}
				ct.turns = append(ct.turns, one[0])
			}
		}
		if len(ct.turns) > 0 {
			byConv = append(byConv, ct)
		}
	}
	// Oldest conversation first; a conversation's turns stay in order.
	slices.SortStableFunc(byConv, func(a, b convTurns) int { return a.first.Compare(b.first) })
	for _, ct := range byConv {
		for _, t := range ct.turns {
			p.threads[t.ThreadID] = true
		}
		p.turns = append(p.turns, ct.turns...)
	}
	if onConversation != nil {
		onConversation(len(convs))
	}
	return p
}

// segments splits a conversation at each user message: a segment is a
// question with what answered it (or what came before the first
// question), the unit the filter makes one exchange of.
func segments(msgs []importers.Message) [][]importers.Message {
	var out [][]importers.Message
	start := 0
	for i, m := range msgs {
		if m.Role == memory.RoleUser && i > start {
			out = append(out, msgs[start:i])
			start = i
		}
	}
	if start < len(msgs) {
		out = append(out, msgs[start:])
	}
	return out
}

// segmentTime is when an exchange happened: its first dated message,
// else the conversation's start.
func segmentTime(seg []importers.Message, created time.Time) time.Time {
	for _, m := range seg {
		if !m.Time.IsZero() {
			return m.Time
		}
	}
	return created
}

func addFilterReport(sum *memory.FilterReport, r memory.FilterReport) {
	sum.Kept += r.Kept
	sum.DroppedSystem += r.DroppedSystem
	sum.DroppedTool += r.DroppedTool
	sum.DroppedToolCalls += r.DroppedToolCalls
	sum.DroppedEmpty += r.DroppedEmpty
	sum.DroppedUploadOnly += r.DroppedUploadOnly
	sum.DroppedUploadAnswer += r.DroppedUploadAnswer
	sum.StrippedUploads += r.StrippedUploads
}

// skippedLines says what the import left out and why, one reason a line.
func (p *chatPlan) skippedLines() []string {
	f := p.filter
	var out []string
	add := func(n int, noun, why string) {
		if n > 0 {
			out = append(out, plural(n, noun)+": "+why)
		}
	}
	add(f.DroppedSystem, "system prompt or hidden context message", "never memory (custom instructions and the model's own memory count as such)")
	add(f.DroppedTool, "tool result", "tool traffic is never memory")
	add(f.DroppedToolCalls, "tool call or reasoning step", "not answers")
	add(f.DroppedUploadOnly, "upload-only message", fmt.Sprintf("uploads are never memory (and %s to them left out)", plural(f.DroppedUploadAnswer, "reply")))
	add(f.DroppedEmpty, "empty message", "nothing to keep")
	add(p.already, "already imported exchange", "the same source message is not stored twice")
	add(p.tooLong, "over-long exchange", "longer than max_message_bytes; raise it to keep them")
	add(p.refused, "refused exchange", "the tools would refuse it too, e.g. "+p.refusedWhy)
	return out
}

// span is the time range of the turns.
func span(turns []memory.Turn) (from, to time.Time) {
	for i, t := range turns {
		if i == 0 || t.Time.Before(from) {
			from = t.Time
		}
		if i == 0 || t.Time.After(to) {
			to = t.Time
		}
	}
	return from, to
}

// formatTitle names a history format for people.
func formatTitle(format string) string {
	return cmp.Or(map[string]string{
		importers.FormatChatGPT: "ChatGPT export",
		importers.FormatClaude:  "Claude export",
		importers.FormatGraph:   "memory server knowledge graph",
	}[format], format)
}
