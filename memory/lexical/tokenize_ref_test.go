package lexical

import (
	"slices"
	"testing"
	"unicode"
	"unicode/utf8"
)

// refTokenizer is the tokenizer as it was before its ASCII fast paths,
// kept to check that they change no token. It is a pull tokenizer over one text. It keeps its buffers across
// reset, so a reused refTokenizer allocates nothing.
type refTokenizer struct {
	text string
	pos  int    // byte offset of the next unread rune
	word []byte // the current word or bigram, folded
	cjk  []rune // the current CJK run
	ci   int    // index in cjk of the next bigram's first rune
}

func (t *refTokenizer) reset(text string) {
	t.text, t.pos = text, 0
	t.cjk, t.ci = t.cjk[:0], 0
}

// next returns the next token, valid until the following call.
func (t *refTokenizer) next() ([]byte, bool) {
	for {
		if t.ci < len(t.cjk) {
			return t.nextCJK(), true
		}
		for t.pos < len(t.text) {
			r, size := utf8.DecodeRuneInString(t.text[t.pos:])
			if isWordRune(r) {
				break
			}
			t.pos += size
		}
		if t.pos >= len(t.text) {
			return nil, false
		}
		if r, _ := utf8.DecodeRuneInString(t.text[t.pos:]); isCJK(r) {
			t.scanCJK()
			continue
		}
		start := t.pos
		if tok, ok := t.scanWord(); ok {
			return tok, true
		}
		if t.pos == start { // cannot happen; never loop forever if it does
			_, size := utf8.DecodeRuneInString(t.text[t.pos:])
			t.pos += size
		}
	}
}

func (t *refTokenizer) scanCJK() {
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
func (t *refTokenizer) nextCJK() []byte {
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
func (t *refTokenizer) scanWord() ([]byte, bool) {
	const (
		other = iota
		letter
		digit
	)
	w := t.word[:0]
	last := other
	plain := true // only ASCII letters: eligible for stemming
	for t.pos < len(t.text) {
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
func (t *refTokenizer) finish(w []byte, plain bool) ([]byte, bool) {
	t.word = w
	if len(w) == 0 {
		return nil, false
	}
	if len(w) == 1 && w[0] >= 'a' {
		if suffix := t.langSuffix(); suffix != "" {
			t.pos += len(suffix)
			t.word = append(w, suffix...)
			return t.word, true
		}
	}
	switch lexicon[string(w)] {
	case stopWord:
		return nil, false
	case noStem:
		return w, true
	}
	if plain {
		t.word = stem(w)
	}
	return t.word, true
}

// langSuffix returns "++" or "#" when they follow a one-letter word and end
// it, as in "C++", "C#" and "F#".
func (t *refTokenizer) langSuffix() string {
	rest := t.text[t.pos:]
	for _, s := range []string{"++", "#"} {
		if len(rest) >= len(s) && rest[:len(s)] == s && !t.followedBy(t.pos+len(s), isWordRune) {
			return s
		}
	}
	return ""
}

// followedBy reports whether the rune at byte offset i satisfies f.
func (t *refTokenizer) followedBy(i int, f func(rune) bool) bool {
	if i >= len(t.text) {
		return false
	}
	r, _ := utf8.DecodeRuneInString(t.text[i:])
	return f(r)
}

// refTokenize is Tokenize with refTokenizer.
func refTokenize(text string) []string {
	var t refTokenizer
	t.reset(text)
	var out []string
	for tok, ok := t.next(); ok; tok, ok = t.next() {
		out = append(out, string(tok))
	}
	return out
}

// FuzzTokenizeReference checks Tokenize against refTokenize.
func FuzzTokenizeReference(f *testing.F) {
	for _, s := range []string{
		"", "Hello, World!", "don't stop", "我用Go写FastAPI", "C++ C# f#", "3.14.15", "v1.2.3a b.c 4.",
		"Ünïcödé ＦＵＬＬ ﬁ", "🎉👨‍👩‍👧", "e\u0301\u0301", "a'b'c", "İstanbul ǅ ς Σ", "\xff\xfe",
		"It's the users' café—naïve résumé, Straße; x'", "studies studying studied happily darkness",
		"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaé1234567890",
		"0123456789012345678901234567890123456789012345678901234567890123456789.5",
		"themselves Yourselves NEWS witness lens macOS iOS a", "x++ c++y c#d q#",
	} {
		f.Add(s)
	}
	for _, doc := range benchCorpus(20) {
		f.Add(doc)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if got, want := Tokenize(s), refTokenize(s); !slices.Equal(got, want) {
			t.Fatalf("Tokenize(%q) = %q, want %q", s, got, want)
		}
		var seen []string
		AnyTerm(s, func(term []byte) bool { seen = append(seen, string(term)); return false })
		if want := Tokenize(s); !slices.Equal(seen, want) {
			t.Fatalf("AnyTerm(%q) saw %q, want %q", s, seen, want)
		}
	})
}
