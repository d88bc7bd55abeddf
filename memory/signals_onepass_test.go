package memory

import (
	"math/rand/v2"
	"regexp"
	"strings"
	"testing"
)

// signalPieces are the words of signals.json's patterns, in two cases,
// with separators: random texts of them reach every pattern.
func signalPieces() []string {
	seen := map[string]bool{}
	pieces := []string{" ", " ", ", ", ". ", "! ", "’s ", "'s ", "\n", "，", "。", "ſ", "\u212a"}
	for _, w := range regexp.MustCompile(`[A-Za-z]+|\p{Han}+`).FindAllString(string(signalsJSON), -1) {
		if !seen[w] && w != "s" && w != "w" && w != "W" && w != "b" && w != "i" {
			seen[w] = true
			pieces = append(pieces, w, strings.ToUpper(w))
		}
	}
	return append(pieces, "i", "I")
}

// TestDetectOnePassEqualsEveryPattern: Detect, which runs only the
// patterns whose literals a message holds, gives what running every
// pattern gives, on random messages made of the patterns' own words.
func TestDetectOnePassEqualsEveryPattern(t *testing.T) {
	pieces := signalPieces()
	sp := defaultSignals()
	r := rand.New(rand.NewPCG(6, 1))
	var corrections, reinforcements int
	for range 40000 {
		msgs := randomSignalMessages(r, pieces)
		got, want := sp.detect(msgs, true), sp.detect(msgs, false)
		if got != want {
			t.Fatalf("Detect(%q) = %+v, every pattern gives %+v", msgs, got, want)
		}
		if want.Correction {
			corrections++
		}
		if want.Reinforcement {
			reinforcements++
		}
	}
	if corrections < 500 || reinforcements < 500 {
		t.Errorf("only %d corrections and %d reinforcements in the random messages: the pieces no longer reach the patterns", corrections, reinforcements)
	}
}

func randomSignalMessages(r *rand.Rand, pieces []string) []Message {
	var msgs []Message
	for range 1 + r.IntN(2) {
		var b strings.Builder
		for range r.IntN(9) {
			b.WriteString(pieces[r.IntN(len(pieces))])
			if r.IntN(2) == 0 {
				b.WriteByte(' ')
			}
		}
		msgs = append(msgs, Message{Role: RoleUser, Content: b.String()})
	}
	return msgs
}

// FuzzDetectOnePass: the gated Detect equals every pattern run, on any
// message.
func FuzzDetectOnePass(f *testing.F) {
	for _, s := range []string{"no, I use vim", "That’s wrong", "not only this but also that, try again", "是不是不对", "perfect!"} {
		f.Add(s)
	}
	sp := defaultSignals()
	f.Fuzz(func(t *testing.T, s string) {
		msgs := []Message{{Role: RoleUser, Content: s}}
		if got, want := sp.detect(msgs, true), sp.detect(msgs, false); got != want {
			t.Fatalf("Detect(%q) = %+v, every pattern gives %+v", s, got, want)
		}
	})
}
