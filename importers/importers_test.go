package importers

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mnemo-mcp/mnemo/memory"
)

func mustRead(tb testing.TB, parts ...string) []byte {
	tb.Helper()
	b, err := os.ReadFile(filepath.Join(append([]string{"testdata"}, parts...)...))
	if err != nil {
		tb.Fatal(err)
	}
	return b
}

func TestDetect(t *testing.T) {
	for _, tc := range []struct {
		name string
		data []byte
		want string
	}{
		{"chatgpt", mustRead(t, "chatgpt", "conversations.json"), nameChatGPT},
		{"claude", mustRead(t, "claude", "conversations.json"), nameClaude},
		{"graph", mustRead(t, "memory-graph", "memory.jsonl"), nameGraph},
		{"relation first", []byte(`{"type":"relation","from":"a","to":"b","relationType":"knows"}`), nameGraph},
		{"mnemo export", []byte(`{"format":"mnemo-export","version":1}`), ""},
		{"empty list", []byte(`[]`), ""},
		{"list of other things", []byte(`[{"id":1}]`), ""},
		{"nothing", nil, ""},
	} {
		if got := detectHistory(tc.data); got != tc.want {
			t.Errorf("detectHistory(%s) = %q, want %q", tc.name, got, tc.want)
		}
	}
}

// TestParseChatGPT follows the branch that ends at current_node and keeps
// the roles the filter needs.
func TestParseChatGPT(t *testing.T) {
	convs, err := ParseChatGPT(mustRead(t, "chatgpt", "conversations.json"))
	if err != nil {
		t.Fatal(err)
	}
	if len(convs) != 2 {
		t.Fatalf("%d conversations, want 2", len(convs))
	}
	c := convs[0]
	if c.ID != "c0ffee00-0000-4000-8000-000000000001" || c.Title != "Sailing plans" || !c.Created.Equal(time.Date(2023, 6, 5, 21, 20, 0, 250e6, time.UTC)) {
		t.Errorf("conversation = %q %q %v", c.ID, c.Title, c.Created)
	}
	var got []string
	for _, m := range c.Messages {
		got = append(got, m.ID+":"+string(m.Role)+":"+m.ToolCall)
	}
	want := "n1:system: n2:system: n3:user: n4:assistant: n5:user: n6:assistant:browser n7:tool: n8:assistant:thoughts n9:assistant:"
	if strings.Join(got, " ") != want {
		t.Errorf("branch = %s\nwant     %s", strings.Join(got, " "), want)
	}
	if up := convs[1].Messages[0].Uploads; len(up) != 2 || up[1] != "passport-scan.png" {
		t.Errorf("uploads = %q, want the image and the attachment", up)
	}
}

// TestParseClaude splits a message of mixed content blocks in order.
func TestParseClaude(t *testing.T) {
	convs, err := ParseClaude(mustRead(t, "claude", "conversations.json"))
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, m := range convs[0].Messages {
		got = append(got, string(m.Role)+":"+m.ToolCall+":"+m.Text)
	}
	want := []string{
		"user::I'm planning a trip to Lisbon in May.",
		"assistant::Let me check the weather.",
		"assistant:web_search:",
		"tool::",
		"assistant:thinking:",
		"assistant::May in Lisbon is warm, around 22°C.",
		"user::Thanks! I'm vegetarian, so keep that in mind for restaurants.",
		"assistant::Noted: vegetarian restaurants only.",
	}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("messages\n%q\nwant\n%q", got, want)
	}
	if up := convs[0].Messages[0].Uploads; len(up) != 1 || up[0] != "itinerary.txt" {
		t.Errorf("uploads = %q", up)
	}
	if m := convs[1].Messages[0]; m.Role != memory.RoleUser || m.Text != "" || len(m.Uploads) != 1 {
		t.Errorf("file-only message = %+v", m)
	}
}

func TestParseGraph(t *testing.T) {
	g, err := ParseGraph(mustRead(t, "memory-graph", "memory.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	if len(g.Entities) != 3 || len(g.Relations) != 3 || g.Relations[2].Line != 7 || g.Entities[0].Observations[1] != "Prefers metric units" {
		t.Errorf("graph = %+v", g)
	}
}

// TestRecordErrors: every refusal names the record, and a file cut short
// says so.
func TestRecordErrors(t *testing.T) {
	chatgpt := string(mustRead(t, "chatgpt", "conversations.json"))
	for _, tc := range []struct {
		name  string
		parse func([]byte) error
		data  string
		want  []string
		cut   bool
	}{
		{"chatgpt not a list", chatgptErr, `{"mapping":{}}`, []string{"not a list of conversations"}, false},
		{"chatgpt cut", chatgptErr, chatgpt[:len(chatgpt)/2], []string{"conversation 1 at line 2"}, true},
		{"chatgpt loop", chatgptErr, `[{"id":"c","current_node":"a","mapping":{"a":{"parent":"b"},"b":{"parent":"a"}}}]`, []string{"conversation 1", `"c"`, "loops"}, false},
		{"chatgpt bad time", chatgptErr, `[{"id":"c","current_node":"a","mapping":{"a":{"message":{"id":"m","author":{"role":"user"},"create_time":-5}}}}]`, []string{`message "m"`, "create_time"}, false},
		{"chatgpt trailing data", chatgptErr, `[] []`, []string{"more data after"}, false},
		{"claude no messages", claudeErr, `[{"uuid":"u"}]`, []string{"conversation 1", "no chat_messages"}, false},
		{"claude second record", claudeErr, "[\n{\"uuid\":\"u\",\"chat_messages\":[]},\n{\"uuid\":\"v\",\"chat_messages\":[{\"uuid\":\"m\",\"sender\":\"x\"}]}]", []string{"conversation 2", "line 3", `sender "x"`}, false},
		{"graph no name", graphErr, "\n{\"type\":\"entity\"}", []string{"line 2", "without a name"}, false},
		{"graph relation", graphErr, `{"type":"relation","from":"a","to":"b"}`, []string{"line 1", "relationType"}, false},
		{"graph cut", graphErr, `{"type":"entity","name":"a","obs`, []string{"line 1", "cut short"}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.parse([]byte(tc.data))
			if err == nil {
				t.Fatal("no error")
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not say %q", err, w)
				}
			}
			if errors.Is(err, ErrTruncated) != tc.cut {
				t.Errorf("errors.Is(%v, ErrTruncated) = %v, want %v", err, !tc.cut, tc.cut)
			}
		})
	}
}

func chatgptErr(b []byte) error { _, err := ParseChatGPT(b); return err }
func claudeErr(b []byte) error  { _, err := ParseClaude(b); return err }
func graphErr(b []byte) error   { _, err := ParseGraph(b); return err }
