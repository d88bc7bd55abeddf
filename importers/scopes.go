package importers

import (
	"fmt"
	"strings"
	"time"

	"github.com/mnemo-mcp/mnemo/memory"
)

// targetScope is the scope of a single-scope import: --user (else
// fallback, else the configured user) and --agent.
func (o *Options) targetScope(fallback string) (memory.Scope, error) {
	sc := memory.Scope{UserID: o.User, AgentName: o.Agent}
	if sc.UserID == "" {
		sc.UserID = fallback
	}
	if sc.UserID == "" {
		sc.UserID = o.DefaultUser
	}
	return sc, sc.Validate()
}

// parseLooseTime parses the timestamps other memory systems write:
// RFC 3339 or "YYYY-MM-DD HH:MM:SS" (taken as UTC); empty is the zero
// time. Whether memory keeps the time is the engine's rule.
func parseLooseTime(s string) (time.Time, error) {
	if strings.TrimSpace(s) == "" {
		return time.Time{}, nil
	}
	t, err := memory.ParseTime(s)
	if err != nil {
		return time.Time{}, fmt.Errorf("%q is not a time like 2026-06-11 16:47:59 or 2026-06-11T16:47:59Z", s)
	}
	return t, nil
}

// creditImport records that an import brought each fact the document's
// history does not know (another tool's memory has no history), so the
// fact history says who brought it. A mnemo export keeps its own history
// and is imported as it was.
func creditImport(doc *memory.Document, at time.Time) {
	known := make(map[string]bool, len(doc.FactEvents))
	for _, e := range doc.FactEvents {
		known[e.FactID] = true
	}
	for _, list := range [][]memory.Fact{doc.Facts, doc.Knowledge, doc.AssistantKnowledge} {
		for _, f := range list {
			if !known[f.ID] {
				doc.AddFactEvent(memory.FactEvent{FactID: f.ID, Event: memory.FactCreated, At: at, Source: f.Source,
					Reason: "imported", Content: f.Content, Actor: memory.ActorImport})
			}
		}
	}
}

// plural formats n with a noun, plural when n is not 1.
func plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}
