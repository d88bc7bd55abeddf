package engine

import (
	"fmt"
	"math"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/mnemo-mcp/mnemo/memory"
	"github.com/mnemo-mcp/mnemo/memory/update"
)

// CheckImport applies to memory read by mnemo import the rules the tools
// apply to what they store: the text rule (textProblem) on every text, the
// per-call limits of cfg on every turn (max_message_bytes for user input
// and reply, max_meta_data_bytes and 32 levels for meta_data), at most
// max_facts facts and long_term_knowledge_capacity entries in each
// knowledge list, facts and knowledge entries of at most 2,000 characters
// with a known category and a confidence between 0 and 1, and section
// summaries and fact history within max_message_bytes. Secrets are
// redacted in place when cfg.RedactSecrets is set; the redactions are
// returned. The first record that breaks a rule is named in the error
// (which wraps ErrInvalidInput): its scope, list, index and field, like
// "bob: facts[3].content: contains control character U+001B". The scope's
// ids, and every id and time the records carry (turn, fact and thread
// ids, idempotency keys, when a turn happened and was stored, when a
// section or fact changed), follow the rules of add_memory: the id rule
// with its credential check, and the years 1900 to 2200.
func CheckImport(cfg memory.Config, scope memory.Scope, doc *memory.Document, turns []memory.Turn) ([]memory.Redaction, error) {
	if err := checkScope(scope); err != nil {
		return nil, err
	}
	fail := func(err error) ([]memory.Redaction, error) {
		return nil, fmt.Errorf("%s: %w", scope.Key(), err)
	}
	red := &memory.Redactor{On: cfg.RedactSecrets}
	for i := range turns {
		t := &turns[i]
		at := fmt.Sprintf("turns[%d]", i)
		if t.ID != "" {
			at += " (" + t.ID + ")"
		}
		// The rules of add_memory: its id check (credentials included)
		// and its time range.
		if t.ID != "" {
			if err := memory.CheckID(at+".id", t.ID); err != nil {
				return fail(err)
			}
		}
		if err := memory.CheckID(at+".thread_id", t.ThreadID); err != nil {
			return fail(err)
		}
		if t.IdempotencyKey != "" {
			if err := memory.CheckID(at+".idempotency_key", t.IdempotencyKey); err != nil {
				return fail(err)
			}
		}
		for _, f := range []struct {
			name string
			at   time.Time
		}{{"time", t.Time}, {"stored", t.Stored}} {
			if err := memory.CheckTime(at+"."+f.name, f.at); err != nil {
				return fail(err)
			}
		}
		for _, f := range []struct {
			name string
			text *string
		}{{"user", &t.User}, {"reply", &t.Reply}} {
			if err := memory.CheckText(at+"."+f.name, *f.text, cfg.MaxMessageBytes); err != nil {
				return fail(err)
			}
			*f.text = red.Text(*f.text)
		}
		meta, err := memory.ValidateMetaData(t.MetaData, cfg.MaxMetaDataBytes)
		if err != nil {
			return fail(renameField(err, at+".meta_data"))
		}
		t.MetaData = red.JSON(meta)
	}
	if doc == nil {
		return red.Take(), nil
	}
	if err := memory.CheckTime("lastUpdated", doc.LastUpdated); err != nil {
		return fail(err)
	}
	for thread := range doc.Watermarks {
		if err := memory.CheckID("watermarks", thread); err != nil {
			return fail(err)
		}
	}
	for _, ns := range doc.Sections() {
		sec := update.SectionByName(doc, ns.Name)
		if err := memory.CheckText("section "+ns.Name, sec.Summary, cfg.MaxMessageBytes); err != nil {
			return fail(err)
		}
		if err := memory.CheckTime("section "+ns.Name+".updatedAt", sec.UpdatedAt); err != nil {
			return fail(err)
		}
		sec.Summary = red.Text(sec.Summary)
	}
	lists := []struct {
		name  string
		facts []memory.Fact
		limit int
		what  string
	}{
		{"facts", doc.Facts, cfg.MaxFacts, "max_facts"},
		{"knowledge", doc.Knowledge, cfg.LongTermKnowledgeCapacity, "long_term_knowledge_capacity"},
		{"assistantKnowledge", doc.AssistantKnowledge, cfg.LongTermKnowledgeCapacity, "long_term_knowledge_capacity"},
	}
	for _, l := range lists {
		if len(l.facts) > l.limit {
			return fail(memory.Invalid(l.name, "holds %d entries; %s is %d: raise %s for the import or remove entries", len(l.facts), l.what, l.limit, l.what))
		}
		for i := range l.facts {
			if err := checkImportedFact(fmt.Sprintf("%s[%d]", l.name, i), &l.facts[i], red); err != nil {
				return fail(err)
			}
		}
	}
	if len(doc.FactEvents) > memory.MaxFactEvents {
		return fail(memory.Invalid("factEvents", "holds %d events; the limit is %d", len(doc.FactEvents), memory.MaxFactEvents))
	}
	for i := range doc.FactEvents {
		e := &doc.FactEvents[i]
		at := fmt.Sprintf("factEvents[%d]", i)
		if e.FactID != "" {
			if err := memory.CheckID(at+".fact_id", e.FactID); err != nil {
				return fail(err)
			}
		}
		if err := memory.CheckTime(at+".at", e.At); err != nil {
			return fail(err)
		}
		for _, f := range []struct {
			name string
			text *string
		}{{"content", &e.Content}, {"reason", &e.Reason}, {"source", &e.Source}} {
			if err := memory.CheckText(at+"."+f.name, *f.text, cfg.MaxMessageBytes); err != nil {
				return fail(err)
			}
			*f.text = red.Text(*f.text)
		}
	}
	return red.Take(), nil
}

// checkImportedFact checks one imported fact or knowledge entry at path
// and redacts its texts.
func checkImportedFact(path string, f *memory.Fact, red *memory.Redactor) error {
	switch n := utf8.RuneCountInString(f.Content); {
	case strings.TrimSpace(f.Content) == "":
		return memory.Invalid(path+".content", "is empty")
	case n > memory.UpdateMaxContentRunes:
		return memory.Invalid(path+".content", "is %d characters long; the limit is %d", n, memory.UpdateMaxContentRunes)
	case !memory.ValidCategory(f.Category):
		return memory.Invalid(path+".category", "%q is not a category; use one of %s", f.Category, strings.Join(memory.Categories, ", "))
	case math.IsNaN(f.Confidence) || f.Confidence < 0 || f.Confidence > 1:
		return memory.Invalid(path+".confidence", "%v is not between 0 and 1", f.Confidence)
	case utf8.RuneCountInString(f.SourceError) > memory.UpdateMaxContentRunes:
		return memory.Invalid(path+".sourceError", "is over %d characters", memory.UpdateMaxContentRunes)
	}
	if f.ID != "" {
		if err := memory.CheckID(path+".id", f.ID); err != nil {
			return err
		}
	}
	for _, t := range []struct {
		name string
		text *string
	}{{"content", &f.Content}, {"sourceError", &f.SourceError}, {"source", &f.Source}} {
		if p := memory.TextProblem(*t.text); p != "" {
			return memory.Invalid(path+"."+t.name, "%s", p)
		}
	}
	for _, t := range []struct {
		name string
		at   time.Time
	}{{"created_at", f.CreatedAt}, {"valid_from", f.ValidFrom}, {"valid_to", f.ValidTo}, {"last_confirmed", f.LastConfirmed}} {
		if err := memory.CheckTime(path+"."+t.name, t.at); err != nil {
			return err
		}
	}
	f.Content, f.SourceError = red.Text(f.Content), red.Text(f.SourceError)
	return nil
}

// renameField gives an InputError the field name of the record it came
// from.
func renameField(err error, field string) error {
	if ie, ok := err.(*memory.InputError); ok {
		return &memory.InputError{Field: field, Message: ie.Message}
	}
	return err
}
