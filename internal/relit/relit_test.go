package relit

import (
	"math/rand/v2"
	"regexp"
	"strings"
	"testing"
)

var testPatterns = []string{
	`\bsk-(?:proj-|svcacct-|admin-)?[A-Za-z0-9_-]{20,}`,
	`(?i)\bthat(?:'s|’s| is| was) (?:wrong|incorrect)\b`,
	`(?i)\b(?:AccountKey|SharedAccessKey)=([A-Za-z0-9+/=]{20,})`,
	`\b(?:AKIA|ASIA|ABIA|ACCA)[0-9A-Z]{16}\b`,
	`(?i)^\W*no\b[,.!]*\s+(?:i|we)\s+(?:use|said)\b`,
	`不对`,
	`(?i)secret`,
	`x*`,
	`(?i)(?:ab)+c{2,3}`,
	`(?i)\bnot\s+(?:[\w.+#-]+\s+){0,2}?[\w.+#-]+,?\s+but\s+[\w.+#-]+`,
	`(?i)^\W*no\b[,.!]*\s+(?:it|that)(?:'s| is)\s`,
	`^no_`,
	`(?i)\s+just\s+(?:like\s+)?(?:that|this)\b`,
	`\bab\b|x\Bcd`,
}

// pieces are the patterns' own pieces, and others, for random texts.
var pieces = []string{"sk-", "proj-", "abcdefghij", "ABCDEFGHIJKLMNOP0123", "that", "THAT", "’s", " is", " wrong",
	"AccountKey", "=", "SHAREDaccesskey", "AKIA", "no", ", ", "we", " use", "不对", "secret", "ſecret", "K", "ab", "AB", "c", "C", " ", "\n",
	"not", "NOT", "note", "cannot", "but", "butter", "just", "adjust", "like", "this", "no_", "_", "9", "é", "-- ", "!", "\t", "x", "cd", "'s"}

// openTests are gates' answers on texts, checked by TestOpen.
var openTests = []struct {
	pattern, text string
	open          bool
}{
	{`\bsk-[a-z]{3}`, "my key is sk-abc", true},
	{`\bsk-[a-z]{3}`, "nothing here", false},
	{`(?i)secret`, "the SeCrEt", true},
	{`(?i)secret`, "the sacret", false},
	{`(?i)secret`, "the ſecret", true}, // not ASCII: always open
	{`不对`, "这不对", true},
	{`不对`, "这对", false},
	{`x*`, "", true},
	{`(?i)(?:AccountKey|SharedAccessKey)=`, "sharedaccesskey=", true},
	{`(?i)(?:AccountKey|SharedAccessKey)=`, "account key=", false},
	// What stands next to a literal narrows where it counts.
	{`(?i)\bnot\s+x`, "a note", false},
	{`(?i)\bnot\s+x`, "cannot go", false},
	{`(?i)\bnot\s+x`, "not x", true},
	{`(?i)\bnot\s+x`, "Not\tx", true},
	{`(?i)\bnot\s+x`, "note, not x", true},
	{`(?i)\bnot\b`, "not", true},
	{`(?i)\bnot\b`, "not_", false},
	{`(?i)\bnot\b`, "é not é", true},
	{`\s+just\s`, "adjust this", false},
	{`\s+just\s`, "a just b", true},
	{`(?i)^\W*no\b`, "(note 1) no", false},
	{`(?i)^\W*no\b`, "-- No!", true},
	{`(?i)^\W*no\b`, "a no", false},
	{`(?i)^no\b`, "a no", false},
	{`(?i)^no\b`, "no", true},
	// Every piece of a concatenation must be there.
	{`(?i)\bnot\s+\w+\s+but\s`, "not this", false},
	{`(?i)\bnot\s+\w+\s+but\s`, "not this but ", true},
}

func TestOpen(t *testing.T) {
	for _, tt := range openTests {
		t.Run(tt.pattern+"/"+tt.text, func(t *testing.T) {
			if got := Required(regexp.MustCompile(tt.pattern)).Open(Prepare(tt.text)); got != tt.open {
				t.Errorf("Open(%q) = %v, want %v", tt.text, got, tt.open)
			}
		})
	}
}

// TestNeverHidesAMatch: over random texts made of the patterns' own
// pieces, a closed gate never stands before a match.
func TestNeverHidesAMatch(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for _, p := range testPatterns {
		re := regexp.MustCompile(p)
		g := Required(re)
		for range 20000 {
			var b strings.Builder
			for range r.IntN(12) {
				b.WriteString(pieces[r.IntN(len(pieces))])
			}
			s := b.String()
			if re.MatchString(s) && !g.Open(Prepare(s)) {
				t.Fatalf("pattern %q matches %q but its gate is closed", p, s)
			}
		}
	}
}

func FuzzGate(f *testing.F) {
	for _, s := range []string{"sk-abcdefghijklmnopqrstuvwxyz", "That's wrong", "AccountKey=abcdefghijklmnopqrstuvwxyz", "no, I use vim"} {
		f.Add(s)
	}
	var res []*regexp.Regexp
	var gates []Gate
	for _, p := range testPatterns {
		re := regexp.MustCompile(p)
		res, gates = append(res, re), append(gates, Required(re))
	}
	set := NewSet(gates)
	f.Fuzz(func(t *testing.T, s string) {
		pt := Prepare(s)
		open := set.Scan(pt)
		for i, re := range res {
			if re.MatchString(s) && !gates[i].Open(pt) {
				t.Fatalf("pattern %q matches %q but its gate is closed", re, s)
			}
			if open.Has(i) != gates[i].Open(pt) {
				t.Fatalf("pattern %q, text %q: the set's scan says open %v, the gate %v", re, s, open.Has(i), gates[i].Open(pt))
			}
		}
	})
}

// TestSetAgreesWithGates: one scan of a Set says, for every gate, what
// its Open says, on the table of TestOpen and on random texts of the
// patterns' pieces.
func TestSetAgreesWithGates(t *testing.T) {
	patterns := append([]string(nil), testPatterns...)
	texts := []string{""}
	for _, tt := range openTests {
		patterns = append(patterns, tt.pattern)
		texts = append(texts, tt.text)
	}
	var gates []Gate
	for _, p := range patterns {
		gates = append(gates, Required(regexp.MustCompile(p)))
	}
	set := NewSet(gates)
	r := rand.New(rand.NewPCG(3, 4))
	for range 20000 {
		var b strings.Builder
		for range r.IntN(12) {
			b.WriteString(pieces[r.IntN(len(pieces))])
		}
		texts = append(texts, b.String())
	}
	for _, s := range texts {
		pt := Prepare(s)
		open := set.Scan(pt)
		for i, g := range gates {
			if open.Has(i) != g.Open(pt) {
				t.Fatalf("pattern %q, text %q: the set's scan says open %v, the gate %v", patterns[i], s, open.Has(i), g.Open(pt))
			}
		}
	}
}
