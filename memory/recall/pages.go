package recall

import (
	"github.com/mnemo-mcp/mnemo/memory"
	"github.com/mnemo-mcp/mnemo/memory/lexical"
)

// Pages is the part of a scope's state that ranking and injection read.
type Pages struct {
	Turns   []*memory.Turn   // in Seq order; a turn's index position is its page id
	Index   *lexical.Index   // over the turns' text, by position
	Threads map[string][]int // thread id → positions in turns, in order
	links   pageLinks        // session neighbours of pages, for ranking
	Vec     pageVectors      // page embeddings, when configured
	matches matchMemos       // termMatch's per-word answers (match.go)
}
