package memory

import (
	"bytes"
	"testing"
)

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
