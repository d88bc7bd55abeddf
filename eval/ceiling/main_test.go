package main

import (
	"math"
	"strings"
	"testing"
)

// TestConversation checks the ceiling on a small conversation: an evidence
// turn counts when its exchange holds a searched word other than a
// speaker's name, or (own or before) when the exchange before it does.
func TestConversation(t *testing.T) {
	by := map[string]*tally{"overall": {}}
	top := map[string][]string{"tiny\x00What pet did Ann adopt?": {"D1:1", "D1:2"}}
	if err := conversation("testdata/tiny.json", top, by); err != nil {
		t.Fatal(err)
	}
	want := map[string]tally{
		// "pet" reaches "puppy" (a category member); the answer about
		// the puppy is in the exchange after the one that names it;
		// "What has Bo done lately?" holds no word but names.
		"overall":    {n: 3, own: 1, prev: 2, reached: 1, reachedOwn: 1},
		"single-hop": {n: 2, own: 1, prev: 2, reached: 1, reachedOwn: 1},
		"multi-hop":  {n: 1},
	}
	for name, w := range want {
		got := by[name]
		if got == nil {
			t.Errorf("%s: no tally", name)
			continue
		}
		for _, f := range []struct {
			field     string
			got, want float64
		}{{"n", got.n, w.n}, {"own", got.own, w.own}, {"prev", got.prev, w.prev}, {"reached", got.reached, w.reached}, {"reachedOwn", got.reachedOwn, w.reachedOwn}} {
			if math.Abs(f.got-f.want) > 1e-9 {
				t.Errorf("%s %s = %v, want %v", name, f.field, f.got, f.want)
			}
		}
	}
}

// TestReport checks the table: the run's columns only with a run, and
// the shares as fractions of the questions.
func TestReport(t *testing.T) {
	by := map[string]*tally{
		"overall":   {n: 4, own: 3, prev: 4, reached: 2, reachedOwn: 1.5},
		"multi-hop": {n: 4, own: 3, prev: 4, reached: 2, reachedOwn: 1.5},
	}
	var withRun, without strings.Builder
	report(&withRun, by, true)
	report(&without, by, false)
	want := "overall          4     0.750          1.000    0.500          0.500\n"
	if !strings.Contains(withRun.String(), want) || !strings.Contains(withRun.String(), "multi-hop") {
		t.Errorf("report with a run =\n%s\nwant a line %q and one for multi-hop", withRun.String(), want)
	}
	if strings.Contains(without.String(), "run R@10") || !strings.Contains(without.String(), "overall          4     0.750          1.000\n") {
		t.Errorf("report without a run =\n%s", without.String())
	}
}
