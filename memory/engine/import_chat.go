package engine

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/mnemo-mcp/mnemo/memory"
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

// ImportThread is the stable thread id of an imported conversation: the
// format and the export's id when that makes a valid id, else a digest
// of the export's id.
func ImportThread(format, convID string) string {
	return stableID(format, convID)
}

// importKey is the idempotency key of the exchange that starts with the
// source message msgID (n > 0 for a further exchange of the same
// message).
func importKey(format, msgID string, n int) string {
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

// planChats converts conversations into the turns to append to scope,
// leaving out the exchanges whose keys are in seen (thread + "\x00" +
// key of turns already stored), and records it all in res.
func planChats(cfg memory.Config, scope memory.Scope, format string, convs []memory.ImportedConversation, seen map[string]bool,
	now time.Time, newID func() string, progress func(done, total int), res *memory.ImportResult) {
	type convTurns struct {
		first time.Time
		turns []memory.Turn
	}
	var byConv []convTurns
	for ci, c := range convs {
		if progress != nil {
			progress(ci, len(convs))
		}
		res.Messages += len(c.Messages)
		thread := ImportThread(format, c.ID)
		res.Threads = append(res.Threads, thread)
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
			addFilterReport(&res.Filter, rep)
			when := segmentTime(seg, c.Created)
			if when.IsZero() && len(exchanges) > 0 {
				when = now
				res.Undated += len(exchanges)
			}
			for n, ex := range exchanges {
				key := importKey(format, seg[0].ID, n)
				if seen[thread+"\x00"+key] {
					res.Already++
					continue
				}
				seen[thread+"\x00"+key] = true
				if len(ex.User) > cfg.MaxMessageBytes || len(ex.Reply) > cfg.MaxMessageBytes {
					res.TooLong++
					continue
				}
				t := memory.Turn{ID: newID(), ThreadID: thread, Time: when, Stored: now, User: ex.User, Reply: ex.Reply,
					Signals:  memory.DetectSignals([]memory.Message{{Role: memory.RoleUser, Content: ex.User}}),
					MetaData: meta, IdempotencyKey: key}
				one := []memory.Turn{t}
				red, err := CheckImport(cfg, scope, nil, one)
				if err != nil {
					refuse(res, fmt.Sprintf("conversation %q: %v", c.ID, err))
					continue
				}
				res.Redacted = append(res.Redacted, red...)
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
		res.Turns = append(res.Turns, ct.turns...)
	}
	if progress != nil {
		progress(len(convs), len(convs))
	}
}

// segments splits a conversation at each user message: a segment is a
// question with what answered it (or what came before the first
// question), the unit the filter makes one exchange of.
func segments(msgs []memory.ImportedMessage) [][]memory.ImportedMessage {
	var out [][]memory.ImportedMessage
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
func segmentTime(seg []memory.ImportedMessage, created time.Time) time.Time {
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
