package cli

import (
	"bytes"
	"os"
	"strings"
	"testing"
	"time"
)

// TestIsTerminal: /dev/null is a character device but no terminal; pipes,
// files and buffers are not terminals either.
func TestIsTerminal(t *testing.T) {
	null, err := os.Open(os.DevNull)
	if err != nil {
		t.Fatal(err)
	}
	defer null.Close()
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	defer w.Close()
	file, err := os.Create(t.TempDir() + "/f")
	if err != nil {
		t.Fatal(err)
	}
	defer file.Close()
	for name, f := range map[string]any{"/dev/null": null, "pipe": w, "file": file, "buffer": &bytes.Buffer{}, "nil": nil} {
		if isTerminal(f) {
			t.Errorf("isTerminal(%s) = true, want false", name)
		}
	}
}

// TestServeDevNullStdin: serve with stdin from /dev/null reads EOF and
// stops without the warning meant for a person at a terminal.
func TestServeDevNullStdin(t *testing.T) {
	null, err := os.Open(os.DevNull)
	if err != nil {
		t.Fatal(err)
	}
	defer null.Close()
	var out, errOut bytes.Buffer
	getenv := env{"MNEMO_DATA_DIR": t.TempDir()}.get
	if code := Run(t.Context(), []string{"serve"}, getenv, null, &out, &errOut); code != exitOK {
		t.Fatalf("serve < /dev/null = %d\n%s", code, errOut.String())
	}
	if strings.Contains(errOut.String(), "terminal") {
		t.Errorf("serve < /dev/null warned about a terminal:\n%s", errOut.String())
	}
	if out.Len() != 0 {
		t.Errorf("serve < /dev/null wrote %q on stdout", out.String())
	}
}

func TestProgress(t *testing.T) {
	// Not a terminal: nothing, whatever happens.
	var buf bytes.Buffer
	p := newProgress(&buf, "import", 10)
	for i := range 11 {
		p.set(i)
	}
	p.done()
	if buf.Len() != 0 {
		t.Errorf("progress on a non-terminal wrote %q", buf.String())
	}

	// On a terminal (forced here): redrawn at most every progressEvery,
	// always at the end, and cleared by done.
	buf.Reset()
	clock := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	p = &progress{w: &buf, on: true, label: "add_memory", total: 4, now: func() time.Time { return clock }}
	p.set(0)
	p.set(1) // too soon: skipped
	clock = clock.Add(progressEvery)
	p.set(2)
	p.set(4) // the last step: always drawn
	p.done()
	want := "\r\x1b[Kadd_memory 0/4 (0%)\r\x1b[Kadd_memory 2/4 (50%)\r\x1b[Kadd_memory 4/4 (100%)\r\x1b[K"
	if buf.String() != want {
		t.Errorf("progress wrote %q, want %q", buf.String(), want)
	}
}
