package tiktoken

import (
	"unicode"
	"unicode/utf8"
)

// The pre-tokenizers below split text into the pieces that the encodings'
// regular expressions match, without a regular expression engine. The
// patterns, as tiktoken-go runs them with dlclark/regexp2 (a backtracking
// engine: at each position the first alternative that matches wins, and
// within it the first way that succeeds, greedy quantifiers longest first):
//
//	cl100k_base: (?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}|
//	             ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+
//	o200k_base:  [^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?|
//	             [^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?|
//	             \p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n/]*|\s*[\r\n]+|\s+(?!\S)|\s+
//
// regexp2 reads \s as unicode.IsSpace and the categories from Go's unicode
// tables, and matches (?i:...) by lowering each input rune with
// unicode.ToLower; the classes here use the same functions. Every rune is a
// letter, a number, white space or "other", and each of those starts some
// alternative, so the pieces tile the text. The functions take valid UTF-8
// (tiktoken-go sees invalid bytes as U+FFFD, and so does Count) and return
// the end of the piece that starts at i < len(s).

// Rune classes, as bits.
const (
	classLetter = 1 << iota // \p{L}
	classNumber             // \p{N}
	classSpace              // \s
	classMark               // \p{M}
	classLower              // \p{Ll}
	classUpper              // \p{Lu} or \p{Lt}
)

// asciiClass holds the classes of the ASCII runes.
var asciiClass = func() (t [utf8.RuneSelf]uint8) {
	for r := range rune(utf8.RuneSelf) {
		t[r] = classify(r)
	}
	return t
}()

// classify returns r's classes from the unicode tables.
func classify(r rune) uint8 {
	switch {
	case unicode.IsLetter(r):
		switch {
		case unicode.IsLower(r):
			return classLetter | classLower
		case unicode.IsUpper(r), unicode.IsTitle(r):
			return classLetter | classUpper
		}
		return classLetter // Lm, Lo
	case unicode.IsNumber(r):
		return classNumber
	case unicode.IsSpace(r):
		return classSpace
	case unicode.IsMark(r):
		return classMark
	}
	return 0
}

// next decodes the rune at i < len(s) and returns it with its size and
// classes.
func next(s string, i int) (rune, int, uint8) {
	if c := s[i]; c < utf8.RuneSelf {
		return rune(c), 1, asciiClass[c]
	}
	r, n := utf8.DecodeRuneInString(s[i:])
	return r, n, classify(r)
}

// isOther reports the class [^\s\p{L}\p{N}].
func isOther(c uint8) bool { return c&(classLetter|classNumber|classSpace) == 0 }

// canPrefix reports the class [^\r\n\p{L}\p{N}].
func canPrefix(r rune, c uint8) bool {
	return r != '\r' && r != '\n' && c&(classLetter|classNumber) == 0
}

// upperish is o200k's [\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}].
func upperish(c uint8) bool { return c&classMark != 0 || c&(classLetter|classLower) == classLetter }

// lowerish is o200k's [\p{Ll}\p{Lm}\p{Lo}\p{M}].
func lowerish(c uint8) bool { return c&classMark != 0 || c&(classLetter|classUpper) == classLetter }

// contraction returns the end of (?i:'s|'t|'re|'ve|'m|'ll|'d) at i, or -1.
// No two alternatives start with the same letter, so their order does not
// matter.
func contraction(s string, i int) int {
	if i >= len(s) || s[i] != '\'' || i+1 >= len(s) {
		return -1
	}
	r, n, _ := next(s, i+1)
	j := i + 1 + n
	var second rune
	switch unicode.ToLower(r) {
	case 's', 't', 'm', 'd':
		return j
	case 'r', 'v':
		second = 'e'
	case 'l':
		second = 'l'
	default:
		return -1
	}
	if j >= len(s) {
		return -1
	}
	if r, n, _ := next(s, j); unicode.ToLower(r) == second {
		return j + n
	}
	return -1
}

// digits returns the end of \p{N}{1,3} at i, where a number starts.
func digits(s string, i int) int {
	for k := 0; k < 3 && i < len(s); k++ {
		_, n, c := next(s, i)
		if c&classNumber == 0 {
			break
		}
		i += n
	}
	return i
}

// others returns the end of ` ?[^\s\p{L}\p{N}]+` followed by any run of
// the bytes in tail, at i, or -1.
func others(s string, i int, tail string) int {
	j := i
	if s[j] == ' ' {
		j++
	}
	k := j
	for k < len(s) {
		_, n, c := next(s, k)
		if !isOther(c) {
			break
		}
		k += n
	}
	if k == j {
		return -1 // without the space, a space is not [^\s\p{L}\p{N}] either
	}
	for k < len(s) && containsByte(tail, s[k]) {
		k++
	}
	return k
}

func containsByte(s string, b byte) bool {
	for i := range len(s) {
		if s[i] == b {
			return true
		}
	}
	return false
}

// spaces returns the end of \s*[\r\n]+|\s+(?!\S)|\s+ at i, where white
// space starts. The first ends after the run's last line break; the second
// takes the whole run at the end of the text, or all of it but its last
// rune, which then starts the next piece (" word"); the third a lone space.
func spaces(s string, i int) int {
	end, last, brk := i, i, -1
	for end < len(s) {
		r, n, c := next(s, end)
		if c&classSpace == 0 {
			break
		}
		if r == '\r' || r == '\n' {
			brk = end + n
		}
		last = end
		end += n
	}
	switch {
	case brk >= 0:
		return brk
	case end == len(s) || last == i:
		return end
	}
	return last
}

// pieceCL100k returns the end of the cl100k_base piece at i.
func pieceCL100k(s string, i int) int {
	r, n, c := next(s, i)
	if r == '\'' {
		if e := contraction(s, i); e >= 0 {
			return e
		}
	}
	j := -1
	switch {
	case c&classLetter != 0:
		j = i
	case canPrefix(r, c) && i+n < len(s):
		if _, _, c2 := next(s, i+n); c2&classLetter != 0 {
			j = i + n
		}
	}
	if j >= 0 {
		for j < len(s) {
			_, n, c := next(s, j)
			if c&classLetter == 0 {
				break
			}
			j += n
		}
		return j
	}
	if c&classNumber != 0 {
		return digits(s, i)
	}
	if e := others(s, i, "\r\n"); e >= 0 {
		return e
	}
	return spaces(s, i)
}

// wordO200k returns the end of o200k's first (lower is true) or second
// letter alternative without its prefix, starting at i, or -1:
// [upperish]*[lowerish]+ or [upperish]+[lowerish]*, then an optional
// contraction.
func wordO200k(s string, i int, lower bool) int {
	j, lastLowerish := i, -1
	for j < len(s) {
		_, n, c := next(s, j)
		if !upperish(c) {
			break
		}
		j += n
		if lowerish(c) {
			lastLowerish = j
		}
	}
	if !lower && j == i {
		return -1
	}
	k := j
	for k < len(s) {
		_, n, c := next(s, k)
		if !lowerish(c) {
			break
		}
		k += n
	}
	if lower && k == j {
		// The greedy [upperish]* gives back runes until [lowerish]+ can
		// take one: the run's last rune that is both (Lm, Lo or a mark).
		if lastLowerish < 0 {
			return -1
		}
		k = lastLowerish
	}
	if e := contraction(s, k); e >= 0 {
		return e
	}
	return k
}

// pieceO200k returns the end of the o200k_base piece at i.
func pieceO200k(s string, i int) int {
	r, n, c := next(s, i)
	prefix := canPrefix(r, c) && i+n < len(s)
	// Without the prefix, only a letter or a mark can start a word; a
	// mark is also a prefix, so it is tried both ways, prefix first.
	bare := c&(classLetter|classMark) != 0
	for _, lower := range []bool{true, false} {
		if prefix {
			if e := wordO200k(s, i+n, lower); e >= 0 {
				return e
			}
		}
		if bare {
			if e := wordO200k(s, i, lower); e >= 0 {
				return e
			}
		}
	}
	if c&classNumber != 0 {
		return digits(s, i)
	}
	if e := others(s, i, "\r\n/"); e >= 0 {
		return e
	}
	return spaces(s, i)
}
