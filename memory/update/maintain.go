package update

import (
	"fmt"
	"math"
	"time"

	"github.com/mnemo-mcp/mnemo/memory"
)

// FactRetireBelow is the confidence below which a decaying fact is
// retired. It is well below fact_confidence_threshold (0.7 by default):
// a fact saved at 0.9 and never confirmed again is retired about
// fact_stale_after × 1.8 after it was last stated (180 days + 143 days
// by default).
const FactRetireBelow = 0.3

// staleHalfLife is how long a stale fact takes to lose half its
// confidence: half of fact_stale_after.
func staleHalfLife(staleAfter time.Duration) time.Duration { return staleAfter / 2 }

// MaintainOptions are the rules of one maintenance pass.
type MaintainOptions struct {
	Now time.Time
	// StaleAfter is fact_stale_after; DefaultFactStaleAfter when 0.
	StaleAfter time.Duration
	// Relevant maps a correction's id to when it was last retrieved for a
	// query it matched; later than its confirmation, it confirms it.
	Relevant map[string]time.Time
	// Source is recorded in the events.
	Source string
}

// Maintain runs one maintenance pass over d in place: consolidation, then
// staleness. Decay is counted from d.MaintainedAt, so passes may run at
// any rate; it sets d.MaintainedAt to opt.Now.
func Maintain(d *memory.Document, opt MaintainOptions) memory.MaintainReport {
	if opt.StaleAfter <= 0 {
		opt.StaleAfter = memory.DefaultFactStaleAfter
	}
	if opt.Source == "" {
		opt.Source = memory.SourceMaintenance
	}
	now := opt.Now
	rep := memory.MaintainReport{Merged: Consolidate(d, now, opt.Source).Merged}
	if len(rep.Merged) == 0 {
		rep.Merged = nil
	}
	half := staleHalfLife(opt.StaleAfter).Hours()
	kept := d.Facts[:0]
	for _, f := range d.Facts {
		if at, ok := opt.Relevant[f.ID]; ok && f.Category == memory.CategoryCorrection && at.After(f.Confirmed()) && !at.After(now) {
			f.LastConfirmed = at
		}
		staleFrom := f.Confirmed().Add(opt.StaleAfter)
		from := staleFrom
		if d.MaintainedAt.After(from) {
			from = d.MaintainedAt
		}
		if !now.After(from) || f.Pinned {
			// A pinned fact holds until the person unpins it: it does
			// not fade for want of being said again.
			kept = append(kept, f)
			continue
		}
		old := f.Confidence
		f.Confidence = old * math.Exp2(-now.Sub(from).Hours()/half)
		if f.Confidence < FactRetireBelow {
			rep.Retired = append(rep.Retired, f.ID)
			d.RetiredFacts = archive(d.RetiredFacts, f, MaxRetiredFacts)
			d.AddFactEvent(memory.FactEvent{FactID: f.ID, Event: memory.FactRetired, At: now, Source: opt.Source, Content: f.Content, Confidence: Round4(f.Confidence),
				Reason: fmt.Sprintf("not confirmed since %s: confidence fell below %v; restorable", f.Confirmed().Format(time.DateOnly), FactRetireBelow)})
			continue
		}
		rep.Decayed = append(rep.Decayed, f.ID)
		if math.Floor(f.Confidence*10) < math.Floor(old*10) {
			// One event per tenth lost, not one per pass.
			d.AddFactEvent(memory.FactEvent{FactID: f.ID, Event: memory.FactDecayed, At: now, Source: opt.Source, Content: f.Content, Confidence: Round4(f.Confidence),
				Reason: fmt.Sprintf("not confirmed since %s", f.Confirmed().Format(time.DateOnly))})
		}
		kept = append(kept, f)
	}
	clear(d.Facts[len(kept):])
	d.Facts = kept
	d.MaintainedAt = now
	return rep
}

func Round4(x float64) float64 {
	return float64(int64(x*10000+0.5)) / 10000
}
