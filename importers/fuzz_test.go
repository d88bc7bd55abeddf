package importers

import (
	"testing"
)

// checkConversations checks what every successful parse promises.
func checkConversations(t *testing.T, convs []Conversation) {
	for _, c := range convs {
		if c.ID == "" {
			t.Fatal("a conversation without an id")
		}
		for _, m := range c.Messages {
			if m.ID == "" || m.Role == "" {
				t.Fatalf("message %+v lacks an id or a role", m)
			}
			if m.ToolCall != "" && m.Role != "assistant" {
				t.Fatalf("a tool call with role %s", m.Role)
			}
		}
	}
}

func FuzzParseChatGPT(f *testing.F) {
	f.Add(mustRead(f, "chatgpt", "conversations.json"))
	f.Add([]byte(`[{"id":"c","current_node":"a","mapping":{"a":{"parent":"b"},"b":{"parent":"a"}}}]`))
	f.Add([]byte(`[{"id":"c","current_node":"a","mapping":{"a":{"message":{"id":"m","author":{"role":"user"},"create_time":1e300,"content":{"parts":[{},"x",3]}}}}}]`))
	f.Fuzz(func(t *testing.T, data []byte) {
		convs, err := ParseChatGPT(data)
		if err == nil {
			checkConversations(t, convs)
		}
	})
}

func FuzzParseClaude(f *testing.F) {
	f.Add(mustRead(f, "claude", "conversations.json"))
	f.Add([]byte(`[{"uuid":"u","chat_messages":[{"uuid":"m","sender":"human","content":[{"type":"tool_use"},{"type":"text","text":"hi"}],"files":[{}]}]}]`))
	f.Fuzz(func(t *testing.T, data []byte) {
		convs, err := ParseClaude(data)
		if err == nil {
			checkConversations(t, convs)
		}
	})
}

func FuzzParseGraph(f *testing.F) {
	f.Add(mustRead(f, "memory-graph", "memory.jsonl"))
	f.Add([]byte("{\"type\":\"entity\",\"name\":\"a\",\"observations\":[null]}\n\n{\"type\":\"relation\"}"))
	f.Fuzz(func(t *testing.T, data []byte) {
		g, err := ParseGraph(data)
		if err != nil {
			return
		}
		for _, e := range g.Entities {
			if e.Name == "" || e.Line < 1 {
				t.Fatalf("entity %+v", e)
			}
		}
		for _, r := range g.Relations {
			if r.From == "" || r.To == "" || r.RelationType == "" || r.Line < 1 {
				t.Fatalf("relation %+v", r)
			}
		}
	})
}

func FuzzDetect(f *testing.F) {
	f.Add(mustRead(f, "chatgpt", "conversations.json"))
	f.Add([]byte(`{"type":"entity"}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		switch detectHistory(data) {
		case "", nameChatGPT, nameClaude, nameGraph:
		default:
			t.Fatal("unknown format")
		}
	})
}
