package recall

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// tagOpeners are '<' and the characters that look like it.
var tagOpeners = map[rune]bool{
	'<': true, '＜': true, '‹': true, '⟨': true, '\u3008': true, '\u2329': true, '﹤': true, '˂': true,
	'ᐸ': true, '❮': true, '❬': true, '⧼': true, '«': true, '≺': true, '⋖': true, '《': true,
}

// tagSlashes are '/' and the characters that look like it.
var tagSlashes = map[rune]bool{
	'/': true, '／': true, '∕': true, '⁄': true, '⧸': true, '╱': true, '〳': true, '\\': true, '＼': true,
}

// confusableLetters maps letters that look like those of "memory" to them.
var confusableLetters = map[rune]rune{
	'м': 'm', 'М': 'm', 'е': 'e', 'Е': 'e', 'ё': 'e', 'о': 'o', 'О': 'o', 'ο': 'o', 'Ο': 'o', 'σ': 'o',
	'г': 'r', 'у': 'y', 'У': 'y', 'ү': 'y', 'Υ': 'y', 'γ': 'y', 'ε': 'e', 'Ε': 'e', 'Μ': 'm', 'ʀ': 'r',
	'ᴍ': 'm', 'ᴇ': 'e', 'ᴏ': 'o', 'ʏ': 'y',
}

// foldLetter maps r to the lower-case ASCII letter it looks like, or 0.
func foldLetter(r rune) rune {
	switch {
	case r >= 'a' && r <= 'z':
		return r
	case r >= 'A' && r <= 'Z':
		return r + 'a' - 'A'
	case r >= 'ａ' && r <= 'ｚ':
		return r - 'ａ' + 'a'
	case r >= 'Ａ' && r <= 'Ｚ':
		return r - 'Ａ' + 'a'
	case r >= 0x1D400 && r <= 0x1D6A3: // mathematical alphanumeric letters
		return 'a' + (r-0x1D400)%52%26
	}
	if l, ok := confusableLetters[r]; ok {
		return l
	}
	if unicode.Is(unicode.Mn, r) { // combining marks: treated as part of a letter
		return -1
	}
	return 0
}

// invisible reports whether r can sit unseen inside a tag: spaces and
// format characters (zero-width spaces and joiners, bidi controls).
func invisible(r rune) bool {
	return unicode.IsSpace(r) || unicode.Is(unicode.Cf, r)
}

// NeutralizeTags replaces the opening character of anything that could
// read as a tag with "&lt;": an ASCII '<' before a letter (or '/', '!' or
// '?' and a letter), and '<' or a look-alike before "memory" or "/memory"
// once look-alike letters, case, invisible characters and combining marks
// are folded.
func NeutralizeTags(text string) string {
	var sb strings.Builder
	last := 0
	for i, r := range text {
		// Every opener but '<' is outside ASCII: most runes are passed
		// over without a map lookup.
		if r != '<' && (r < utf8.RuneSelf || !tagOpeners[r]) {
			continue
		}
		rest := text[i+len(string(r)):]
		if !(r == '<' && opensASCIITag(rest)) && !opensMemoryTag(rest) {
			continue
		}
		if sb.Len() == 0 {
			sb.Grow(len(text) + 8)
		}
		sb.WriteString(text[last:i])
		sb.WriteString("&lt;")
		last = i + len(string(r))
	}
	if last == 0 {
		return text
	}
	sb.WriteString(text[last:])
	return sb.String()
}

// opensASCIITag reports whether rest, the text after '<', starts as an
// HTML or XML tag, comment or processing instruction would.
func opensASCIITag(rest string) bool {
	if rest != "" && (rest[0] == '/' || rest[0] == '!' || rest[0] == '?') {
		rest = rest[1:]
	}
	return rest != "" && (rest[0] >= 'a' && rest[0] <= 'z' || rest[0] >= 'A' && rest[0] <= 'Z' || rest[0] == '-')
}

// opensMemoryTag reports whether rest, the text after a tag opener, reads
// as "memory" or "/memory".
func opensMemoryTag(rest string) bool {
	const name = "memory"
	matched, slash := 0, false
	for _, r := range rest {
		switch {
		case invisible(r):
			continue
		case matched == 0 && !slash && tagSlashes[r]:
			slash = true
			continue
		}
		l := foldLetter(r)
		switch {
		case l == -1:
			continue
		case l == rune(name[matched]):
			matched++
			if matched == len(name) {
				return true
			}
		default:
			return false
		}
	}
	return false
}
