package lexical

import (
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"
)

// maxTokenBytes caps a token's length; longer words (hashes, base64, run-on
// URLs) are truncated, identically at index and query time, so that one
// pasted blob cannot bloat the term dictionary.
const maxTokenBytes = 64

// Tokenize returns the index terms of text, in order, with repeats: the
// analyzer shared by indexing, searching and keyword extraction.
//
// Text is split on anything that is not a letter or a digit. Words are
// lowercased, common Latin diacritics and ligatures are folded ("Café" →
// "cafe", "ß" → "ss"), fullwidth Latin letters and digits become ASCII,
// apostrophes inside words are dropped ("don't" → "dont"), English stop words
// are removed and the rest is stemmed with Porter2 ("stories" → "stori",
// "running" → "run", "deployment" → "deploy"). Numbers are kept, with inner dots ("3.14", "10.0.0.1"). "C++",
// "C#" and "F#" stay distinct from "c". Han, Hiragana, Katakana and Hangul
// runs become overlapping character bigrams ("数据库" → "数据", "据库"), or the
// character itself when it stands alone, so CJK text matches without a
// dictionary. Emoji and symbols are dropped.
func Tokenize(text string) []string {
	var t tokenizer
	t.reset(text)
	var out []string
	for tok, ok := t.next(); ok; tok, ok = t.next() {
		out = append(out, string(tok))
	}
	return out
}

// tokenizers holds pull tokenizers for AnyTerm and Words, whose buffers
// and stems are reused.
var tokenizers = sync.Pool{New: func() any { return &tokenizer{stems: make(map[string]string)} }}

// maxStems bounds the words a pooled tokenizer remembers the stems of.
// AnyTerm reads the same texts' words again and again (the injection
// reads every sentence of each reply it quotes); stemming was three
// quarters of its time on LongMemEval's long replies, and a few thousand
// distinct words cover one history's replies.
const maxStems = 1 << 12

// AnyTerm reports whether fn holds for a term of text, taking the terms in
// Tokenize's order and stopping at the first that does. The term is valid
// only during the call. It allocates nothing once warm: a caller asking
// whether a text holds one of a few words need not build every term.
func AnyTerm(text string, fn func(term []byte) bool) bool {
	t := tokenizers.Get().(*tokenizer)
	defer tokenizers.Put(t)
	t.reset(text)
	for tok, ok := t.next(); ok; tok, ok = t.next() {
		if fn(tok) {
			return true
		}
	}
	return false
}

// Starts is a set of how terms begin, their first two bytes (or the one
// of a one-byte term), for AnyTermStarting. A word's term begins as the
// word does, folded: stemming changes a word's end, never its first
// byte, and its second only from 'y' to 'i' ("dying" → "die"). So a word
// that begins as none of the set's terms do cannot give one of them, and
// need not be analysed. The zero value holds nothing.
type Starts struct {
	// bits[b] has bit c&63 set for each term beginning with bytes b, c;
	// every bit for a one-byte term b. A word may pass that no term
	// begins as (two second bytes sharing bits), never the reverse.
	bits [256]uint64
}

// Add adds how term begins; an empty term adds nothing.
func (s *Starts) Add(term string) {
	switch len(term) {
	case 0:
	case 1:
		s.bits[term[0]] = ^uint64(0)
	default:
		s.bits[term[0]] |= 1 << (term[1] & 63)
		if term[1] == 'i' {
			// "dying" → "die", "vying" → "vie".
			s.bits[term[0]] |= 1 << ('y' & 63)
		}
	}
}

// AddStarts adds the beginnings of o's terms.
func (s *Starts) AddStarts(o *Starts) {
	for i, b := range o.bits {
		s.bits[i] |= b
	}
}

// may reports whether the folded word w can give a term that begins as
// one of the set's: a term of one byte only when that byte was added as
// a term (a longer word can give one: "aed" → "a").
func (s *Starts) may(w []byte) bool {
	b := s.bits[w[0]]
	if len(w) < 2 {
		return b == ^uint64(0)
	}
	return b&(1<<(w[1]&63)) != 0
}

// AnyTermStarting is AnyTerm for a caller that only asks about terms of a
// few beginnings (s, not nil): fn sees, in order, every term of text that
// begins with the first two bytes of a term added to s (or is a one-byte
// term added), and perhaps a few others; the words of the rest are not
// analysed. On a long side of which only a few words can matter, it
// spares stemming and looking up the rest.
func AnyTermStarting(text string, s *Starts, fn func(term []byte) bool) bool {
	t := tokenizers.Get().(*tokenizer)
	defer tokenizers.Put(t)
	t.reset(text)
	t.starts = s
	defer func() { t.starts = nil }()
	for tok, ok := t.next(); ok; tok, ok = t.next() {
		if fn(tok) {
			return true
		}
	}
	return false
}

// Words calls fn with each term of text, in order, as Tokenize returns
// them, and the word of text it was made from, lowercased: "Goroutines"
// gives the term "goroutin" and the word "goroutines". A CJK bigram is
// its own word. It lets a caller show people words rather than index
// terms. Stems are remembered as AnyTerm's are: ranking reads the sides
// of the same pages on every retrieval (weighSide: more than half of a
// LongMemEval retrieval's time went to stemming their words again).
func Words(text string, fn func(term, word string)) {
	t := tokenizers.Get().(*tokenizer)
	defer tokenizers.Put(t)
	t.reset(text)
	for tok, ok := t.next(); ok; tok, ok = t.next() {
		word := string(tok)
		if t.from >= 0 {
			word = strings.ToLower(strings.TrimRight(text[t.from:t.pos], "'’"))
			word = strings.TrimSuffix(strings.TrimSuffix(word, "'s"), "’s")
		}
		fn(string(tok), word)
	}
}

// tokenizer is a pull tokenizer over one text. It keeps its buffers across
// reset, so a reused tokenizer allocates nothing.
type tokenizer struct {
	text string
	pos  int    // byte offset of the next unread rune
	from int    // byte offset where the last word token started; -1 for a CJK bigram
	word []byte // the current word or bigram, folded
	cjk  []rune // the current CJK run
	ci   int    // index in cjk of the next bigram's first rune
	// stems, when not nil, remembers the stems of the words seen
	// (stemmed).
	stems map[string]string
	// starts, when not nil, are the beginnings of the terms asked for
	// (AnyTermStarting): a word beginning as none of them is skipped.
	starts *Starts
}

func (t *tokenizer) reset(text string) {
	t.text, t.pos = text, 0
	t.cjk, t.ci = t.cjk[:0], 0
}

// next returns the next token, valid until the following call.
func (t *tokenizer) next() ([]byte, bool) {
	for {
		if t.ci < len(t.cjk) {
			t.from = -1
			if tok := t.nextCJK(); t.starts == nil || t.starts.may(tok) {
				return tok, true
			}
			continue
		}
		for t.pos < len(t.text) {
			if c := t.text[t.pos]; c < utf8.RuneSelf {
				if asciiWord[c] != 0 {
					break
				}
				t.pos++
				continue
			}
			r, size := utf8.DecodeRuneInString(t.text[t.pos:])
			if isWordRune(r) {
				break
			}
			t.pos += size
		}
		if t.pos >= len(t.text) {
			return nil, false
		}
		if t.text[t.pos] >= utf8.RuneSelf {
			if r, _ := utf8.DecodeRuneInString(t.text[t.pos:]); isCJK(r) {
				t.scanCJK()
				continue
			}
		}
		start := t.pos
		t.from = start
		if tok, ok := t.scanWord(); ok {
			return tok, true
		}
		if t.pos == start { // cannot happen; never loop forever if it does
			_, size := utf8.DecodeRuneInString(t.text[t.pos:])
			t.pos += size
		}
	}
}

func (t *tokenizer) scanCJK() {
	t.cjk, t.ci = t.cjk[:0], 0
	for t.pos < len(t.text) {
		r, size := utf8.DecodeRuneInString(t.text[t.pos:])
		if !isCJK(r) {
			break
		}
		t.cjk = append(t.cjk, r)
		t.pos += size
	}
}

// nextCJK returns the next bigram of the current run, or its only rune.
func (t *tokenizer) nextCJK() []byte {
	t.word = utf8.AppendRune(t.word[:0], t.cjk[t.ci])
	if len(t.cjk) > 1 {
		t.word = utf8.AppendRune(t.word, t.cjk[t.ci+1])
	}
	t.ci++
	if t.ci >= len(t.cjk)-1 {
		t.cjk, t.ci = t.cjk[:0], 0
	}
	return t.word
}

// scanWord reads one non-CJK word starting at t.pos and returns its term,
// or false when it is a stop word.
func (t *tokenizer) scanWord() ([]byte, bool) {
	const (
		other = iota
		letter
		digit
	)
	w := t.word[:0]
	last := other
	plain := true // only ASCII letters: eligible for stemming
	for t.pos < len(t.text) {
		if c := asciiWord[t.text[t.pos]&0x7f]; c != 0 && t.text[t.pos] < utf8.RuneSelf {
			// The common case, an ASCII letter or digit, without decoding.
			if c <= '9' {
				last, plain = digit, false
			} else {
				last = letter
			}
			if len(w) < maxTokenBytes {
				w = append(w, c)
			}
			t.pos++
			continue
		}
		r, size := utf8.DecodeRuneInString(t.text[t.pos:])
		n := len(w)
		switch {
		case 'a' <= r && r <= 'z':
			w, last = append(w, byte(r)), letter
		case 'A' <= r && r <= 'Z':
			w, last = append(w, byte(r+'a'-'A')), letter
		case '0' <= r && r <= '9':
			w, last, plain = append(w, byte(r)), digit, false
		case r == '\'' || r == '’' || r == 'ʼ':
			if last != letter || !t.followedBy(t.pos+size, unicode.IsLetter) {
				return t.finish(w, plain)
			}
		case r == '.':
			if last != digit || !t.followedBy(t.pos+size, isASCIIDigit) {
				return t.finish(w, plain)
			}
			w = append(w, '.')
		case r < utf8.RuneSelf || isCJK(r):
			return t.finish(w, plain)
		case unicode.IsLetter(r):
			w, last = appendFolded(w, r), letter
			plain = plain && allASCIILetters(w[n:])
		case unicode.IsDigit(r):
			if 0xFF10 <= r && r <= 0xFF19 { // fullwidth digits
				r -= 0xFF10 - '0'
			}
			w, last, plain = utf8.AppendRune(w, r), digit, false
		case unicode.IsMark(r):
			if !isFoldedMark(r) {
				w, plain = utf8.AppendRune(w, r), false
			}
		default:
			return t.finish(w, plain)
		}
		if len(w) > maxTokenBytes {
			w = w[:n] // drop the whole rune or fold that overflowed
		}
		t.pos += size
	}
	return t.finish(w, plain)
}

// finish turns a scanned word into a term.
func (t *tokenizer) finish(w []byte, plain bool) ([]byte, bool) {
	t.word = w
	if len(w) == 0 {
		return nil, false
	}
	if len(w) == 1 && w[0] >= 'a' {
		if suffix := t.langSuffix(); suffix != "" {
			t.pos += len(suffix)
			t.word = append(w, suffix...)
			if t.starts != nil && !t.starts.may(t.word) {
				return nil, false
			}
			return t.word, true
		}
	}
	if t.starts != nil && !t.starts.may(w) {
		// Its term would begin as w does (see Starts): none asked for.
		return nil, false
	}
	var class uint8
	if len(w) < len(lexiconShape) && 'a' <= w[0] && w[0] <= 'z' && lexiconShape[len(w)]&(1<<(w[0]-'a')) != 0 {
		class = lexicon[string(w)]
	}
	switch class {
	case stopWord:
		return nil, false
	case noStem:
		return w, true
	}
	if plain {
		t.word = t.stemmed(w)
	}
	return t.word, true
}

// stemmed returns stem(w), from t.stems when t has them.
func (t *tokenizer) stemmed(w []byte) []byte {
	if t.stems == nil {
		return stem(w)
	}
	if s, ok := t.stems[string(w)]; ok {
		return append(w[:0], s...)
	}
	word := string(w)
	s := stem(w)
	if len(t.stems) >= maxStems {
		clear(t.stems)
	}
	t.stems[word] = string(s)
	return s
}

// langSuffix returns "++" or "#" when they follow a one-letter word and end
// it, as in "C++", "C#" and "F#".
func (t *tokenizer) langSuffix() string {
	rest := t.text[t.pos:]
	for _, s := range []string{"++", "#"} {
		if len(rest) >= len(s) && rest[:len(s)] == s && !t.followedBy(t.pos+len(s), isWordRune) {
			return s
		}
	}
	return ""
}

// followedBy reports whether the rune at byte offset i satisfies f.
func (t *tokenizer) followedBy(i int, f func(rune) bool) bool {
	if i >= len(t.text) {
		return false
	}
	r, _ := utf8.DecodeRuneInString(t.text[i:])
	return f(r)
}

func isWordRune(r rune) bool {
	if r < utf8.RuneSelf {
		return 'a' <= r|0x20 && r|0x20 <= 'z' || isASCIIDigit(r)
	}
	return r != 'ʼ' && (unicode.IsLetter(r) || unicode.IsDigit(r)) || isCJK(r)
}

func isASCIIDigit(r rune) bool { return '0' <= r && r <= '9' }

// asciiWord maps ASCII letters and digits to their lowercase form, and
// every other ASCII byte to 0.
var asciiWord = func() (t [utf8.RuneSelf]byte) {
	for c := byte('0'); c <= '9'; c++ {
		t[c] = c
	}
	for c := byte('a'); c <= 'z'; c++ {
		t[c], t[c-'a'+'A'] = c, c
	}
	return t
}()

// isFoldedMark reports whether the combining mark r is dropped from words:
// diacritics that decorate Latin, Greek and Cyrillic letters, and the
// variation selectors and keycap marks of emoji. Other marks, such as
// Devanagari vowel signs, are part of the word.
func isFoldedMark(r rune) bool {
	switch {
	case 0x300 <= r && r <= 0x36F, 0x1AB0 <= r && r <= 0x1AFF, 0x1DC0 <= r && r <= 0x1DFF,
		0x20D0 <= r && r <= 0x20FF, 0xFE00 <= r && r <= 0xFE0F, 0xFE20 <= r && r <= 0xFE2F,
		0xE0100 <= r && r <= 0xE01EF:
		return true
	}
	return false
}

// isCJK reports whether r belongs to a script written without spaces between
// words (Han, Hiragana, Katakana) or to Hangul, including the prolonged sound
// and iteration marks that Unicode files under no script.
func isCJK(r rune) bool {
	if r < 0x1100 {
		return false
	}
	switch r {
	case 0x3005, 0x3006, 0x30FC, 0xFF70, 0xFF9E, 0xFF9F: // 々 〆 ー ｰ ﾞ ﾟ
		return true
	}
	return unicode.In(r, unicode.Han, unicode.Hiragana, unicode.Katakana, unicode.Hangul)
}

func allASCIILetters(b []byte) bool {
	for _, c := range b {
		if c < 'a' || c > 'z' {
			return false
		}
	}
	return true
}

// appendFolded appends the lowercase, diacritic-free form of the letter r.
func appendFolded(dst []byte, r rune) []byte {
	if 0xFF21 <= r && r <= 0xFF5A { // fullwidth Latin letters
		r -= 0xFF21 - 'A'
	}
	r = unicode.ToLower(r)
	switch {
	case r < utf8.RuneSelf:
		return append(dst, byte(r))
	case r >= latinFoldFirst && int(r-latinFoldFirst) < len(latinFold) && latinFold[r-latinFoldFirst] != "":
		return append(dst, latinFold[r-latinFoldFirst]...)
	case 0xFB00 <= r && r <= 0xFB06 && ligatures[r-0xFB00] != "":
		return append(dst, ligatures[r-0xFB00]...)
	}
	return utf8.AppendRune(dst, r)
}

const latinFoldFirst = 0xC0

// latinFold maps the lowercase letters of Latin-1 Supplement and Latin
// Extended-A and -B, by rune - latinFoldFirst, to their ASCII base letters.
var latinFold = func() (t [0x250 - latinFoldFirst]string) {
	for _, g := range [...]struct{ to, from string }{
		{"a", "àáâãäåāăąǎǟǡǻȁȃȧ"}, {"ae", "æǣǽ"}, {"b", "ƀ"}, {"c", "çćĉċčƈ"},
		{"d", "ďđð"}, {"dz", "ǆǳ"}, {"e", "èéêëēĕėęěȅȇȩ"}, {"f", "ƒ"},
		{"g", "ĝğġģǥǧǵ"}, {"h", "ĥħȟ"}, {"i", "ìíîïĩīĭįıǐȉȋ"}, {"ij", "ĳ"},
		{"j", "ĵǰ"}, {"k", "ķĸƙǩ"}, {"l", "ĺļľŀłƚ"}, {"lj", "ǉ"}, {"n", "ñńņňŉŋƞǹ"},
		{"nj", "ǌ"}, {"o", "òóôõöøōŏőơǒǫǭǿȍȏȫȭȯȱ"}, {"oe", "œ"}, {"r", "ŕŗřȑȓ"},
		{"s", "śŝşšſș"}, {"ss", "ß"}, {"t", "ţťŧțƫƭ"}, {"th", "þ"},
		{"u", "ùúûüũūŭůűųưǔǖǘǚǜȕȗ"}, {"w", "ŵ"}, {"y", "ýÿŷƴȳ"}, {"z", "źżžƶȥ"},
	} {
		for _, r := range g.from {
			t[r-latinFoldFirst] = g.to
		}
	}
	return t
}()

// ligatures maps U+FB00–U+FB06 (ﬀ ﬁ ﬂ ﬃ ﬄ ﬅ ﬆ) to their letters.
var ligatures = [...]string{"ff", "fi", "fl", "ffi", "ffl", "st", "st"}

// A word of at least prefixLen letters is also indexed, in a second field
// worth prefixWeight of the first, under the first prefixLen letters of its
// stem, marked with a leading prefixMark: derivations that the stemmer
// keeps apart ("allergic" → "allerg", "allergies" → "allergi"; "tracker",
// "track"; "organise", "organize") meet there. A query word scores a
// document by the better of its exact and its prefix match, never both.
// Only words of ASCII letters have a prefix term; no term of Tokenize
// contains prefixMark.
// prefixLen and prefixWeight were chosen on the LoCoMo development split
// from a coarse sweep (4, 5, 6 letters; 0.3, 0.5, 0.7).
const (
	prefixLen    = 5
	prefixMark   = '~'
	prefixWeight = 0.5
)

// appendPrefix appends to dst the prefix term of term, an analysed term,
// and reports whether it has one.
func appendPrefix[T string | []byte](dst []byte, term T) ([]byte, bool) {
	if len(term) < prefixLen {
		return dst, false
	}
	for i := range len(term) {
		if term[i] < 'a' || term[i] > 'z' {
			return dst, false
		}
	}
	dst = append(dst, prefixMark)
	return append(dst, term[:prefixLen]...), true
}

// isPrefixTerm reports whether an index term is a prefix term.
func isPrefixTerm(term string) bool { return len(term) > 0 && term[0] == prefixMark }

// indexTerms returns the terms that Add indexes for text: Tokenize's, each
// followed by its prefix term if it has one.
func indexTerms(text string) []string {
	var t tokenizer
	t.reset(text)
	var out []string
	var pre []byte
	for tok, ok := t.next(); ok; tok, ok = t.next() {
		out = append(out, string(tok))
		if p, ok := appendPrefix(pre[:0], tok); ok {
			out = append(out, string(p))
			pre = p
		}
	}
	return out
}
