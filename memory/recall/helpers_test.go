package recall

import (
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/mnemo-mcp/mnemo/memory"
	"github.com/mnemo-mcp/mnemo/memory/tiktoken"
)

// newCounter returns a cl100k_base token count with a cache, as the engine
// counts for a scope.
func newCounter(tb testing.TB) func(string) int {
	tb.Helper()
	c, err := tiktoken.New("cl100k_base")
	if err != nil {
		tb.Fatalf("tiktoken.New() = %v", err)
	}
	cache := make(map[string]int)
	return func(text string) int {
		if n, ok := cache[text]; ok {
			return n
		}
		if len(cache) >= 20000 {
			clear(cache)
		}
		n := c.Count(text)
		cache[text] = n
		return n
	}
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

func mustCounter(tb testing.TB) memory.TokenCounter {
	tb.Helper()
	c, err := tiktoken.New("cl100k_base")
	if err != nil {
		tb.Fatalf("tiktoken.New() = %v", err)
	}
	return c
}
