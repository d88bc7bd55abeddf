package testutil

import (
	"fmt"
	"strings"
	"testing"
)

// recordingTB records what SkipMissing asks of a test.
type recordingTB struct {
	testing.TB
	fatal, skip string
}

func (r *recordingTB) Helper()           {}
func (r *recordingTB) Fatal(args ...any) { r.fatal = fmt.Sprint(args...) }
func (r *recordingTB) Skip(args ...any)  { r.skip = fmt.Sprint(args...) }

func TestSkipMissing(t *testing.T) {
	reset := func() {
		missing.Lock()
		missing.by = map[string]*missingThing{}
		missing.Unlock()
	}
	reset()
	t.Cleanup(reset)

	t.Setenv("CI", "")
	if got := SkipSummary(); got != "" {
		t.Fatalf("SkipSummary before any skip = %q, want none", got)
	}
	for range 3 {
		r := &recordingTB{}
		SkipMissing(r, "PostgreSQL", "no initdb found", "install PostgreSQL 15 or later")
		if r.fatal != "" || !strings.Contains(r.skip, "no initdb found") || !strings.Contains(r.skip, "install PostgreSQL 15 or later") {
			t.Errorf("locally: fatal %q, skip %q; want a skip saying why and how", r.fatal, r.skip)
		}
	}
	SkipMissing(&recordingTB{}, "Chromium", "no chromium on PATH", "apt-get install -y chromium")
	line := SkipSummary()
	for _, w := range []string{"3 test(s) needing PostgreSQL", "no initdb found", "install PostgreSQL 15 or later", "1 test(s) needing Chromium", "apt-get install -y chromium"} {
		if !strings.Contains(line, w) {
			t.Errorf("summary %q does not say %q", line, w)
		}
	}
	if strings.Contains(line, "\n") {
		t.Errorf("summary %q is more than one line", line)
	}

	t.Setenv("CI", "true")
	r := &recordingTB{}
	SkipMissing(r, "PostgreSQL", "no initdb found", "install it")
	if r.fatal == "" || !strings.Contains(r.fatal, "CI=true") {
		t.Errorf("under CI=true: fatal %q, skip %q; want a failure", r.fatal, r.skip)
	}
}
