// Package chatwords generates conversational text for benchmarks: words
// of a small everyday vocabulary, the first ones more often, so that every
// word is common as in chat. mnemo bench's exchanges and the lexical
// package's chat corpus draw from it.
//
// Files:
//
//	chatwords.go  Words and Text
package chatwords

import (
	"math/rand/v2"
	"strings"
)

// Words is the vocabulary, most frequent first.
var Words = strings.Fields(`i you we the a to and of in is it that for on with my this was have
	be are not at but so do can what how when where why will would like just about get know think
	go trip kyoto paris berlin coffee tea dog cat garden guitar piano running marathon yoga book
	novel painting photo camera wedding birthday sister brother mother father friend job interview
	manager project deadline release database migration server bug test deploy python golang rust
	recipe pasta curry vegan dinner lunch weekend holiday beach mountain hiking camping concert
	movie series music band album school class exam teacher student university degree research
	paper conference talk meeting budget salary house apartment rent move city car bike train
	doctor dentist gym swimming tennis football chess podcast newsletter blog garden tomato basil`)

// Text returns n words of Words drawn with r, separated by spaces;
// squaring a uniform draw skews it toward the head of the list.
func Text(r *rand.Rand, n int) string {
	var b strings.Builder
	for i := range n {
		if i > 0 {
			b.WriteByte(' ')
		}
		f := r.Float64()
		b.WriteString(Words[int(f*f*float64(len(Words)))])
	}
	return b.String()
}
