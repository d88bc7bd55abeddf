// Package relit tells, in one cheap scan, when a regular expression cannot
// match a text: it derives from the pattern the literals one of which every
// match must contain (Required), so that a caller with many patterns runs
// only those whose literals the text holds. A Gate never changes a result:
// it says "cannot match" only when no match is possible.
//
// Map: relit.go, Required and Gate; set.go, Set, many gates tested in one
// scan of a text; relit_test.go checks that a closed gate never hides a
// match and that a Set's scan answers as its gates do, on patterns like
// those of memory/redact and signals.json and on random text (the
// one-pass tests of memory and memory/redact compare gated results with
// every pattern run).
package relit

import (
	"regexp"
	"regexp/syntax"
	"slices"
	"strings"
	"unicode/utf8"
)

// Gate is the literal test of one pattern: Open reports whether the
// pattern may match a text. The zero Gate is always open.
type Gate struct {
	// all lists sets of literals: each match contains one literal of
	// every set (the pieces of a concatenation each require their own).
	// Empty means none is known and the gate is always open.
	all [][]lit
}

// lit is one required literal; fold says it matches case-insensitively
// (the pattern's (?i)), in which case s is in ASCII lower case. The
// flags come from what stands next to the literal in the pattern, and
// narrow where in a text it counts:
//
//   - before: no word byte right before it (a \b, or a class of no word
//     characters such as \s+, in front of a literal that starts with a
//     word character);
//   - after: no word byte right after it (a \b, or a class of no word
//     characters such as \s+, behind one that ends with a word
//     character);
//   - first: no word byte anywhere before it (^ or ^\W* in front, the
//     pattern not multi-line).
//
// A word byte is one of [0-9A-Za-z_], as \b defines it (every byte of
// a multi-byte character is a non-word byte, as the character is).
type lit struct {
	s                    string
	fold                 bool
	before, after, first bool
}

// at reports whether l occurs in text (t.s, or t.lower when folded) at a
// place its flags allow.
func (l lit) at(text string) bool {
	if l.first {
		q := 0
		for q < len(text) && !isWordByte(text[q]) {
			q++
		}
		return strings.HasPrefix(text[q:], l.s) && (!l.after || q+len(l.s) == len(text) || !isWordByte(text[q+len(l.s)]))
	}
	if !l.before && !l.after {
		return strings.Contains(text, l.s)
	}
	for from := 0; ; {
		i := strings.Index(text[from:], l.s)
		if i < 0 {
			return false
		}
		i += from
		end := i + len(l.s)
		if (!l.before || i == 0 || !isWordByte(text[i-1])) && (!l.after || end == len(text) || !isWordByte(text[end])) {
			return true
		}
		from = i + 1
	}
}

func isWordByte(b byte) bool {
	return b == '_' || '0' <= b && b <= '9' || 'a' <= b && b <= 'z' || 'A' <= b && b <= 'Z'
}

// Required returns re's gate.
func Required(re *regexp.Regexp) Gate {
	p, err := syntax.Parse(re.String(), syntax.Perl)
	if err != nil {
		return Gate{}
	}
	return Gate{all: required(p.Simplify())}
}

// Text is a text prepared for many gates: its ASCII lower-case form, made
// once.
type Text struct {
	s     string
	lower string
	ascii bool
}

// Prepare returns s ready for Gate.Open.
func Prepare(s string) Text {
	ascii := true
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			ascii = false
			break
		}
	}
	t := Text{s: s, ascii: ascii}
	if ascii {
		t.lower = strings.ToLower(s)
	}
	return t
}

// Open reports whether the gate's pattern may match t.
func (g Gate) Open(t Text) bool {
	for _, set := range g.all {
		if !t.holdsOne(set) {
			return false
		}
	}
	return true
}

// holdsOne reports whether t holds one of the literals, where its flags
// allow.
func (t Text) holdsOne(set []lit) bool {
	for _, l := range set {
		switch {
		case !l.fold:
			if l.at(t.s) {
				return true
			}
		case !t.ascii:
			// Case folding reaches past ASCII (K, the Kelvin sign, folds
			// to k; ſ to s): only a text of ASCII is tested.
			return true
		case l.at(t.lower):
			return true
		}
	}
	return false
}

// maxSets bounds the literal sets a gate tests, the most telling
// (longest shortest literal) first.
const maxSets = 3

// required returns sets of literals such that every match of re contains
// one literal of each set, the best first; nil when none is known.
func required(re *syntax.Regexp) [][]lit {
	switch re.Op {
	case syntax.OpLiteral:
		fold := re.Flags&syntax.FoldCase != 0
		s := string(re.Rune)
		if fold {
			for _, r := range re.Rune {
				if r >= utf8.RuneSelf {
					return nil
				}
			}
			s = strings.ToLower(s)
		}
		return [][]lit{{{s: s, fold: fold}}}
	case syntax.OpCapture:
		return required(re.Sub[0])
	case syntax.OpPlus:
		return required(re.Sub[0])
	case syntax.OpRepeat:
		if re.Min >= 1 {
			return required(re.Sub[0])
		}
	case syntax.OpConcat:
		// Each piece's sets, the literal of a piece that is only a
		// literal placed by its neighbours; the best kept.
		var sets [][]lit
		for i, sub := range re.Sub {
			got := required(sub)
			if len(got) == 1 && whole(sub) {
				got = [][]lit{placed(got[0], re.Sub[:i], re.Sub[i+1:])}
			}
			sets = append(sets, got...)
		}
		slices.SortStableFunc(sets, func(a, b []lit) int { return shortest(b) - shortest(a) })
		if len(sets) > maxSets {
			sets = sets[:maxSets]
		}
		return sets
	case syntax.OpAlternate:
		// One set: the best of each branch, together.
		var out []lit
		for _, sub := range re.Sub {
			got := required(sub)
			if got == nil {
				return nil
			}
			out = append(out, got[0]...)
		}
		return [][]lit{out}
	}
	return nil
}

func shortest(l []lit) int {
	n := len(l[0].s)
	for _, x := range l[1:] {
		n = min(n, len(x.s))
	}
	return n
}

// whole reports whether every match of re is one of the literals
// required returns for it (a literal, or a choice of literals), so that
// what stands next to re in a concatenation stands next to the literal.
func whole(re *syntax.Regexp) bool {
	switch re.Op {
	case syntax.OpLiteral:
		return true
	case syntax.OpCapture:
		return whole(re.Sub[0])
	case syntax.OpAlternate:
		for _, sub := range re.Sub {
			if !whole(sub) {
				return false
			}
		}
		return true
	}
	return false
}

// placed returns copies of the literals ls with the flags that the
// pattern pieces before and after them give (see lit).
func placed(ls []lit, before, after []*syntax.Regexp) []lit {
	out := make([]lit, len(ls))
	for i, l := range ls {
		startsWord, endsWord := isWordByte(l.s[0]), isWordByte(l.s[len(l.s)-1])
		if n := len(before); n > 0 && startsWord {
			prev := before[n-1]
			switch {
			case prev.Op == syntax.OpWordBoundary:
				l.before = true
			case prev.Op == syntax.OpPlus || prev.Op == syntax.OpRepeat && prev.Min >= 1:
				l.before = noWordChar(prev.Sub[0])
			case noWordChar(prev):
				l.before = true
			case prev.Op == syntax.OpBeginText && n == 1:
				l.first = true
			case prev.Op == syntax.OpStar && n == 2 && before[0].Op == syntax.OpBeginText && noWordChar(prev.Sub[0]):
				l.first = true
			}
		}
		if len(after) > 0 && endsWord {
			next := after[0]
			switch next.Op {
			case syntax.OpWordBoundary:
				l.after = true
			case syntax.OpPlus:
				l.after = noWordChar(next.Sub[0])
			case syntax.OpRepeat:
				l.after = next.Min >= 1 && noWordChar(next.Sub[0])
			default:
				l.after = noWordChar(next)
			}
		}
		out[i] = l
	}
	return out
}

// noWordChar reports whether re is a single-character class holding no
// word character.
func noWordChar(re *syntax.Regexp) bool {
	switch re.Op {
	case syntax.OpCharClass:
		for i := 0; i+1 < len(re.Rune); i += 2 {
			lo, hi := re.Rune[i], re.Rune[i+1]
			for _, w := range [][2]rune{{'0', '9'}, {'A', 'Z'}, {'_', '_'}, {'a', 'z'}} {
				if lo <= w[1] && hi >= w[0] {
					return false
				}
			}
		}
		return len(re.Rune) > 0
	case syntax.OpLiteral:
		return len(re.Rune) == 1 && re.Flags&syntax.FoldCase == 0 && (re.Rune[0] >= utf8.RuneSelf || !isWordByte(byte(re.Rune[0])))
	}
	return false
}
