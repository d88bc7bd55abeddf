// Package relit tells, in one cheap scan, when a regular expression cannot
// match a text: it derives from the pattern the literals one of which every
// match must contain (Required), so that a caller with many patterns runs
// only those whose literals the text holds. A Gate never changes a result:
// it says "cannot match" only when no match is possible.
//
// Map: relit.go, Required and Gate; relit_test.go checks that a closed gate
// never hides a match, on the patterns of memory/redact and signals.json
// and on random text.
package relit

import (
	"regexp"
	"regexp/syntax"
	"strings"
	"unicode/utf8"
)

// Gate is the literal test of one pattern: Open reports whether the
// pattern may match a text. The zero Gate is always open.
type Gate struct {
	// any lists the literals, one of which each match contains; empty
	// means none is known and the gate is always open.
	any []lit
}

// lit is one required literal; fold says it matches case-insensitively
// (the pattern's (?i)), in which case s is in ASCII lower case.
type lit struct {
	s    string
	fold bool
}

// Required returns re's gate.
func Required(re *regexp.Regexp) Gate {
	p, err := syntax.Parse(re.String(), syntax.Perl)
	if err != nil {
		return Gate{}
	}
	return Gate{any: required(p.Simplify())}
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
	if len(g.any) == 0 {
		return true
	}
	for _, l := range g.any {
		switch {
		case !l.fold:
			if strings.Contains(t.s, l.s) {
				return true
			}
		case !t.ascii:
			// Case folding reaches past ASCII (K, the Kelvin sign, folds
			// to k; ſ to s): only a text of ASCII is tested.
			return true
		case strings.Contains(t.lower, l.s):
			return true
		}
	}
	return false
}

// required returns literals one of which every match of re contains, or
// nil when none is known.
func required(re *syntax.Regexp) []lit {
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
		return []lit{{s: s, fold: fold}}
	case syntax.OpCapture:
		return required(re.Sub[0])
	case syntax.OpPlus:
		return required(re.Sub[0])
	case syntax.OpRepeat:
		if re.Min >= 1 {
			return required(re.Sub[0])
		}
	case syntax.OpConcat:
		// The best child: the one whose shortest literal is longest.
		var best []lit
		for _, sub := range re.Sub {
			if l := required(sub); l != nil && (best == nil || shortest(l) > shortest(best)) {
				best = l
			}
		}
		return best
	case syntax.OpAlternate:
		var out []lit
		for _, sub := range re.Sub {
			l := required(sub)
			if l == nil {
				return nil
			}
			out = append(out, l...)
		}
		return out
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
