package engine

import "testing"

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
