package recall

import (
	"cmp"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/mnemo-mcp/mnemo/memory/lexical"
)

// excerptRunes is how much of a long assistant reply is quoted: a reply
// longer is cut to its sentences that hold the most words of the query
// and of the host's keywords (excerpt), as many as fit, at least one. An
// assistant answers at length (LongMemEval's replies: 1,939 characters
// median), and the part that speaks of what is asked is a sentence or
// two. LoCoMo's and REALTALK's turns are said by named people and never
// cut. Measured on the first 40 questions of LongMemEval's development
// half (whole replies: 0.832 of the evidence in the text at 1,832
// tokens mean): with the text drawing on 12 pages, 0.850 at 917 tokens
// for 100 runes, at 962 for 160; on 8 pages, 0.813 at 717, 750 and 925
// for 100, 160 and 300. 160 keeps a second sentence when both are short.
const excerptRunes = 160

// cutMark marks where words of a side were left out.
const cutMark = "…"

// excerpt returns text when it has at most maxRunes runes; else the
// sentences (sentenceSpans) holding the most distinct words of set, the
// best first, as many as fit in maxRunes (at least one), quoted in the
// order they were said, each run of sentences left out marked with
// cutMark. When no sentence holds a word of set, the opening sentences
// that fit are quoted. It also reports whether text holds a word of
// match (termSet.holds), read in the same pass.
func excerpt(text string, set, match termSet, maxRunes int) (string, bool) {
	if utf8.RuneCountInString(text) <= maxRunes {
		return text, match.holds(text)
	}
	spans := sentenceSpans(text)
	if len(spans) < 2 {
		return text, match.holds(text)
	}
	type sentence struct {
		i, held, runes int
	}
	ss := make([]sentence, len(spans))
	seen := make(map[string]bool)
	holds := false
	// Only words beginning as a term of set or match can count.
	var starts lexical.Starts
	for _, ts := range [2]termSet{set, match} {
		if ts.starts != nil {
			starts.AddStarts(ts.starts)
		}
	}
	for i, sp := range spans {
		clear(seen)
		s := text[sp[0]:sp[1]]
		lexical.AnyTermStarting(s, &starts, func(t []byte) bool {
			if k, ok := set.key(t); ok && !seen[k] {
				seen[k] = true
			}
			if !holds && len(match.terms) > 0 {
				_, holds = match.key(t)
			}
			return false
		})
		ss[i] = sentence{i, len(seen), utf8.RuneCountInString(strings.TrimSpace(s))}
	}
	slices.SortStableFunc(ss, func(a, b sentence) int { return cmp.Compare(b.held, a.held) })
	keep := make([]bool, len(spans))
	used := 0
	for k, s := range ss {
		if k > 0 && (used+s.runes > maxRunes || ss[0].held > 0 && s.held == 0) {
			if s.held > 0 {
				// A shorter sentence holding a word may still fit.
				continue
			}
			// Once a sentence holds a word, only those that do are
			// quoted; without one, the opening sentences that fit.
			break
		}
		keep[s.i] = true
		used += s.runes + 1
	}
	var sb strings.Builder
	for i := 0; i < len(spans); {
		if !keep[i] {
			for i < len(spans) && !keep[i] {
				i++
			}
			if sb.Len() > 0 {
				sb.WriteByte(' ')
			}
			sb.WriteString(cutMark)
			continue
		}
		j := i
		for j+1 < len(spans) && keep[j+1] {
			j++
		}
		if sb.Len() > 0 {
			sb.WriteByte(' ')
		}
		sb.WriteString(strings.TrimSpace(text[spans[i][0]:spans[j][1]]))
		i = j + 1
	}
	return sb.String(), holds
}

// key returns the term of set that the analysed word t is, or the prefix
// it shares with one (holds), and whether there is one.
func (s termSet) key(t []byte) (string, bool) {
	if s.terms[string(t)] {
		return string(t), true
	}
	if letterPrefix(t) && s.prefixes[string(t[:5])] {
		return "~" + string(t[:5]), true
	}
	return "", false
}

// unionTerms returns a followed by the terms of b not in a.
func unionTerms(a, b []lexical.Term) []lexical.Term {
	if len(b) == 0 {
		return a
	}
	out := slices.Clip(a)
	for _, t := range b {
		if !slices.ContainsFunc(out, func(u lexical.Term) bool { return u.Text == t.Text }) {
			out = append(out, t)
		}
	}
	return out
}
