package update

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/mnemo-mcp/mnemo/memory"
	"github.com/mnemo-mcp/mnemo/memory/lexical"
)

// mergeSimilarity is the Dice coefficient of index terms at and above
// which two facts are near-duplicates (sharing at least minCommonTerms
// terms, or all). Measured on the labelled pairs of TestMergeThreshold:
// the duplicates score 0.8 to 1, the distinct statements 0 to 0.75; three
// duplicates are missed (a synonym, two short facts) and one distinct
// pair is merged (word order: "tabs over spaces"), limits of words alone.
// On the LoCoMo memory (TestConsolidateLoCoMo) it merges without losing a
// fact retrieval.
const mergeSimilarity = 0.8

// Reinforcement: a fact stated again gains confirmStep confidence, up to
// maxConfirmedConfidence.
const (
	confirmStep            = 0.05
	maxConfirmedConfidence = 0.99
)

// Bounds of the fact archives.
const (
	MaxPastFacts    = 500
	MaxRetiredFacts = 500
)

// negations are the words that turn a statement around; two facts that
// differ in them are never merged ("likes coffee" / "no longer likes
// coffee"). They are stop words, so Tokenize drops them: they are looked
// for in the lowercased words.
var negations = []string{"not", "no", "never", "none", "nobody", "nothing", "neither", "nor", "without",
	"dont", "doesnt", "didnt", "isnt", "arent", "wasnt", "werent", "cant", "cannot", "wont", "wouldnt", "shouldnt",
	"hasnt", "havent", "hadnt", "anymore", "longer", "stopped", "quit", "formerly", "used",
	// Words that move a statement in time ("worked at X before joining
	// Y") make it another fact too.
	"before", "previously", "former", "until", "ex"}

// factStopTerms are index terms that say nothing in a fact: most facts are
// about the user, and some say so.
var factStopTerms = []string{"user"}

// factTerms is what near-duplicate detection compares.
type factTerms struct {
	terms   []string // distinct index terms, sorted
	numbers []string // distinct numeric terms and single letters, sorted
	negated []string // distinct negation words, sorted
}

func TermsOf(content string) factTerms {
	var ft factTerms
	for _, t := range lexical.Tokenize(content) {
		if slices.Contains(factStopTerms, t) {
			continue
		}
		ft.terms = append(ft.terms, t)
		if t[0] >= '0' && t[0] <= '9' {
			ft.numbers = append(ft.numbers, t)
		}
	}
	for _, w := range strings.Fields(strings.ToLower(content)) {
		w = strings.Trim(w, ".,;:!?()[]{}\"'’")
		if !strings.ContainsAny(w, "-_/") {
			continue
		}
		for _, part := range strings.FieldsFunc(w, func(r rune) bool { return r == '-' || r == '_' || r == '/' }) {
			if len(lexical.Tokenize(part)) == 0 {
				// An identifier with a part the index drops
				// ("codeword-am", "plan-b") must match as a whole.
				ft.numbers = append(ft.numbers, w)
				break
			}
		}
	}
	words := strings.FieldsFunc(content, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r == '\'' || r == '’')
	})
	for i, w := range words {
		w = strings.ToLower(strings.NewReplacer("'", "", "’", "").Replace(w))
		if len(w) == 1 && (w != "a" && w != "i" || i > 0 && i == len(words)-1 && words[i] != w) {
			// Single letters name things in a fact (plan B, vitamin D,
			// option A at the end), where the index drops them.
			ft.numbers = append(ft.numbers, w)
		}
		if slices.Contains(negations, w) {
			ft.negated = append(ft.negated, w)
		}
	}
	for _, l := range []*[]string{&ft.terms, &ft.numbers, &ft.negated} {
		slices.Sort(*l)
		*l = slices.Compact(*l)
	}
	return ft
}

// minCommonTerms is how many terms two facts that are not the same set of
// terms must share to be near-duplicates: between short facts one term
// is the whole point ("fact number A" / "fact number B").
const minCommonTerms = 3

// dice is the Dice coefficient of two sorted sets; 0 when they differ and
// share fewer than minCommonTerms.
func dice(a, b []string) float64 {
	if len(a)+len(b) == 0 {
		return 0
	}
	if slices.Equal(a, b) {
		return 1
	}
	common := 0
	for i, j := 0, 0; i < len(a) && j < len(b); {
		switch c := strings.Compare(a[i], b[j]); {
		case c == 0:
			common++
			i++
			j++
		case c < 0:
			i++
		default:
			j++
		}
	}
	if common < minCommonTerms {
		return 0
	}
	return 2 * float64(common) / float64(len(a)+len(b))
}

// subset reports whether every element of the sorted set a is in the
// sorted set b.
func subset(a, b []string) bool {
	for _, x := range a {
		if _, ok := slices.BinarySearch(b, x); !ok {
			return false
		}
	}
	return true
}

// factSimilarity is the similarity of two facts' terms: their Dice
// coefficient, or 0 when their numbers or negations differ.
func factSimilarity(a, b factTerms) float64 {
	if !slices.Equal(a.numbers, b.numbers) || !slices.Equal(a.negated, b.negated) {
		return 0
	}
	return dice(a.terms, b.terms)
}

// mergeable reports whether facts of categories a and b may be merged: a
// correction only with a correction.
func mergeable(a, b string) bool {
	return (a == memory.CategoryCorrection) == (b == memory.CategoryCorrection)
}

// NearDuplicate reports whether two facts are near-duplicates.
func NearDuplicate(a memory.Fact, at factTerms, b memory.Fact, bt factTerms) bool {
	return mergeable(a.Category, b.Category) && factSimilarity(at, bt) >= mergeSimilarity
}

// absorb merges o into f: the highest confidence, the earliest creation
// and validity, the latest confirmation, every source. When o's terms
// include all of f's and more, o is the more specific wording and its
// content (with its source error) is kept. It reports whether f's
// content changed.
func absorb(f *memory.Fact, ft factTerms, o memory.Fact, ot factTerms) bool {
	f.Confidence = max(f.Confidence, o.Confidence)
	if o.CreatedAt.Before(f.CreatedAt) && !o.CreatedAt.IsZero() {
		f.CreatedAt = o.CreatedAt
	}
	if s := o.Since(); s.Before(f.Since()) && !s.IsZero() {
		f.ValidFrom = s
	}
	if o.LastConfirmed.After(f.LastConfirmed) {
		f.LastConfirmed = o.LastConfirmed
	}
	for _, s := range o.AllSources() {
		if s != f.Source && !slices.Contains(f.Sources, s) {
			f.Sources = append(f.Sources, s)
		}
	}
	if len(ot.terms) > len(ft.terms) && subset(ft.terms, ot.terms) {
		f.Content = o.Content
		if o.SourceError != "" {
			f.SourceError = o.SourceError
		}
		return true
	}
	return false
}

// confirm raises f's confidence by one confirmation at now, from source.
func confirm(f *memory.Fact, conf float64, now time.Time, source string) {
	f.Confidence = min(max(f.Confidence, conf)+confirmStep, max(f.Confidence, maxConfirmedConfidence))
	f.Confidence = math.Round(f.Confidence*1000) / 1000
	if now.After(f.LastConfirmed) {
		f.LastConfirmed = now
	}
	if source != "" && source != f.Source && !slices.Contains(f.Sources, source) {
		f.Sources = append(f.Sources, source)
	}
}

// archive appends f to list, keeping the newest limit.
func archive(list []memory.Fact, f memory.Fact, limit int) []memory.Fact {
	list = append(list, f)
	if n := len(list) - limit; n > 0 {
		list = append(list[:0:0], list[n:]...)
	}
	return list
}

// ConsolidateReport says what a whole-memory consolidation merged.
type ConsolidateReport struct {
	// Merged maps each fact merged away to the fact it was merged into.
	Merged map[string]string
}

// Consolidate merges the near-duplicate facts of d in place. Facts are
// taken by confidence (highest first) then age (oldest first); each
// absorbs every later near-duplicate, which moves to RetiredFacts with a
// FactMerged event (source, at). Nothing depends on map order.
func Consolidate(d *memory.Document, at time.Time, source string) ConsolidateReport {
	rep := ConsolidateReport{Merged: map[string]string{}}
	n := len(d.Facts)
	if n < 2 {
		return rep
	}
	terms := make([]factTerms, n)
	byTerm := map[string][]int{}
	for i, f := range d.Facts {
		terms[i] = TermsOf(f.Content)
		for _, t := range terms[i].terms {
			byTerm[t] = append(byTerm[t], i)
		}
	}
	order := make([]int, n)
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(i, j int) int {
		if c := cmp.Compare(d.Facts[j].Confidence, d.Facts[i].Confidence); c != 0 {
			return c
		}
		return d.Facts[i].CreatedAt.Compare(d.Facts[j].CreatedAt)
	})
	rank := make([]int, n)
	for r, i := range order {
		rank[i] = r
	}
	gone := make([]bool, n)
	for _, i := range order {
		if gone[i] {
			continue
		}
		seen := map[int]bool{}
		var cands []int
		for _, t := range terms[i].terms {
			for _, j := range byTerm[t] {
				if j != i && !gone[j] && !seen[j] && rank[j] > rank[i] {
					seen[j] = true
					cands = append(cands, j)
				}
			}
		}
		slices.SortFunc(cands, func(a, b int) int { return cmp.Compare(rank[a], rank[b]) })
		for _, j := range cands {
			if !NearDuplicate(d.Facts[i], terms[i], d.Facts[j], terms[j]) {
				continue
			}
			o := d.Facts[j]
			if absorb(&d.Facts[i], terms[i], o, terms[j]) {
				terms[i] = terms[j]
			}
			gone[j] = true
			rep.Merged[o.ID] = d.Facts[i].ID
			d.RetiredFacts = archive(d.RetiredFacts, o, MaxRetiredFacts)
			d.AddFactEvent(memory.FactEvent{FactID: o.ID, Event: memory.FactMerged, At: at, Source: source, Into: d.Facts[i].ID,
				Reason: fmt.Sprintf("near-duplicate of fact %s, merged into it", d.Facts[i].ID), Content: o.Content})
		}
	}
	if len(rep.Merged) > 0 {
		kept := d.Facts[:0]
		for i, f := range d.Facts {
			if !gone[i] {
				kept = append(kept, f)
			}
		}
		clear(d.Facts[len(kept):])
		d.Facts = kept
	}
	return rep
}
