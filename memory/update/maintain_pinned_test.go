package update

import (
	"slices"
	"testing"
	"time"

	"github.com/mnemo-mcp/mnemo/memory"
)

// TestMaintainKeepsPinned: a fact not stated again for a year fades and
// is retired, unless the person pinned it.
func TestMaintainKeepsPinned(t *testing.T) {
	start := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	d := memory.NewDocument()
	d.Facts = []memory.Fact{
		{ID: "fact_00000001", Content: "Is allergic to peanuts", Category: "context", Confidence: 0.9, CreatedAt: start, Pinned: true},
		{ID: "fact_00000002", Content: "Plays padel on Tuesdays", Category: "context", Confidence: 0.9, CreatedAt: start},
	}
	rep := Maintain(d, MaintainOptions{Now: start.Add(400 * 24 * time.Hour)})
	if !slices.Equal(rep.Retired, []string{"fact_00000002"}) {
		t.Errorf("Retired = %q, want only the unpinned fact", rep.Retired)
	}
	if len(d.Facts) != 1 || d.Facts[0].ID != "fact_00000001" || d.Facts[0].Confidence != 0.9 {
		t.Errorf("facts = %+v, want the pinned fact kept at its confidence", d.Facts)
	}
}
