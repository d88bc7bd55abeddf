// Package tiktoken counts tokens the way OpenAI models do, with the BPE ranks
// embedded in the binary by github.com/pkoukk/tiktoken-go-loader, so nothing
// is ever downloaded or written to a cache directory.
//
// Counting is tiktoken's ordinary encoding without the tokens: pieces.go
// splits text into the pieces each encoding's pattern matches, with a scan
// over runes in place of a regular expression engine, and merge.go counts
// the byte-pair merge of a piece that is not itself a token. Both allocate
// nothing for ordinary text. ranks.go reads the embedded ranks into a table
// that the garbage collector need not scan (the loader's own reader costs
// a start three times as much, and its map is scanned by every GC cycle). The tests
// hold the count equal to github.com/pkoukk/tiktoken-go's EncodeOrdinary,
// the reference.
package tiktoken

import (
	"fmt"
	"sync"
	"unicode/utf8"
)

// Names of the supported encodings.
const (
	// CL100kBase is the encoding of GPT-4 and GPT-3.5 models, and the default.
	CL100kBase = "cl100k_base"
	// O200kBase is the encoding of GPT-4o and later models.
	O200kBase = "o200k_base"
)

// encoding is one supported encoding: its ranks, loaded at most once per
// process, and its pre-tokenizer.
type encoding struct {
	file  string                    // the ranks' file name in tiktoken-go-loader
	piece func(s string, i int) int // the end of the piece that starts at i
	once  sync.Once
	ranks *rankTable
	err   error
}

// encodings is never written after package initialisation, so concurrent
// lookups need no lock; each entry guards its own loading.
var encodings = map[string]*encoding{
	CL100kBase: {file: "cl100k_base.tiktoken", piece: pieceCL100k},
	O200kBase:  {file: "o200k_base.tiktoken", piece: pieceO200k},
}

// Counter counts tokens with a tiktoken encoding loaded offline from the
// embedded BPE files. It is safe for concurrent use.
type Counter struct {
	name string
	enc  *encoding
}

// New returns a Counter for the named encoding: "cl100k_base" (also when
// encoding is empty) or "o200k_base". Any other name is an error that lists
// the valid choices. The first Counter for an encoding loads its ranks, which
// takes some tens of milliseconds; later ones share them.
func New(encoding string) (*Counter, error) {
	c, err := NewLazy(encoding)
	if err != nil {
		return nil, err
	}
	if err := c.Load(); err != nil {
		return nil, err
	}
	return c, nil
}

// NewLazy returns a Counter for the named encoding without loading its
// ranks: the first Count (or Load) does. A server calls Load in the
// background so that it can answer the host before the ranks are ready.
func NewLazy(encoding string) (*Counter, error) {
	if encoding == "" {
		encoding = CL100kBase
	}
	e, ok := encodings[encoding]
	if !ok {
		return nil, fmt.Errorf("unknown tiktoken encoding %q: want %q or %q", encoding, CL100kBase, O200kBase)
	}
	return &Counter{name: encoding, enc: e}, nil
}

// Load loads the encoding's ranks if that has not happened yet, waiting
// for a load already in progress. The ranks come from the files embedded by
// tiktoken-go-loader (its loader reads only those, never the network).
func (c *Counter) Load() error {
	e := c.enc
	e.once.Do(func() {
		e.ranks, e.err = loadRanks(e.file)
		if e.err == nil && e.ranks.len() < 256 {
			e.err = fmt.Errorf("%d ranks, want at least one per byte", e.ranks.len())
		}
	})
	if e.err != nil {
		return fmt.Errorf("load tiktoken encoding %s: %w", c.name, e.err)
	}
	return nil
}

// Count returns the number of tokens in text, the length of tiktoken's
// ordinary encoding: special-token text such as "<|endoftext|>" is counted
// as ordinary text, as it is when user text reaches a model, and invalid
// UTF-8 is counted as U+FFFD, as tiktoken-go reads it.
//
// The count is exact for any text. Count takes time linear in len(text)
// for ordinary text and O(n log n) for a long piece (a row of one letter or
// of spaces, Han text without punctuation), where tiktoken-go's encoder is
// quadratic; so unlike earlier versions it does not cut such runs into parts
// and count them approximately.
//
// The ranks are embedded in the binary, so loading them cannot fail short
// of a broken build; if it did, Count falls back to one token per three
// bytes, an overestimate for every common script, so budgets still hold.
func (c *Counter) Count(text string) int {
	if c.Load() != nil {
		return (len(text) + 2) / 3
	}
	if !utf8.ValidString(text) {
		text = replaceInvalid(text)
	}
	e := c.enc
	n := 0
	for i := 0; i < len(text); {
		j := e.piece(text, i)
		n += e.countPiece(text[i:j])
		i = j
	}
	return n
}

// countPiece returns the number of tokens of one piece.
func (e *encoding) countPiece(piece string) int {
	if _, ok := e.ranks.get(piece); ok {
		return 1
	}
	return mergeCount(piece, e.ranks)
}

// replaceInvalid returns s with each byte that is not part of valid UTF-8
// replaced by U+FFFD, as converting s to []rune does.
func replaceInvalid(s string) string {
	b := make([]byte, 0, len(s)+16)
	for _, r := range s {
		b = utf8.AppendRune(b, r)
	}
	return string(b)
}

// Encoding returns the name of the encoding c counts with.
func (c *Counter) Encoding() string {
	return c.name
}
