package lexical

import (
	"bufio"
	"compress/gzip"
	"os"
	"strings"
	"testing"
)

// TestStemVocabulary checks stem against the Snowball project's English
// vocabulary and its expected stems (see testdata/porter2_vocabulary.LICENSE).
func TestStemVocabulary(t *testing.T) {
	words, bad := 0, 0
	eachVocabularyWord(t, func(word, want string) {
		words++
		if got := string(stem([]byte(word))); got != want {
			if bad++; bad <= 20 {
				t.Errorf("stem(%q) = %q, want %q", word, got, want)
			}
		}
	})
	if bad > 0 {
		t.Errorf("%d of %d words stemmed wrong", bad, words)
	}
	for w := range stemExceptions {
		if len(w) > maxExceptionLen {
			t.Errorf("stemExceptions has %q, longer than maxExceptionLen %d", w, maxExceptionLen)
		}
	}
	if words < 40000 {
		t.Errorf("vocabulary has %d words, want the whole list", words)
	}
}

// eachVocabularyWord calls fn with each word of the Snowball project's
// English vocabulary and its expected stem.
func eachVocabularyWord(t *testing.T, fn func(word, stem string)) {
	t.Helper()
	f, err := os.Open("testdata/porter2_vocabulary.txt.gz")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	sc := bufio.NewScanner(zr)
	for sc.Scan() {
		word, stem, ok := strings.Cut(sc.Text(), " ")
		if !ok {
			t.Fatalf("line %q: want \"word stem\"", sc.Text())
		}
		fn(word, stem)
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
}
