package ui

import (
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/mnemo-mcp/mnemo/memory"
)

func TestHeatChart(t *testing.T) {
	cfg := memory.DefaultConfig()
	now := testNow
	sessions := []memory.MidTermSessionView{
		{ID: "session_2", Visits: 4, Interactions: 3, LastVisit: now.Add(-6 * time.Hour), Heat: 7.8},
		{ID: "session_1", Visits: 0, Interactions: 1, LastVisit: now.Add(-72 * time.Hour), Heat: 1.05},
	}
	if c := newHeatChart(nil, cfg, now); c != nil {
		t.Errorf("chart of no sessions = %+v, want nil", c)
	}
	c := newHeatChart(sessions, cfg, now)
	if len(c.Bars) != 2 || !c.Bars[0].OverThreshold || c.Bars[1].OverThreshold || c.Bars[0].W <= c.Bars[1].W {
		t.Errorf("bars = %+v, want the hot session longer and over the threshold", c.Bars)
	}
	if c.ThresholdX <= c.Left || c.ThresholdX >= c.Left+c.Bars[0].W {
		t.Errorf("threshold at x %v, want between the axis and the end of the hot bar (%v)", c.ThresholdX, c.Left+c.Bars[0].W)
	}
	// The hot session was visited 6 h ago: its curve starts then and
	// decays; the cold one, last visited before the window, spans it.
	hot := points(t, c.Curves[0].Past+" "+c.Curves[0].Future)
	if first := hot[0][0]; first <= c.PlotLeft+1 {
		t.Errorf("hot curve starts at x %v, want after the plot's left edge (its last visit)", first)
	}
	for i := 1; i < len(hot); i++ {
		if hot[i][1] < hot[i-1][1] {
			t.Fatalf("heat rises along the curve at point %d: %v", i, hot)
		}
	}
	if c.Curves[0].Future == "" || c.Curves[1].Past == "" {
		t.Errorf("curves = %+v, want a past and a future part", c.Curves)
	}
	if c.XTicks[0].Anchor != "start" || c.XTicks[len(c.XTicks)-1].Anchor != "end" || c.XTicks[len(c.XTicks)-1].Label != "+24 h" {
		t.Errorf("x ticks = %+v", c.XTicks)
	}
}

// points parses polyline points (y grows downwards, so falling heat
// is a rising y).
func points(t *testing.T, s string) [][2]float64 {
	t.Helper()
	var out [][2]float64
	for _, p := range strings.Fields(s) {
		x, y, _ := strings.Cut(p, ",")
		fx, err1 := strconv.ParseFloat(x, 64)
		fy, err2 := strconv.ParseFloat(y, 64)
		if err1 != nil || err2 != nil {
			t.Fatalf("bad point %q", p)
		}
		out = append(out, [2]float64{fx, fy})
	}
	return out
}

func TestThreadTimeline(t *testing.T) {
	if tl := threadTimeline(nil, nil); tl != nil {
		t.Errorf("timeline of no threads = %+v, want nil", tl)
	}
	link := func(p string, kv ...string) string { return p + "?" + strings.Join(kv, "=") }
	tl := threadTimeline([]memory.ListedThread{
		{ID: "b", Turns: 2, First: testNow.Add(-time.Hour), Last: testNow},
		{ID: "a", Turns: 5, First: testNow.Add(-30 * 24 * time.Hour), Last: testNow.Add(-20 * 24 * time.Hour)},
	}, link)
	if len(tl.Rows) != 2 || tl.Rows[1].X1 != tl.Left || tl.Rows[0].X2 <= tl.Rows[1].X2 || tl.Rows[0].Href != "/exchanges?thread=b" {
		t.Errorf("rows = %+v", tl.Rows)
	}
	if tl.Ticks[0].Label != "2026-04-04" || tl.Ticks[4].Anchor != "end" {
		t.Errorf("ticks = %+v", tl.Ticks)
	}
}
