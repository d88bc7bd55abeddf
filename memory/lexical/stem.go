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

// stem strips common English inflections from a lowercase ASCII word, in
// place. It is deliberately light, in the spirit of the S-stemmer and
// Porter's first step: plurals (-s, -es, -ies), -ing, -ed, -ly and -ness,
// then a final "y" becomes "i" and a final "e" is dropped, so that "study",
// "studies", "studied" and "studying" all become "studi", and "code",
// "codes" and "coding" all become "cod". It never leaves fewer than three
// letters and leaves words ending in -ss, -us and -is ("class", "bus",
// "analysis") alone.
func stem(w []byte) []byte {
	if len(w) < 3 {
		return w
	}
	w = stemPlural(w)
	w = stemSuffix(w)
	n := len(w)
	switch {
	case n >= 4 && w[n-1] == 'y' && !isVowel(w[n-2]):
		w[n-1] = 'i'
	case n >= 4 && w[n-1] == 'e' && w[n-2] != 'e':
		w = w[:n-1]
	}
	return w
}

func stemPlural(w []byte) []byte {
	n := len(w)
	switch {
	case n >= 5 && hasSuffix(w, "ies"):
		return append(w[:n-3], 'y')
	case n >= 4 && w[n-1] == 's' && w[n-2] != 's' && w[n-2] != 'u' && w[n-2] != 'i':
		return w[:n-1]
	}
	return w
}

func stemSuffix(w []byte) []byte {
	n := len(w)
	switch {
	case hasSuffix(w, "ness"):
		if n-4 >= 3 {
			return w[:n-4]
		}
	case hasSuffix(w, "ly"):
		if n-2 >= 4 {
			return w[:n-2]
		}
	case hasSuffix(w, "ing"):
		return stemVerb(w, w[:n-3])
	case hasSuffix(w, "ied"):
		if n >= 5 {
			return append(w[:n-3], 'y')
		}
		return w[:n-1] // "died" → "die"
	case hasSuffix(w, "ed") && !hasSuffix(w, "eed"):
		return stemVerb(w, w[:n-2])
	}
	return w
}

// stemVerb returns the stem of w once -ing or -ed is removed, leaving base.
// A stem needs a vowel; "running" loses its doubled consonant. Two-letter
// stems keep or regain their "e": "using" and "used" → "use", "going" → "go".
func stemVerb(w, base []byte) []byte {
	switch {
	case !hasVowel(base):
		return w
	case len(base) >= 3:
		if n := len(base); n >= 4 && base[n-1] == base[n-2] && !isVowel(base[n-1]) && !strings.ContainsRune("lsz", rune(base[n-1])) {
			return base[:n-1]
		}
		return base
	case len(base) == 2 && !isVowel(base[1]):
		return append(base, 'e')
	case len(base) == 2:
		return base
	}
	return w
}

func hasSuffix(w []byte, s string) bool {
	return len(w) >= len(s) && string(w[len(w)-len(s):]) == s
}

func isVowel(c byte) bool {
	switch c {
	case 'a', 'e', 'i', 'o', 'u', 'y':
		return true
	}
	return false
}

func hasVowel(w []byte) bool {
	for _, c := range w {
		if isVowel(c) {
			return true
		}
	}
	return false
}
