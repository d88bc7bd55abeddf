package ui

import (
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/mnemo-mcp/mnemo/memory"
)

// Charts are computed here and drawn by the templates as inline SVG:
// coordinates in a fixed view box that CSS scales to the page width.

// timeline is one row per thread: from its first to its last exchange.
type timeline struct {
	Width, Height float64
	Left          float64 // where the time axis starts (after the labels)
	Rows          []timelineRow
	Ticks         []tick
	AxisY         float64
}

type timelineRow struct {
	Thread         string
	Href           string
	Y, X1, X2      float64
	TextY          float64
	Turns, Pending int
	First, Last    time.Time
}

type tick struct {
	X      float64
	Label  string
	Anchor string // text-anchor: the end ticks stay inside the chart
}

// maxTimelineRows bounds the rows drawn; the busiest recent threads come
// first in the list the service returns (newest first).
const maxTimelineRows = 30

// threadTimeline draws threads (newest first) as a timeline; link builds
// each row's filter link. No threads, no timeline.
func threadTimeline(threads []memory.ListedThread, link func(string, ...string) string) *timeline {
	if len(threads) == 0 {
		return nil
	}
	if len(threads) > maxTimelineRows {
		threads = threads[:maxTimelineRows]
	}
	const rowH, top = 22.0, 8.0
	tl := &timeline{Width: 800, Left: 170}
	lo, hi := threads[0].First, threads[0].Last
	for _, t := range threads {
		if t.First.Before(lo) {
			lo = t.First
		}
		if t.Last.After(hi) {
			hi = t.Last
		}
	}
	span := hi.Sub(lo)
	if span <= 0 {
		span = time.Hour
		lo = lo.Add(-span / 2)
	}
	x := func(t time.Time) float64 {
		return round1(tl.Left + (tl.Width-tl.Left-12)*float64(t.Sub(lo))/float64(span))
	}
	for i, t := range threads {
		y := top + rowH*float64(i) + rowH/2
		tl.Rows = append(tl.Rows, timelineRow{Thread: t.ID, Href: link("/exchanges", "thread", t.ID), Y: y, TextY: y + 4,
			X1: x(t.First), X2: x(t.Last), Turns: t.Turns, Pending: t.Pending, First: t.First, Last: t.Last})
	}
	tl.AxisY = top + rowH*float64(len(threads)) + 4
	tl.Height = tl.AxisY + 22
	for i := 0; i <= 4; i++ {
		at := lo.Add(span * time.Duration(i) / 4)
		layout := "2006-01-02"
		switch {
		case span < 2*time.Hour:
			layout = "15:04:05"
		case span < 48*time.Hour:
			layout = "01-02 15:04"
		}
		tl.Ticks = append(tl.Ticks, tick{X: x(at), Label: at.UTC().Format(layout), Anchor: tickAnchor(i, 4)})
	}
	return tl
}

// heatChart shows the sessions' heat: a bar per session against the
// analysis threshold, and the heat of the hottest over time — from
// their last visit (or two days back) to a day ahead, as the heat
// formula gives it with the visits and joins they have now.
type heatChart struct {
	Width, Height float64
	Left          float64
	Bars          []heatBar
	ThresholdX    float64
	BarsBottom    float64

	// The curves' plot area.
	PlotTop, PlotBottom, PlotLeft, PlotRight float64
	Curves                                   []heatCurve
	NowX                                     float64
	ThresholdY                               float64
	XTicks                                   []tick
	YTicks                                   []yTick
}

type heatBar struct {
	ID, Summary   string
	Y, TextY, W   float64
	Heat          float64
	OverThreshold bool
}

type heatCurve struct {
	ID       string
	Class    string
	Past     string // polyline points up to now
	Future   string // from now on
	Analyzed bool
}

type yTick struct {
	Y     float64
	Label string
}

const (
	maxHeatBars   = 12
	maxHeatCurves = 5
)

// newHeatChart draws sessions (hottest first); nil without sessions.
func newHeatChart(sessions []memory.MidTermSessionView, cfg memory.Config, now time.Time) *heatChart {
	if len(sessions) == 0 {
		return nil
	}
	w := memory.HeatWeights{Alpha: cfg.MidTermHeatAlpha, Beta: cfg.MidTermHeatBeta, Gamma: cfg.MidTermHeatGamma, Tau: cfg.MidTermHeatTau}
	c := &heatChart{Width: 800, Left: 120}
	bars := sessions[:min(len(sessions), maxHeatBars)]
	scale := cfg.MidTermHeatThreshold
	for _, s := range bars {
		scale = max(scale, s.Heat)
	}
	scale *= 1.1
	const barH, top = 20.0, 6.0
	bx := func(h float64) float64 { return round1((c.Width - c.Left - 50) * h / scale) }
	for i, s := range bars {
		y := top + barH*float64(i)
		c.Bars = append(c.Bars, heatBar{ID: s.ID, Summary: s.Summary, Y: y + 3, TextY: y + 15, W: max(bx(s.Heat), 1), Heat: s.Heat,
			OverThreshold: s.Heat >= cfg.MidTermHeatThreshold})
	}
	c.ThresholdX = round1(c.Left + bx(cfg.MidTermHeatThreshold))
	c.BarsBottom = top + barH*float64(len(bars)) + 4

	from, to := now.Add(-48*time.Hour), now.Add(24*time.Hour)
	c.PlotLeft, c.PlotRight = c.Left, c.Width-20
	c.PlotTop = c.BarsBottom + 36
	c.PlotBottom = c.PlotTop + 180
	c.Height = c.PlotBottom + 26
	px := func(t time.Time) float64 {
		return round1(c.PlotLeft + (c.PlotRight-c.PlotLeft)*float64(t.Sub(from))/float64(to.Sub(from)))
	}
	yMax := cfg.MidTermHeatThreshold
	curves := sessions[:min(len(sessions), maxHeatCurves)]
	for _, s := range curves {
		yMax = max(yMax, heatAt(s, w, s.LastVisit))
	}
	yMax *= 1.15
	py := func(h float64) float64 {
		return round1(c.PlotBottom - (c.PlotBottom-c.PlotTop)*min(h, yMax)/yMax)
	}
	c.NowX = px(now)
	c.ThresholdY = py(cfg.MidTermHeatThreshold)
	const steps = 48
	for i, s := range curves {
		start := from
		if s.LastVisit.After(start) {
			start = s.LastVisit
		}
		var past, future []string
		for k := 0; k <= steps; k++ {
			t := from.Add(to.Sub(from) * time.Duration(k) / steps)
			if t.Before(start) {
				continue
			}
			pt := strconv.FormatFloat(px(t), 'f', 1, 64) + "," + strconv.FormatFloat(py(heatAt(s, w, t)), 'f', 1, 64)
			switch {
			case t.Before(now):
				past = append(past, pt)
			case t.After(now):
				future = append(future, pt)
			}
		}
		nowPt := strconv.FormatFloat(px(now), 'f', 1, 64) + "," + strconv.FormatFloat(py(heatAt(s, w, now)), 'f', 1, 64)
		if !start.After(now) {
			past = append(past, nowPt)
			future = append([]string{nowPt}, future...)
		}
		c.Curves = append(c.Curves, heatCurve{ID: s.ID, Class: "s" + strconv.Itoa(i), Past: strings.Join(past, " "), Future: strings.Join(future, " "),
			Analyzed: s.Analyzed == len(s.Pages) && len(s.Pages) > 0})
	}
	for i := 0; i <= 3; i++ {
		t := from.Add(to.Sub(from) * time.Duration(i) / 3)
		c.XTicks = append(c.XTicks, tick{X: px(t), Label: relHours(t.Sub(now)), Anchor: tickAnchor(i, 3)})
	}
	for i := 0; i <= 4; i++ {
		h := yMax * float64(i) / 4
		c.YTicks = append(c.YTicks, yTick{Y: py(h), Label: strconv.FormatFloat(h, 'f', 1, 64)})
	}
	return c
}

// heatAt is the session's heat at t with its present counts.
func heatAt(s memory.MidTermSessionView, w memory.HeatWeights, t time.Time) float64 {
	m := memory.MidTermSession{Visits: s.Visits, Interactions: s.Interactions, LastVisit: s.LastVisit}
	return m.Heat(t, w)
}

// tickAnchor keeps the first and last of n+1 tick labels inside the chart.
func tickAnchor(i, n int) string {
	switch i {
	case 0:
		return "start"
	case n:
		return "end"
	}
	return "middle"
}

func relHours(d time.Duration) string {
	h := int(math.Round(d.Hours()))
	switch {
	case h == 0:
		return "now"
	case h > 0:
		return "+" + strconv.Itoa(h) + " h"
	}
	return strconv.Itoa(h) + " h"
}

func round1(f float64) float64 { return math.Round(f*10) / 10 }
