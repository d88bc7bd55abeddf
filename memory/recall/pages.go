package recall

import (
	"regexp"

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
}

// Prepare builds the word tables that ranking and injection read
// (categories and their members, word forms, synonyms, names, small talk,
// standing constraints, asking words, date patterns), each otherwise
// built by the first retrieval that needs it: 1.7 ms measured, most of
// a retrieval's own time in a process that answers one question. A
// server calls it in the background at start.
func Prepare() {
	memberSets()
	formTable()
	synonymTable()
	nameCategories()
	standingStems()
	phaticWords()
	askingWords()
	for _, re := range []func() *regexp.Regexp{reDayMonth, reMonthDay, rePartMonth, reSeason, reMonthYear, reMonth, reYear, reRelative, reZhYMD, reZhYear, reZhMonthDay, reZhAgo} {
		re()
	}
}
