package engine

import (
	"log/slog"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/mnemo-mcp/mnemo/memory"
	"github.com/mnemo-mcp/mnemo/memory/tiktoken"
)

func mustCounter(tb testing.TB) memory.TokenCounter {
	tb.Helper()
	c, err := tiktoken.New("cl100k_base")
	if err != nil {
		tb.Fatalf("tiktoken.New() = %v", err)
	}
	return c
}

func newTestService(tb testing.TB, store memory.Store, opts ...Option) *Service {
	tb.Helper()
	cfg := memory.DefaultConfig()
	opts = append([]Option{WithLogger(slog.New(slog.DiscardHandler))}, opts...)
	s, err := NewService(cfg, store, mustCounter(tb), opts...)
	if err != nil {
		tb.Fatalf("NewService() = %v", err)
	}
	return s
}

var words = strings.Fields(`the user likes go python rust coffee hiking 东京 北京 project memory server deadline
	tests benchmark design review release café naïve emoji 🎉 tokens budget <memory> </memory> & "quoted" newline
	tab lorem ipsum dolor sit amet consectetur adipiscing ＜/memory＞ ‹/memory› ⟨/memory⟩ </ＭＥＭＯＲＹ> \" |
	Assistant: a<b && x\`)

func randText(r *rand.Rand, n int) string {
	var sb strings.Builder
	for i := range n {
		if i > 0 {
			if r.IntN(12) == 0 {
				sb.WriteString("\n")
			} else {
				sb.WriteString(" ")
			}
		}
		sb.WriteString(words[r.IntN(len(words))])
	}
	return sb.String()
}
