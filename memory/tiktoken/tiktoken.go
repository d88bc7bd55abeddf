// Package tiktoken adapts github.com/pkoukk/tiktoken-go to mnemo's token
// counting: it counts tokens the way OpenAI models do, with the BPE ranks
// embedded in the binary by github.com/pkoukk/tiktoken-go-loader, so nothing
// is ever downloaded or written to a cache directory.
package tiktoken

import (
	"fmt"
	"sync"
	"unicode"
	"unicode/utf8"

	tkgo "github.com/pkoukk/tiktoken-go"
	tkloader "github.com/pkoukk/tiktoken-go-loader"
)

// Names of the supported encodings.
const (
	// CL100kBase is the encoding of GPT-4 and GPT-3.5 models, and the default.
	CL100kBase = "cl100k_base"
	// O200kBase is the encoding of GPT-4o and later models.
	O200kBase = "o200k_base"
)

// encoding is one supported encoding, loaded at most once per process.
type encoding struct {
	once sync.Once
	tk   *tkgo.Tiktoken
	err  error
}

// encodings is never written after package initialisation, so concurrent
// lookups need no lock; each entry guards its own loading.
var encodings = map[string]*encoding{
	CL100kBase: {},
	O200kBase:  {},
}

// useOfflineLoader points tiktoken-go at the embedded BPE files. It must run
// before the first GetEncoding, which would otherwise fetch the ranks over
// HTTP and write them to TIKTOKEN_CACHE_DIR.
var useOfflineLoader = sync.OnceFunc(func() {
	tkgo.SetBpeLoader(tkloader.NewOfflineLoader())
})

// Counter counts tokens with a tiktoken encoding loaded offline from the
// embedded BPE files. It is safe for concurrent use.
type Counter struct {
	name string
	enc  *encoding
}

// New returns a Counter for the named encoding: "cl100k_base" (also when
// encoding is empty) or "o200k_base". Any other name is an error that lists
// the valid choices. The first Counter for an encoding loads its ranks, which
// takes a few hundred milliseconds; later ones share them.
func New(encoding string) (*Counter, error) {
	if encoding == "" {
		encoding = CL100kBase
	}
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
// for a load already in progress.
func (c *Counter) Load() error {
	e := c.enc
	e.once.Do(func() {
		useOfflineLoader()
		e.tk, e.err = tkgo.GetEncoding(c.name)
	})
	if e.err != nil {
		return fmt.Errorf("load tiktoken encoding %s: %w", c.name, e.err)
	}
	return nil
}

// Chunk sizes for Count, in bytes. tiktoken-go's pre-tokenizer and BPE merge
// are quadratic in the length of a piece (100 KB of one letter takes seconds),
// so Count feeds the encoder parts of at most maxChunk bytes, cut where the
// encoding's pieces are known to break.
const (
	minChunk = 256
	maxChunk = 1024
)

// Count returns the number of tokens in text. Special-token text such as
// "<|endoftext|>" is counted as ordinary text, as it is when user text
// reaches a model.
//
// The count is exact, except for unbroken runs longer than 1 KiB with no
// letter, digit or punctuation boundary (a long row of one character, or
// Han text without punctuation): those are counted in 1 KiB parts, which
// gives a count within a few percent, usually slightly higher. This keeps
// Count linear in len(text).
//
// The ranks are embedded in the binary, so loading them cannot fail short
// of a broken build; if it did, Count falls back to one token per three
// bytes, an overestimate for every common script, so budgets still hold.
func (c *Counter) Count(text string) int {
	if c.Load() != nil {
		return (len(text) + 2) / 3
	}
	return c.count(text, minChunk, maxChunk)
}

// count encodes text in parts of at least lo bytes, cut at the first safe
// boundary after lo, or anywhere (at a rune boundary) once a part reaches hi.
func (c *Counter) count(text string, lo, hi int) int {
	n, start := 0, 0
	prev := utf8.RuneError
	for i := 0; i < len(text); {
		r, size := utf8.DecodeRuneInString(text[i:])
		if i-start >= lo && (i-start >= hi || splitsPieces(prev, r)) {
			n += len(c.enc.tk.EncodeOrdinary(text[start:i]))
			start = i
		}
		prev = r
		i += size
	}
	if start < len(text) {
		n += len(c.enc.tk.EncodeOrdinary(text[start:]))
	}
	return n
}

// splitsPieces reports whether the pre-tokenizer patterns of cl100k_base and
// o200k_base always end a piece between prev and next, so that encoding the
// text on either side separately gives the same tokens as encoding it whole.
// That holds before a space that follows anything but white space (no
// pattern continues past non-space into a space), after a digit unless a
// digit follows (digits group only with digits), and after a letter unless a
// letter, a combining mark or an apostrophe follows (words absorb marks and
// "'s"-style suffixes). next is limited to ASCII and to punctuation, whose
// classes are not in doubt.
func splitsPieces(prev, next rune) bool {
	switch {
	case next == ' ':
		return !unicode.IsSpace(prev) && !unicode.Is(unicode.Z, prev)
	case next < utf8.RuneSelf:
		isDigit := '0' <= next && next <= '9'
		isLetter := 'a' <= next|0x20 && next|0x20 <= 'z'
		if unicode.IsDigit(prev) {
			return !isDigit
		}
		return unicode.IsLetter(prev) && !isLetter && next != '\''
	case unicode.IsPunct(next):
		return unicode.IsDigit(prev) || unicode.IsLetter(prev)
	}
	return false
}

// Encoding returns the name of the encoding c counts with.
func (c *Counter) Encoding() string {
	return c.name
}
