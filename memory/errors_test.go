package memory

import (
	"fmt"
	"strings"
	"testing"
)

func TestInvalidDoesNotEchoBigArguments(t *testing.T) {
	big := strings.Repeat("x", 200<<10)
	err := Invalid("now", "%q is not a time; use RFC 3339", big)
	want := `now: "` + strings.Repeat("x", echoRunes) + `"… (204800 bytes) is not a time; use RFC 3339`
	if got := err.Error(); got != want {
		t.Errorf("Invalid() = %.200q, want %q", got, want)
	}
	small := Invalid("category", "%q is not a category; use one of %s", "colour", "a, b")
	if got, want := small.Error(), `category: "colour" is not a category; use one of a, b`; got != want {
		t.Errorf("Invalid() = %q, want %q", got, want)
	}
	if got, want := fmt.Sprintf("[%s] [%q]", Echo("é"), Echo("é")), `[é] ["é"]`; got != want {
		t.Errorf("Echo() = %q, want %q", got, want)
	}
}
