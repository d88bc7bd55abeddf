package memory

import (
	"bytes"
	"testing"
)

func TestUnquotedReason(t *testing.T) {
	tests := []struct{ in, want string }{
		{"extracted from thread t", "extracted from thread t"},
		{`stated again by t as "Keeps the key under the mat"; the more specific wording is kept`,
			"stated again by t (wording removed when the fact was forgotten)"},
		{`reworded by the consolidation pass, merging fact_1 (was "old wording")`,
			"reworded by the consolidation pass, merging fact_1 (wording removed when the fact was forgotten)"},
		{"", ""},
	}
	for _, tc := range tests {
		if got := unquotedReason(tc.in); got != tc.want {
			t.Errorf("unquotedReason(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

func TestForgottenNeedles(t *testing.T) {
	got := ForgottenNeedles([]string{"", `a "b" <c>`})
	for _, want := range []string{`a "b" <c>`, `a \"b\" <c>`, `a \"b\" \u003cc\u003e`} {
		if !containsBytes(got, []byte(want)) {
			t.Errorf("ForgottenNeedles() = %q, lacks %q", got, want)
		}
	}
	if len(ForgottenNeedles([]string{""})) != 0 {
		t.Errorf("ForgottenNeedles of an empty text is not empty")
	}
}

func containsBytes(list [][]byte, b []byte) bool {
	for _, x := range list {
		if bytes.Equal(x, b) {
			return true
		}
	}
	return false
}
