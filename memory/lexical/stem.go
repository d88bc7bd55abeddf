package lexical

import "strings"

// Word classes in lexicon.
const (
	_ = iota
	stopWord
	noStem
)

// lexicon marks English stop words (function words, pronouns and their
// contractions with the apostrophe dropped) and the few words the stemmer
// would merge with an unrelated word.
var lexicon = func() map[string]uint8 {
	m := make(map[string]uint8)
	for _, w := range strings.Fields(`
		a about above after again against all also am an and any are as at be
		because been before being below between both but by can could did do
		does doing down during each either else ever few for from further get
		got had has have having he her here hers herself him himself his how i
		if in into is it its itself just me more most my myself neither no nor
		not now of off on once only or other others our ours ourselves out over
		own same she should so some such than that the their theirs them
		themselves then there these they this those though through to too under
		until up upon very was we were what when where whether which while who
		whom whose why will with would yes yet you your yours yourself
		yourselves
		aint arent cant couldnt didnt doesnt dont hadnt hasnt havent hed hes
		hows im isnt ive lets mightnt mustnt neednt shant shes shouldnt thats
		theres theyd theyll theyre theyve wasnt weve werent whats whens wheres
		whos whys wont wouldnt youd youll youre youve`) {
		m[w] = stopWord
	}
	for _, w := range strings.Fields(`news business witness lens always macos ios`) {
		m[w] = noStem
	}
	return m
}()

// lexiconShape[n] has bit i set when a word of n bytes starting with the
// letter 'a'+i is in lexicon: most words need no map lookup.
var lexiconShape = func() (shape [16]uint32) {
	for w := range lexicon {
		if len(w) >= len(shape) || w[0] < 'a' || w[0] > 'z' {
			panic("lexical: lexicon word " + w + " does not fit lexiconShape")
		}
		shape[len(w)] |= 1 << (w[0] - 'a')
	}
	return shape
}()
