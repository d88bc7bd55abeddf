package lexical

// stem returns the Porter2 (Snowball English) stem of w, a lowercase word
// of ASCII letters, reusing w's storage: "deployment" and "deploying"
// become "deploy", "migration" and "migrating" "migrat", "allergies" and
// "allergy" "allergi". It follows the algorithm published at
// snowballstem.org (as of Snowball 3), checked against its vocabulary in
// testdata; the apostrophe handling is left out, since the tokenizer drops
// apostrophes first.
func stem(w []byte) []byte {
	if len(w) <= 2 {
		return w
	}
	if len(w) <= maxExceptionLen {
		if s, ok := stemExceptions[string(w)]; ok {
			if s == "" {
				return w
			}
			return append(w[:0], s...)
		}
	}
	// An upper-case 'Y' is a y used as a consonant: at the start of the
	// word or after a vowel.
	yFound := false
	for i := range w {
		if w[i] == 'y' && (i == 0 || isVowel(w[i-1])) {
			w[i], yFound = 'Y', true
		}
	}
	s := porter{w: w}
	s.markRegions()
	s.step1a()
	s.step1b()
	s.step1c()
	s.step2()
	s.step3()
	s.step4()
	s.step5()
	w = s.w
	if yFound {
		for i := range w {
			if w[i] == 'Y' {
				w[i] = 'y'
			}
		}
	}
	return w
}

// stemExceptions are the words stemmed by a table rather than by rule;
// "" means the word is its own stem.
var stemExceptions = map[string]string{
	"skis": "ski", "skies": "sky",
	"idly": "idl", "gently": "gentl", "ugly": "ugli", "early": "earli", "only": "onli", "singly": "singl",
	"sky": "", "news": "", "howe": "", "atlas": "", "cosmos": "", "bias": "", "andes": "",
}

// maxExceptionLen is the length of the longest word in stemExceptions.
const maxExceptionLen = 6

// regionPrefixes are word beginnings after which R1 starts, where the
// general rule would put it too early (generic/general, organ/organic).
var regionPrefixes = []string{"gener", "commun", "arsen", "past", "univers", "later", "emerg", "organ", "inter"}

// porter is a word being stemmed, with the start of its regions R1 and R2.
type porter struct {
	w      []byte
	p1, p2 int
}

func (s *porter) markRegions() {
	n := len(s.w)
	s.p1, s.p2 = n, n
	p1 := -1
	for _, pre := range regionPrefixes {
		if hasPrefix(s.w, pre) {
			p1 = len(pre)
			break
		}
	}
	if p1 < 0 {
		p1 = afterVowelConsonant(s.w, 0)
	}
	s.p1 = p1
	s.p2 = afterVowelConsonant(s.w, p1)
}

// afterVowelConsonant returns the position after the first non-vowel that
// follows a vowel in w[from:], or len(w).
func afterVowelConsonant(w []byte, from int) int {
	for i := from + 1; i < len(w); i++ {
		if !isVowel(w[i]) && isVowel(w[i-1]) {
			return i + 1
		}
	}
	return len(w)
}

func (s *porter) ends(suffix string) bool { return hasSuffix(s.w, suffix) }

// replace replaces the last n bytes of the word by to.
func (s *porter) replace(n int, to string) {
	s.w = append(s.w[:len(s.w)-n], to...)
}

// longest returns the longest of suffixes that ends the word, or "".
func (s *porter) longest(suffixes []string) string {
	best := ""
	last := s.w[len(s.w)-1]
	for _, x := range suffixes {
		if x[len(x)-1] == last && len(x) > len(best) && s.ends(x) {
			best = x
		}
	}
	return best
}

// shortSyllable reports whether the word ends in a short syllable: a
// non-vowel, a vowel and a non-vowel other than w, x and Y; or a vowel then
// a non-vowel forming the whole word; or "past".
func (s *porter) shortSyllable() bool {
	w := s.w
	n := len(w)
	switch {
	case n >= 3 && !isVowel(w[n-1]) && w[n-1] != 'w' && w[n-1] != 'x' && w[n-1] != 'Y' && isVowel(w[n-2]) && !isVowel(w[n-3]):
		return true
	case n == 2 && !isVowel(w[1]) && isVowel(w[0]):
		return true
	}
	return hasSuffix(w, "past")
}

var step1aSuffixes = []string{"sses", "ied", "ies", "us", "ss", "s"}

func (s *porter) step1a() {
	n := len(s.w)
	switch s.longest(step1aSuffixes) {
	case "sses":
		s.replace(4, "ss")
	case "ied", "ies":
		if n > 4 {
			s.replace(3, "i")
		} else {
			s.replace(3, "ie")
		}
	case "s":
		if hasVowel(s.w[:n-2]) {
			s.w = s.w[:n-1]
		}
	}
}

var step1bSuffixes = []string{"eed", "eedly", "ed", "edly", "ing", "ingly"}

func (s *porter) step1b() {
	suffix := s.longest(step1bSuffixes)
	n := len(s.w)
	base := s.w[:n-len(suffix)]
	switch suffix {
	case "":
		return
	case "eed", "eedly":
		if len(base) >= s.p1 && !equalsAny(base, "proc", "exc", "succ") {
			s.replace(len(suffix), "ee")
		}
		return
	case "ing":
		if len(base) == 2 && base[1] == 'y' && !isVowel(base[0]) {
			s.replace(4, "ie") // dying, lying, tying, vying
			return
		}
		if equalsAny(base, "inn", "out", "cann", "herr", "earr", "even") {
			return
		}
	}
	if !hasVowel(base) {
		return
	}
	s.w = base
	n = len(base)
	switch {
	case s.ends("at"), s.ends("bl"), s.ends("iz"):
		s.w = append(s.w, 'e')
	case n >= 2 && s.w[n-1] == s.w[n-2] && isUndoubled(s.w[n-1]):
		if !(n == 3 && (s.w[0] == 'a' || s.w[0] == 'e' || s.w[0] == 'o')) {
			s.w = s.w[:n-1]
		}
	case n == s.p1 && s.shortSyllable():
		s.w = append(s.w, 'e')
	}
}

// isUndoubled reports whether a doubled c at the end of a stem is undone
// ("hopping" → "hop").
func isUndoubled(c byte) bool {
	switch c {
	case 'b', 'd', 'f', 'g', 'm', 'n', 'p', 'r', 't':
		return true
	}
	return false
}

func (s *porter) step1c() {
	n := len(s.w)
	if n >= 3 && (s.w[n-1] == 'y' || s.w[n-1] == 'Y') && !isVowel(s.w[n-2]) {
		s.w[n-1] = 'i'
	}
}

// step2Rules and step3Rules map a suffix to its replacement; "-" marks a
// rule with a further condition, handled in code.
var step2Rules = map[string]string{
	"tional": "tion", "enci": "ence", "anci": "ance", "abli": "able", "entli": "ent",
	"izer": "ize", "ization": "ize", "ational": "ate", "ation": "ate", "ator": "ate",
	"alism": "al", "aliti": "al", "alli": "al", "fulness": "ful", "ousli": "ous", "ousness": "ous",
	"iveness": "ive", "iviti": "ive", "biliti": "ble", "bli": "ble", "ogist": "og", "ogi": "-",
	"fulli": "ful", "lessli": "less", "li": "-",
}

var step3Rules = map[string]string{
	"tional": "tion", "ational": "ate", "alize": "al", "icate": "ic", "iciti": "ic", "ical": "ic",
	"ful": "", "ness": "", "ative": "-",
}

var step2Suffixes, step3Suffixes = keys(step2Rules), keys(step3Rules)

func keys(m map[string]string) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	return out
}

func (s *porter) step2() {
	suffix := s.longest(step2Suffixes)
	n := len(s.w) - len(suffix)
	if suffix == "" || n < s.p1 {
		return
	}
	switch to := step2Rules[suffix]; {
	case suffix == "ogi":
		if n > 0 && s.w[n-1] == 'l' {
			s.replace(3, "og")
		}
	case suffix == "li":
		if n > 0 && isValidLI(s.w[n-1]) {
			s.w = s.w[:n]
		}
	default:
		s.replace(len(suffix), to)
	}
}

func isValidLI(c byte) bool {
	switch c {
	case 'c', 'd', 'e', 'g', 'h', 'k', 'm', 'n', 'r', 't':
		return true
	}
	return false
}

func (s *porter) step3() {
	suffix := s.longest(step3Suffixes)
	n := len(s.w) - len(suffix)
	if suffix == "" || n < s.p1 {
		return
	}
	if suffix == "ative" {
		if n >= s.p2 {
			s.w = s.w[:n]
		}
		return
	}
	s.replace(len(suffix), step3Rules[suffix])
}

var step4Suffixes = []string{
	"al", "ance", "ence", "er", "ic", "able", "ible", "ant", "ement",
	"ment", "ent", "ism", "ate", "iti", "ous", "ive", "ize", "ion",
}

func (s *porter) step4() {
	suffix := s.longest(step4Suffixes)
	n := len(s.w) - len(suffix)
	if suffix == "" || n < s.p2 {
		return
	}
	if suffix == "ion" && (n == 0 || s.w[n-1] != 's' && s.w[n-1] != 't') {
		return
	}
	s.w = s.w[:n]
}

func (s *porter) step5() {
	n := len(s.w)
	switch s.w[n-1] {
	case 'e':
		if n-1 >= s.p2 {
			s.w = s.w[:n-1]
			return
		}
		if n-1 >= s.p1 {
			s.w = s.w[:n-1]
			if s.shortSyllable() {
				s.w = s.w[:n] // put the e back
			}
		}
	case 'l':
		if n-1 >= s.p2 && n >= 2 && s.w[n-2] == 'l' {
			s.w = s.w[:n-1]
		}
	}
}

func hasSuffix(w []byte, s string) bool {
	return len(w) >= len(s) && string(w[len(w)-len(s):]) == s
}

func hasPrefix(w []byte, s string) bool {
	return len(w) >= len(s) && string(w[:len(s)]) == s
}

func equalsAny(w []byte, ss ...string) bool {
	for _, s := range ss {
		if string(w) == s {
			return true
		}
	}
	return false
}

// isVowel reports whether c is a vowel for the stemmer; 'Y', a consonant
// y, is not.
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
