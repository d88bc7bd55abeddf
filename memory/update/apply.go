package update

import (
	"cmp"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"math"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/mnemo-mcp/mnemo/memory"
)

// ApplyOptions are the rules ApplyUpdate follows.
type ApplyOptions struct {
	// Source is the thread the update came from; "unknown" when empty.
	Source string
	// Now stamps new facts and updated sections; the current time when zero.
	Now time.Time
	// ConfidenceThreshold is the lowest confidence a new fact needs.
	ConfidenceThreshold float64
	// MaxFacts bounds the facts kept; beyond it the highest-confidence
	// facts stay, and on equal confidence the older ones. 0 means no bound.
	MaxFacts int
	// MaxRemoveShare is the largest share of the existing facts that one
	// update may remove; at least one fact may always be removed when any
	// exist. The ids listed first win; the excess is ignored and noted.
	MaxRemoveShare float64
	// NewID returns a fact id, "fact_" + 8 lowercase hex digits; NewFactID
	// when nil. An id that is malformed or already taken is drawn again.
	NewID func() string
	// CreatedReason is the reason recorded in the fact history for the
	// facts added; "extracted from thread <Source>" when empty.
	CreatedReason string
	// RedactSecrets replaces secrets in section summaries, fact contents
	// and knowledge entries by "[redacted: KIND]" (redact.Text).
	RedactSecrets bool
	// MaxKnowledge bounds each knowledge list (long_term_knowledge_capacity);
	// 0 means no bound. See addKnowledge for what is evicted.
	MaxKnowledge int
	// ValidFrom is when the new facts became true (the time of the
	// conversation they come from); zero means their creation time.
	ValidFrom time.Time
}

// ApplyReport says what ApplyUpdate changed and what it left out.
type ApplyReport struct {
	// FactsAdded are the ids of the new facts in the document.
	FactsAdded []string
	// FactsRemoved are the ids of the facts removed because the update
	// listed them in factsToRemove.
	FactsRemoved []string
	// FactsEvicted are the ids of facts that were in the document before
	// and were dropped by policy: over MaxFacts, about an uploaded file, or
	// a duplicate of another fact. Ignored says which.
	FactsEvicted []string
	// FactsConfirmed are the ids of facts that were there before and that
	// a new fact repeated or nearly repeated: it was merged into them, and
	// their confidence rose (consolidate.go).
	FactsConfirmed []string
	// SectionsUpdated are the names of the sections rewritten.
	SectionsUpdated []string
	// Ignored are human-readable reasons for what was left out or dropped.
	Ignored []string
}

// NewFactID returns a random fact id: "fact_" + 8 lowercase hex digits.
func NewFactID() string {
	var b [4]byte
	rand.Read(b[:]) // never fails since Go 1.24
	return "fact_" + hex.EncodeToString(b[:])
}

// isFactID reports whether id is "fact_" + 8 lowercase hex digits.
func isFactID(id string) bool {
	hexPart, ok := strings.CutPrefix(id, "fact_")
	if !ok || len(hexPart) != 8 {
		return false
	}
	for _, c := range []byte(hexPart) {
		if (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return false
		}
	}
	return true
}

// FoldFactContent is the key facts are deduplicated by: runs of white
// space collapsed to one space, lower case, without white space or a final
// full stop at either end.
func FoldFactContent(s string) string {
	return strings.TrimRight(strings.ToLower(strings.Join(strings.Fields(s), " ")), " .。")
}

// ApplyUpdate applies u to doc, which it changes in place (pass a clone).
// In order: sections are rewritten; the listed facts that exist are
// removed, at most MaxRemoveShare of them; new facts at or above the
// confidence threshold whose content is not already present are added;
// sentences about uploaded files are scrubbed from every section and fact,
// and facts left empty or duplicated by that are dropped; finally the
// facts are cut to MaxFacts. Every fact added, changed or removed gets an
// event in doc.FactEvents. Nothing it does depends on map order, and it
// does not touch LastUpdated, Revision or the watermarks.
func ApplyUpdate(doc *memory.Document, u *Update, opt ApplyOptions) ApplyReport {
	a := &applier{doc: doc, opt: opt, now: opt.Now, isNew: map[string]bool{}, taken: map[string]bool{}}
	if doc == nil {
		a.ignore("no document to update")
		return a.rep
	}
	if u == nil {
		u = &Update{}
	}
	for _, f := range doc.Facts {
		a.taken[f.ID] = true
	}
	if a.now.IsZero() {
		a.now = time.Now().UTC()
	}
	if a.opt.Source == "" {
		a.opt.Source = "unknown"
	}
	if a.opt.NewID == nil {
		a.opt.NewID = NewFactID
	}
	if a.opt.CreatedReason == "" {
		a.opt.CreatedReason = "extracted from thread " + a.opt.Source
	}
	a.sections(u.Sections)
	a.remove(u.FactsToRemove)
	a.add(u.NewFacts)
	a.knowledge(u)
	a.scrub()
	a.enforceMax()
	for _, f := range doc.Facts {
		if a.isNew[f.ID] {
			a.rep.FactsAdded = append(a.rep.FactsAdded, f.ID)
			a.event(f, memory.FactCreated, a.opt.CreatedReason)
		}
	}
	return a.rep
}

// event records a change to f in the document's fact history.
func (a *applier) event(f memory.Fact, kind, reason string) {
	a.doc.AddFactEvent(memory.FactEvent{FactID: f.ID, Event: kind, At: a.now, Source: a.opt.Source, Reason: reason, Content: f.Content})
}

// applier carries one ApplyUpdate call.
type applier struct {
	doc   *memory.Document
	opt   ApplyOptions
	now   time.Time
	rep   ApplyReport
	isNew map[string]bool // ids of the facts this update added
	taken map[string]bool // ids that were or are in the document
}

func (a *applier) ignore(format string, args ...any) {
	a.rep.Ignored = append(a.rep.Ignored, fmt.Sprintf(format, args...))
}

// drop records that fact f left the document for reason.
func (a *applier) drop(f memory.Fact, reason string) {
	if a.isNew[f.ID] {
		a.ignore("new fact %s: %s", quoteForNote(f.Content), reason)
		delete(a.isNew, f.ID)
		return
	}
	a.rep.FactsEvicted = append(a.rep.FactsEvicted, f.ID)
	a.ignore("fact %s: %s", f.ID, reason)
	a.event(f, memory.FactRemoved, "evicted: "+reason)
}

// text applies the text rule to what the update brings (section
// summaries, fact contents, knowledge entries): control characters and
// U+FFFD are removed (cleanText), secrets redacted when RedactSecrets is
// set, each noted under what.
func (a *applier) text(what, s string) string {
	s, dirty := memory.CleanText(s)
	if dirty {
		a.ignore("%s: control characters removed", what)
	}
	red := memory.Redactor{On: a.opt.RedactSecrets}
	s = red.Text(s)
	if found := red.Take(); len(found) > 0 {
		a.ignore("%s: %s", what, memory.RedactionNote(found))
	}
	return s
}

// SectionByName returns the section of doc called name, or nil.
func SectionByName(doc *memory.Document, name string) *memory.Section {
	switch name {
	case "workContext":
		return &doc.User.WorkContext
	case "personalContext":
		return &doc.User.PersonalContext
	case "topOfMind":
		return &doc.User.TopOfMind
	case "recentMonths":
		return &doc.History.RecentMonths
	case "earlierContext":
		return &doc.History.EarlierContext
	case "longTermBackground":
		return &doc.History.LongTermBackground
	}
	return nil
}

func (a *applier) sections(updates []SectionUpdate) {
	for _, su := range updates {
		sec := SectionByName(a.doc, su.Name)
		if sec == nil {
			a.ignore("section %s: unknown", quoteForNote(su.Name))
			continue
		}
		summary := strings.TrimSpace(a.text("section "+su.Name, su.Summary))
		switch scrubbed := ScrubUploads(summary); {
		case scrubbed == "":
			a.ignore("section %s: the new summary is empty or only about uploaded files", su.Name)
			continue
		case scrubbed != summary:
			a.ignore("section %s: sentences about uploaded files removed", su.Name)
			summary = scrubbed
		}
		sec.Summary, sec.UpdatedAt = summary, a.now
		if !slices.Contains(a.rep.SectionsUpdated, su.Name) {
			a.rep.SectionsUpdated = append(a.rep.SectionsUpdated, su.Name)
		}
	}
}

// removalBound is how many of n facts one update may remove.
func removalBound(n int, share float64) int {
	if n == 0 {
		return 0
	}
	if math.IsNaN(share) || share <= 0 {
		return 1
	}
	if share >= 1 {
		return n
	}
	// The epsilon keeps 0.29·100 from flooring to 28.
	return max(1, int(math.Floor(share*float64(n)+1e-9)))
}

func (a *applier) remove(ids []string) {
	bound := removalBound(len(a.doc.Facts), a.opt.MaxRemoveShare)
	gone, seen := make(map[string]bool), make(map[string]bool)
	var excess []string
	pinned := make(map[string]bool)
	for _, f := range a.doc.Facts {
		if f.Pinned {
			pinned[f.ID] = true
		}
	}
	for _, id := range ids {
		switch {
		case seen[id]:
		case !a.taken[id]:
			a.ignore("factsToRemove: no fact %s", quoteForNote(id))
		case pinned[id]:
			// The person pinned it: only they (update_memory, forget)
			// take it back.
			a.ignore("factsToRemove: fact %s is pinned and stays", id)
		case len(gone) == bound:
			excess = append(excess, id)
		default:
			gone[id] = true
			a.rep.FactsRemoved = append(a.rep.FactsRemoved, id)
		}
		seen[id] = true
	}
	if len(excess) > 0 {
		a.ignore("factsToRemove: not removed, since one update may remove at most %d of %d facts: %s",
			bound, len(a.doc.Facts), strings.Join(excess, ", "))
	}
	if len(gone) > 0 {
		for _, f := range a.doc.Facts {
			if gone[f.ID] {
				// A removed fact was true until now: it is kept, with its
				// interval, for questions about the past (timeline.go).
				f.ValidFrom, f.ValidTo = f.Since(), a.now
				a.doc.PastFacts = archive(a.doc.PastFacts, f, MaxPastFacts)
				a.doc.AddFactEvent(memory.FactEvent{FactID: f.ID, Event: memory.FactReplaced, At: a.now, Source: a.opt.Source,
					Reason:  "the model removed it while reading thread " + a.opt.Source + " (contradicted or outdated); kept as past",
					Content: f.Content, ValidFrom: f.ValidFrom, ValidTo: f.ValidTo})
			}
		}
		a.doc.Facts = slices.DeleteFunc(a.doc.Facts, func(f memory.Fact) bool { return gone[f.ID] })
	}
}

func (a *applier) add(facts []NewFact) {
	keys := make(map[string]bool, len(a.doc.Facts)+len(facts))
	terms := make([]factTerms, len(a.doc.Facts), len(a.doc.Facts)+len(facts))
	for i, f := range a.doc.Facts {
		keys[FoldFactContent(f.Content)] = true
		terms[i] = TermsOf(f.Content)
	}
	for _, nf := range facts {
		content := strings.TrimSpace(a.text("new fact", nf.Content))
		what := "new fact " + quoteForNote(content)
		cat := strings.ToLower(strings.TrimSpace(nf.Category))
		switch {
		case !memory.ValidCategory(cat):
			a.ignore("%s: unknown category %s", what, quoteForNote(nf.Category))
			continue
		case math.IsNaN(nf.Confidence) || nf.Confidence < 0 || nf.Confidence > 1:
			a.ignore("%s: confidence %v is not between 0 and 1", what, nf.Confidence)
			continue
		case nf.Confidence < a.opt.ConfidenceThreshold:
			a.ignore("%s: confidence %v is below the threshold %v", what, nf.Confidence, a.opt.ConfidenceThreshold)
			continue
		case content == "":
			a.ignore("new fact: empty content")
			continue
		case utf8.RuneCountInString(content) > memory.UpdateMaxContentRunes:
			a.ignore("%s: content is over %d characters", what, memory.UpdateMaxContentRunes)
			continue
		}
		switch scrubbed := ScrubUploads(content); {
		case scrubbed == "":
			a.ignore("%s: about an uploaded file", what)
			continue
		case scrubbed != content:
			a.ignore("%s: sentences about uploaded files removed", what)
			content = scrubbed
		}
		key := FoldFactContent(content)
		switch {
		case key == "":
			a.ignore("%s: no content", what)
			continue
		case keys[key]:
			a.ignore("%s: already known", what)
			if i := slices.IndexFunc(a.doc.Facts, func(f memory.Fact) bool { return FoldFactContent(f.Content) == key }); i >= 0 {
				a.confirm(i, terms[i], memory.Fact{Content: content, Category: cat, Confidence: nf.Confidence, Source: a.opt.Source}, TermsOf(content))
			}
			continue
		}
		nt := TermsOf(content)
		if i := a.nearest(memory.Fact{Category: cat}, nt, terms); i >= 0 {
			o := memory.Fact{Content: content, Category: cat, Confidence: nf.Confidence, CreatedAt: a.now, Source: a.opt.Source, ValidFrom: a.opt.ValidFrom}
			if a.isNew[a.doc.Facts[i].ID] {
				a.ignore("%s: near-duplicate of another new fact, merged into it", what)
				if absorb(&a.doc.Facts[i], terms[i], o, nt) {
					terms[i] = nt
				}
			} else {
				a.confirm(i, terms[i], o, nt)
				terms[i] = TermsOf(a.doc.Facts[i].Content)
			}
			keys[FoldFactContent(a.doc.Facts[i].Content)] = true
			continue
		}
		id := a.newID()
		if id == "" {
			a.ignore("%s: no free fact id", what)
			continue
		}
		f := memory.Fact{ID: id, Content: content, Category: cat, Confidence: nf.Confidence, CreatedAt: a.now, Source: a.opt.Source}
		if !a.opt.ValidFrom.IsZero() && !a.opt.ValidFrom.Equal(a.now) {
			f.ValidFrom = a.opt.ValidFrom
		}
		if se := strings.TrimSpace(a.text(what+" sourceError", nf.SourceError)); se != "" {
			if cat == memory.CategoryCorrection {
				f.SourceError = ScrubUploads(se)
			} else {
				a.ignore("%s: sourceError dropped, the category is %s", what, cat)
			}
		}
		keys[key] = true
		a.isNew[id] = true
		a.doc.Facts = append(a.doc.Facts, f)
		terms = append(terms, nt)
	}
}

// newID draws a well-formed id that no fact has or had during this update;
// after a few collisions from opt.NewID it falls back to NewFactID. It
// returns "" when no free id was found.
func (a *applier) newID() string {
	for try := range 32 {
		var id string
		if try < 8 {
			id = a.opt.NewID()
		} else {
			id = NewFactID()
		}
		if isFactID(id) && !a.taken[id] {
			a.taken[id] = true
			return id
		}
	}
	return ""
}

// scrub removes sentences about uploaded files from every section and
// fact, then drops facts left empty and facts whose content another fact
// earlier in the document already has.
func (a *applier) scrub() {
	for _, ns := range a.doc.Sections() {
		sec := SectionByName(a.doc, ns.Name)
		if s := ScrubUploads(sec.Summary); s != sec.Summary {
			sec.Summary = s
			a.ignore("section %s: sentences about uploaded files removed", ns.Name)
		}
	}
	keys := make(map[string]bool, len(a.doc.Facts))
	kept := a.doc.Facts[:0]
	for _, f := range a.doc.Facts {
		scrubbed := ScrubUploads(f.Content)
		key := FoldFactContent(scrubbed)
		switch {
		case key == "" && scrubbed != f.Content:
			a.drop(f, "about an uploaded file")
		case key == "":
			a.drop(f, "no content")
		case keys[key]:
			a.drop(f, "duplicates another fact")
		default:
			if scrubbed != f.Content {
				a.ignore("fact %s: sentences about uploaded files removed", f.ID)
				if !a.isNew[f.ID] {
					a.event(memory.Fact{ID: f.ID, Content: scrubbed}, memory.FactUpdated, "upload scrub: sentences about uploaded files removed")
				}
			}
			f.Content, f.SourceError = scrubbed, ScrubUploads(f.SourceError)
			keys[key] = true
			kept = append(kept, f)
		}
	}
	clear(a.doc.Facts[len(kept):])
	a.doc.Facts = kept
}

// enforceMax keeps the MaxFacts facts with the highest confidence, the older
// ones on equal confidence so that a flood of new facts cannot evict
// established ones, and leaves them in document order.
func (a *applier) enforceMax() {
	facts := a.doc.Facts
	if a.opt.MaxFacts <= 0 || len(facts) <= a.opt.MaxFacts {
		return
	}
	order := make([]int, len(facts))
	for i := range order {
		order[i] = i
	}
	rank := func(c float64) float64 {
		if math.IsNaN(c) {
			return math.Inf(-1)
		}
		return c
	}
	slices.SortStableFunc(order, func(i, j int) int {
		if c := cmp.Compare(rank(facts[j].Confidence), rank(facts[i].Confidence)); c != 0 {
			return c
		}
		return facts[i].CreatedAt.Compare(facts[j].CreatedAt)
	})
	keep := make([]bool, len(facts))
	for _, i := range order[:a.opt.MaxFacts] {
		keep[i] = true
	}
	kept := facts[:0]
	for i, f := range facts {
		if keep[i] {
			kept = append(kept, f)
		} else {
			a.drop(f, fmt.Sprintf("over the limit of %d facts", a.opt.MaxFacts))
		}
	}
	clear(facts[len(kept):])
	a.doc.Facts = kept
}

// nearest returns the index of the fact of a.doc.Facts that is the most
// similar near-duplicate of a new fact of category f.Category with terms
// nt, or -1 (consolidate.go).
func (a *applier) nearest(f memory.Fact, nt factTerms, terms []factTerms) int {
	best, at := 0.0, -1
	for i, o := range a.doc.Facts {
		if !mergeable(f.Category, o.Category) {
			continue
		}
		if sim := factSimilarity(nt, terms[i]); sim >= mergeSimilarity && sim > best {
			best, at = sim, i
		}
	}
	return at
}

// confirm merges the arriving fact o into the stored fact at index i, which
// it repeats or nearly repeats: a later conversation confirmed it.
func (a *applier) confirm(i int, ft factTerms, o memory.Fact, ot factTerms) {
	f := &a.doc.Facts[i]
	if a.isNew[f.ID] {
		return
	}
	before := f.Content
	absorb(f, ft, o, ot)
	confirm(f, o.Confidence, a.now, a.opt.Source)
	// The reason names no wording: the history must not keep text that a
	// forget of the fact would have to find (the contents are in Content).
	reason := fmt.Sprintf("stated again by %s", a.opt.Source)
	if o.Content != before {
		reason += " in other words"
	}
	if f.Content != before {
		reason += "; the more specific wording is kept"
	}
	a.doc.AddFactEvent(memory.FactEvent{FactID: f.ID, Event: memory.FactConfirmed, At: a.now, Source: a.opt.Source, Reason: reason, Content: f.Content, Confidence: f.Confidence})
	if !slices.Contains(a.rep.FactsConfirmed, f.ID) {
		a.rep.FactsConfirmed = append(a.rep.FactsConfirmed, f.ID)
	}
}
