package tiktoken

import (
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"unicode/utf8"

	"github.com/dlclark/regexp2"
	tkgo "github.com/pkoukk/tiktoken-go"
)

// patterns are the encodings' pre-tokenizer patterns as tiktoken-go
// compiles them; the hand-written scans in pieces.go must split text exactly
// as they do.
var patterns = map[string]string{
	CL100kBase: `(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+`,
	O200kBase: strings.Join([]string{
		`[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?`,
		`[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?`,
		`\p{N}{1,3}`,
		` ?[^\s\p{L}\p{N}]+[\r\n/]*`,
		`\s*[\r\n]+`,
		`\s+(?!\S)`,
		`\s+`,
	}, "|"),
}

var compiled = struct {
	once sync.Once
	re   map[string]*regexp2.Regexp
}{}

// referencePieces returns the pieces regexp2 matches in s, read as runes
// the way tiktoken-go reads it.
func referencePieces(tb testing.TB, encoding, s string) []string {
	tb.Helper()
	compiled.once.Do(func() {
		compiled.re = map[string]*regexp2.Regexp{}
		for name, p := range patterns {
			compiled.re[name] = regexp2.MustCompile(p, regexp2.None)
		}
	})
	runes := []rune(s)
	var pieces []string
	m, err := compiled.re[encoding].FindStringMatch(s)
	for ; m != nil && err == nil; m, err = compiled.re[encoding].FindNextMatch(m) {
		pieces = append(pieces, string(runes[m.Index:m.Index+m.Length]))
	}
	if err != nil {
		tb.Fatalf("regexp2 on %q: %v", s, err)
	}
	return pieces
}

// splitPieces returns the pieces Count merges, invalid UTF-8 replaced.
func splitPieces(c *Counter, s string) []string {
	if !utf8.ValidString(s) {
		s = replaceInvalid(s)
	}
	var pieces []string
	for i := 0; i < len(s); {
		j := c.enc.piece(s, i)
		pieces = append(pieces, s[i:j])
		i = j
	}
	return pieces
}

// tricky are texts at the edges of the patterns: contractions in every
// case and with runes that lower or fold to their letters, runs of digits
// in several scripts, Han, kana and Hangul, emoji sequences, combining marks
// where a word may start, letter-case classes, white space of every kind
// before letters, punctuation and line breaks, and invalid UTF-8.
var tricky = []string{
	"'s 't 're 've 'm 'll 'd",
	"'S 'T 'RE 'VE 'M 'LL 'D 'Re 'rE 'vE 'Ll 'lL",
	"HE'S, it'S, we'Re, they'LL, I'D, you'Ve, I'M, don'T, o'clock, rock'n'roll, 'tis",
	"'ſ 'K 'K 'İ 'ı 'ß 'Σ ʼs ’s ‘t '' ''s 's' '",
	"word's' word''s WORD'S Ünïcödé'LL MÜNCHEN'S naïve'd ǅungla's",
	"a'", "'", "'l", "'r", "'x", "x'l", "x'LE",
	"1 12 123 1234 12345 1234567 3.14159 1,000,000 2024-05-01 10:00",
	"٣٤٥٦ ²³ ½¼ Ⅻ ⅷ 𝟘𝟙𝟚 一二三 १२३४ x2y 2x",
	"我用Go写FastAPI，然后部署到服务器上。東京タワーの高さは333メートルです。안녕하세요, 세계!",
	"emoji 🎉🎉 family 👨‍👩‍👧 flags 🇫🇷🇩🇪 skin 👍🏽 keycap 1️⃣ done 🎉abc",
	"e\u0301 \u0301a \u0301\u0301 a\u0301b \u0301 x \u0301A \u0301Ab \u0301AB \u0301ʰ \u0301١ ̈ü",
	"\u0301", "\u0301\u0301", " \u0301", "\t\u0301x", "A\u0301", "AB\u0301C", "ʰ", "ʰA", "Aʰ", "ABʰ", "ABʰC", "ABʰc",
	"HELLOworld JSONParser CamelCaseWord getHTTPResponse ǅungla ǈUBA ʰello ABCʰdef ABC\u0301 ΣΑΣ σας ﬁne",
	"a \n\n b\r\n\r\nc\n \n  d  \t\n \u3000x\u0085y\u00a0z \u2028\u2029 \v\f end  ",
	" ", "  ", "\n", "\r", "\r\n", " \n", "\n ", "  x", " \tx", "\t x", "x  ", "x\n\n", "x \n", "\u00a0x", "\u3000\u3000x",
	"(word) [x]: {y}; \"quoted\" — “curly” … ?! !!\n\n --> a/b/c //\n/ x//y ./\r\n",
	" !\n", " !!\r\n\r\n", "!/\n", " /", "\t!", "\n!", ".\n\n\n", "a.b", "a. b",
	"\xff\xfe<|endoftext|>\x00 a\u00a0b\u3000c", "a\xc3", "\xed\xa0\x80x", "\xc3\x28", "'\xff", "x'\x80s", "\x80\x80 \x80",
	"<|endoftext|> <|fim_prefix|><|fim_middle|><|fim_suffix|><|endofprompt|>",
}

func TestPiecesMatchPattern(t *testing.T) {
	for _, enc := range []string{CL100kBase, O200kBase} {
		c := mustNew(t, enc)
		for _, s := range slices.Concat(tricky, samples) {
			got, want := splitPieces(c, s), referencePieces(t, enc, s)
			if !slices.Equal(got, want) {
				t.Errorf("%s: pieces of %q =\n%q\nwant\n%q", enc, s, got, want)
			}
		}
	}
}

func TestPieces(t *testing.T) {
	tests := []struct {
		enc, text string
		want      []string
	}{
		{CL100kBase, "I'm HE'S", []string{"I", "'m", " HE", "'S"}},
		{CL100kBase, "x'ſ", []string{"x", "'ſ"}}, // 'ſ lowers to itself: a quote and a letter
		{CL100kBase, "a  b", []string{"a", " ", " b"}},
		{CL100kBase, "a \n\n b", []string{"a", " \n\n", " b"}},
		{CL100kBase, "12345", []string{"123", "45"}},
		{CL100kBase, "\u0301abc", []string{"\u0301abc"}},
		{O200kBase, "HELLOworld's", []string{"HELLOworld's"}},
		{O200kBase, "getHTTPResponse", []string{"get", "HTTPResponse"}},
		{O200kBase, "ABʰC", []string{"ABʰ", "C"}},
		{O200kBase, " \u0301", []string{" \u0301"}},
		{O200kBase, "a/b//\n", []string{"a", "/b", "//\n"}},
	}
	for _, tt := range tests {
		if got := splitPieces(mustNew(t, tt.enc), tt.text); !slices.Equal(got, tt.want) {
			t.Errorf("%s: pieces of %q = %q, want %q", tt.enc, tt.text, got, tt.want)
		}
	}
}

// checkCount fails t unless Count(s) is tiktoken-go's count for both
// encodings.
func checkCount(t *testing.T, name, s string) {
	t.Helper()
	for _, enc := range []string{CL100kBase, O200kBase} {
		c := mustNew(t, enc)
		if got, want := c.Count(s), len(reference(t, enc).EncodeOrdinary(s)); got != want {
			t.Errorf("%s: Count(%s) = %d, want %d (tiktoken-go)", enc, name, got, want)
		}
	}
}

func TestCountMatchesTiktoken(t *testing.T) {
	for _, s := range slices.Concat(tricky, samples) {
		checkCount(t, strings.ToValidUTF8(s[:min(len(s), 40)], "?"), s)
	}
}

// TestCountMatchesTiktokenOnTestdata counts every file under the
// repository's testdata directories (prompts, tool schemas, imports, fuzz
// corpora), each as one text.
func TestCountMatchesTiktokenOnTestdata(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: the repository's testdata is counted by the long run")
	}
	root := filepath.Join("..", "..")
	files := 0
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == "node_modules" || strings.HasPrefix(d.Name(), ".")) && path != root {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.Contains(filepath.ToSlash(path), "/testdata/") {
			return nil
		}
		info, err := d.Info()
		if err != nil || info.Size() > 256<<10 {
			return err
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		files++
		checkCount(t, path, string(b))
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if files < 20 {
		t.Errorf("counted %d testdata files, want the repository's (at least 20)", files)
	}
}

// FuzzCount checks that the hand-written pre-tokenizers split any text
// into the same pieces as the encodings' patterns run by regexp2.
func FuzzCount(f *testing.F) {
	for _, s := range slices.Concat(tricky, samples) {
		f.Add(s)
	}
	cl, o2 := mustNew(f, CL100kBase), mustNew(f, O200kBase)
	f.Fuzz(func(t *testing.T, s string) {
		if len(s) > 4096 {
			return
		}
		for _, c := range []*Counter{cl, o2} {
			if got, want := splitPieces(c, s), referencePieces(t, c.name, s); !slices.Equal(got, want) {
				t.Errorf("%s: pieces of %q =\n%q\nwant\n%q", c.name, s, got, want)
			}
		}
	})
}

// FuzzCountMatchesTiktoken checks that Count equals the length of
// tiktoken-go's EncodeOrdinary for both encodings on any text.
func FuzzCountMatchesTiktoken(f *testing.F) {
	for _, s := range slices.Concat(tricky, samples) {
		f.Add(s)
	}
	cl, o2 := mustNew(f, CL100kBase), mustNew(f, O200kBase)
	refs := []*tkgo.Tiktoken{reference(f, CL100kBase), reference(f, O200kBase)}
	f.Fuzz(func(t *testing.T, s string) {
		if len(s) > 1024 {
			// tiktoken-go, the reference, is quadratic in the length of
			// a piece: a long input would stall a fuzz worker on a loaded
			// machine. Both merges are covered past 1 KiB by
			// TestMergeCountLong and TestLongRuns.
			return
		}
		for i, c := range []*Counter{cl, o2} {
			if got, want := c.Count(s), len(refs[i].EncodeOrdinary(s)); got != want {
				t.Errorf("%s: Count(%q) = %d, want %d (tiktoken-go)", c.name, s, got, want)
			}
		}
	})
}

// TestMergeCountLong checks the heap merge against the scanning merge on
// every length of runs of one letter, of mixed ASCII, of Han, of spaces, of
// letters with marks and of punctuation, cut at any byte.
func TestMergeCountLong(t *testing.T) {
	texts := []string{
		strings.Repeat("a", 300),
		strings.Repeat("abcdefghij", 30),
		strings.Repeat("数据库", 40),
		strings.Repeat(" ", 300),
		strings.Repeat("ab\u00e9\u0301", 60),
		strings.Repeat("=-", 150),
		strings.Repeat("The user prefers dark roast coffee. ", 8),
	}
	for _, enc := range []string{CL100kBase, O200kBase} {
		ranks := mustNew(t, enc).enc.ranks
		for _, s := range texts {
			for n := 2; n <= len(s); n++ {
				if got, want := mergeCountLong(s[:n], ranks), mergeCountScan(s[:n], ranks); got != want {
					t.Errorf("%s: mergeCountLong(%.20q… %d bytes) = %d, want %d", enc, s, n, got, want)
				}
			}
		}
	}
}

func TestCountAllocs(t *testing.T) {
	for _, enc := range []string{CL100kBase, O200kBase} {
		c := mustNew(t, enc)
		for _, s := range injectionLines {
			if n := testing.AllocsPerRun(20, func() { c.Count(s) }); n != 0 {
				t.Errorf("%s: Count(%.30q) allocates %v times, want 0", enc, s, n)
			}
		}
	}
}

// injectionLines are lines like those retrieve_memory injects: a header, a
// page with its date and speaker, a quoted question and answer.
var injectionLines = []string{
	"<memory>",
	"[2023-05-08 13:56, thread conv-26] Caroline: I went to a LGBTQ support group yesterday and it was so powerful.",
	"Melanie: That's awesome, Caroline! What did you learn there? I'd love to hear more about it — we've been meaning to go.",
	"- (2023-06-27) Q: \"When did you start painting again?\" A: \"Last week; I've finished two landscapes and I'm planning a third.\"",
	"User: My sister's wedding is on 14 September in Lyon; she'll have 120 guests. Assistant: Noted — Lyon, 14/09, about 120 guests.",
}

func BenchmarkCountLines(b *testing.B) {
	for _, enc := range []string{CL100kBase, O200kBase} {
		c := mustNew(b, enc)
		size := 0
		for _, s := range injectionLines {
			size += len(s)
		}
		b.Run(enc, func(b *testing.B) {
			b.SetBytes(int64(size))
			b.ReportAllocs()
			for b.Loop() {
				for _, s := range injectionLines {
					c.Count(s)
				}
			}
		})
	}
}
