package lexical

import (
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"
)

func TestTokenize(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want []string
	}{
		{"empty", "", nil},
		{"only separators", "  ...!?\t\n—", nil},
		{"only stop words", "The and of it is, I think?", []string{"think"}},
		{"lowercase and punctuation", "Hello, World! (Hello-world)", []string{"hello", "world", "hello", "world"}},
		{"plurals", "dogs stories boxes classes buses ties", []string{"dog", "stori", "box", "class", "buse", "tie"}},
		{"no plural", "bus class analysis tennis news atlas", []string{"bus", "class", "analysi", "tenni", "news", "atlas"}},
		{"ing", "running coding meeting using going thing string", []string{"run", "code", "meet", "use", "go", "thing", "string"}},
		{"ed", "stopped played used needed tried died shed", []string{"stop", "play", "use", "need", "tri", "die", "shed"}},
		{"ly and ness", "quickly really happily happiness darkness only early", []string{"quick", "realli", "happili", "happi", "dark", "earli"}},
		{"forms agree", "study studies studied studying", []string{"studi", "studi", "studi", "studi"}},
		{"final e", "code codes coded make making use", []string{"code", "code", "code", "make", "make", "use"}},
		{"protected", "business busy news new", []string{"business", "busi", "news", "new"}},
		{"contractions", "don't I'm it's user's we’re O'Brien", []string{"user", "obrien"}},
		{"quote marks are separators", "'hello' ‘world’", []string{"hello", "world"}},
		{"numbers", "42 3.14 10.0.0.1 v1.2 2024-05-01 1,000 3.", []string{"42", "3.14", "10.0.0.1", "v1.2", "2024", "05", "01", "1", "000", "3"}},
		{"alphanumeric", "GPT4o mp3s 2nd", []string{"gpt4o", "mp3s", "2nd"}},
		{"languages", "C++, C#, F# and c; notepad++ a#b", []string{"c++", "c#", "f#", "c", "notepad", "b"}},
		{"diacritics", "Café naïve Straße ÆSIR Ångström école", []string{"cafe", "naiv", "strass", "aesir", "angstrom", "ecol"}},
		{"combining marks", "e\u0301cole", []string{"ecol"}},
		{"fullwidth and ligatures", "ＦａｓｔＡＰＩ １２３ ﬁle", []string{"fastapi", "123", "file"}},
		{"other scripts", "Привет мир Ωμέγα", []string{"привет", "мир", "ωμέγα"}},
		{"han bigrams", "数据库", []string{"数据", "据库"}},
		{"lone han", "猫", []string{"猫"}},
		{"han runs split by punctuation", "我喜欢猫。狗", []string{"我喜", "喜欢", "欢猫", "狗"}},
		{"mixed scripts", "我用Go写FastAPI", []string{"我用", "go", "写", "fastapi"}},
		{"japanese", "東京タワーです", []string{"東京", "京タ", "タワ", "ワー", "ーで", "です"}},
		{"hangul", "안녕하세요 세계", []string{"안녕", "녕하", "하세", "세요", "세계"}},
		{"emoji", "🎉 party 👨‍👩‍👧 time🚀", []string{"parti", "time"}},
		{"emoji only", "🎉🎉🎉", nil},
		{"emoji modifiers", "1\ufe0f\u20e3 ❤\ufe0f love\ufe0f", []string{"1", "love"}},
		{"indic marks kept", "हिन्दी", []string{"हिन्दी"}},
		{"long word truncated", strings.Repeat("x", 100), []string{strings.Repeat("x", maxTokenBytes)}},
		{"invalid utf-8", "ab\xffcd \xc3", []string{"ab", "cd"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Tokenize(tt.in); !slices.Equal(got, tt.want) {
				t.Errorf("Tokenize(%q) = %q, want %q", tt.in, got, tt.want)
			}
		})
	}
}

// TestTokenizerReuse checks that a reused tokenizer gives the same tokens as
// a fresh one, whatever it read before.
func TestTokenizerReuse(t *testing.T) {
	texts := []string{"数据库系统", "Running quickly", "猫", "C++ rocks", "", "我用Go写FastAPI"}
	var tk tokenizer
	for _, a := range texts {
		for _, b := range texts {
			tk.reset(a)
			for _, ok := tk.next(); ok; _, ok = tk.next() {
			}
			tk.reset(b)
			var got []string
			for tok, ok := tk.next(); ok; tok, ok = tk.next() {
				got = append(got, string(tok))
			}
			if want := Tokenize(b); !slices.Equal(got, want) {
				t.Errorf("after %q: tokens of %q = %q, want %q", a, b, got, want)
			}
		}
	}
}

func FuzzTokenize(f *testing.F) {
	for _, s := range []string{
		"", "Hello, World!", "don't stop", "我用Go写FastAPI", "C++ C# f#", "3.14.15",
		"Ünïcödé ＦＵＬＬ ﬁ", "🎉👨‍👩‍👧", "e\u0301\u0301", "a'b'c", "İstanbul ǅ ς Σ", "\xff\xfe",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		toks := Tokenize(s)
		for _, tok := range toks {
			switch {
			case tok == "":
				t.Fatalf("Tokenize(%q) has an empty token: %q", s, toks)
			case !utf8.ValidString(tok):
				t.Fatalf("Tokenize(%q) has invalid UTF-8 token %q", s, tok)
			case strings.ToLower(tok) != tok:
				t.Fatalf("Tokenize(%q) has token %q, not lowercase", s, tok)
			case len(tok) > maxTokenBytes+2:
				t.Fatalf("Tokenize(%q) has token %q of %d bytes", s, tok, len(tok))
			case strings.IndexByte(tok, prefixMark) >= 0:
				t.Fatalf("Tokenize(%q) has token %q with the prefix mark", s, tok)
			case strings.IndexFunc(tok, unicode.IsSpace) >= 0:
				t.Fatalf("Tokenize(%q) has token %q with white space", s, tok)
			}
		}
		if again := Tokenize(s); !slices.Equal(again, toks) {
			t.Fatalf("Tokenize(%q) not deterministic: %q then %q", s, toks, again)
		}
	})
}

func TestWords(t *testing.T) {
	tests := []struct {
		text string
		want [][2]string // term, word
	}{
		{"Goroutines leak", [][2]string{{"goroutin", "goroutines"}, {"leak", "leak"}}},
		{"the Café's menu", [][2]string{{"cafe", "café"}, {"menu", "menu"}}},
		{"数据库 C++", [][2]string{{"数据", "数据"}, {"据库", "据库"}, {"c++", "c++"}}},
		{"and the of", nil},
	}
	for _, tt := range tests {
		var got [][2]string
		Words(tt.text, func(term, word string) { got = append(got, [2]string{term, word}) })
		if !reflect.DeepEqual(got, tt.want) {
			t.Errorf("Words(%q) = %v, want %v", tt.text, got, tt.want)
		}
		var terms []string
		for _, g := range got {
			terms = append(terms, g[0])
		}
		if want := Tokenize(tt.text); !reflect.DeepEqual(terms, want) && len(want)+len(terms) > 0 {
			t.Errorf("Words(%q) terms = %v, Tokenize = %v", tt.text, terms, want)
		}
	}
}

// TestAnyTerm checks AnyTerm against Tokenize: it sees the same terms in
// the same order and stops at the first that fn accepts.
func TestAnyTerm(t *testing.T) {
	tests := []struct {
		text string
		want string // the term to stop at; "" when none should match
	}{
		{"Running stories of the deployment", "stori"},
		{"我用Go写FastAPI", "go"},
		{"C++ and C# are not c", "c#"},
		{"nothing here matches", ""},
		{"", ""},
	}
	for _, tc := range tests {
		t.Run(tc.text, func(t *testing.T) {
			all := Tokenize(tc.text)
			var seen []string
			got := AnyTerm(tc.text, func(term []byte) bool {
				seen = append(seen, string(term))
				return string(term) == tc.want
			})
			if got != (tc.want != "") {
				t.Fatalf("AnyTerm(%q) = %v, want %v", tc.text, got, tc.want != "")
			}
			n := len(all)
			if got {
				n = slices.Index(all, tc.want) + 1
			}
			if !slices.Equal(seen, all[:n]) {
				t.Errorf("AnyTerm(%q) saw %q, want Tokenize's first %d terms %q", tc.text, seen, n, all[:n])
			}
		})
	}
}

// TestAnyTermStemsAgain checks that the stems a pooled tokenizer
// remembers give AnyTerm Tokenize's terms when it reads the same words
// again, including stems that are exceptions or shorter than their word,
// and after the memo filled and was emptied.
func TestAnyTermStemsAgain(t *testing.T) {
	texts := []string{
		"Running stories of the deployment",
		"The skies were dying, lying and tying; news of innings",
		"Happily, the happiest generously generalised organizations",
		"running RUNNING Running runs",
	}
	var many []string
	for i := range maxStems + 10 {
		many = append(many, fmt.Sprintf("walking%dx talks", i))
	}
	texts = append(texts, strings.Join(many, " "))
	for round := range 3 {
		for _, text := range texts {
			var seen []string
			AnyTerm(text, func(term []byte) bool {
				seen = append(seen, string(term))
				return false
			})
			if want := Tokenize(text); !slices.Equal(seen, want) {
				t.Errorf("round %d: AnyTerm(%.40q) saw %q, want %q", round, text, seen, want)
			}
		}
	}
}
