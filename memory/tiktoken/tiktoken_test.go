package tiktoken

import (
	"fmt"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"

	tkgo "github.com/pkoukk/tiktoken-go"
	tkloader "github.com/pkoukk/tiktoken-go-loader"
)

// cacheDir is where tiktoken-go would cache downloaded ranks. TestMain points
// it at an empty directory (and HTTP at a closed port) before anything loads,
// so any download attempt either fails or leaves a file behind.
var cacheDir string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "tiktoken-cache-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	cacheDir = dir
	for k, v := range map[string]string{
		"TIKTOKEN_CACHE_DIR": dir,
		"DATA_GYM_CACHE_DIR": dir,
		"HTTP_PROXY":         "http://127.0.0.1:1",
		"HTTPS_PROXY":        "http://127.0.0.1:1",
		"NO_PROXY":           "",
	} {
		os.Setenv(k, v)
	}
	code := m.Run()
	if entries, err := os.ReadDir(dir); err != nil || len(entries) > 0 {
		fmt.Fprintf(os.Stderr, "tiktoken cache dir %s: %d entries, err %v; want none\n", dir, len(entries), err)
		code = 1
	}
	os.RemoveAll(dir)
	os.Exit(code)
}

// references holds tiktoken-go's encoders, the reference Count is held to,
// loaded from the same embedded files.
var references = struct {
	once sync.Once
	enc  map[string]*tkgo.Tiktoken
	err  error
}{}

// reference returns tiktoken-go's encoder for the named encoding.
func reference(tb testing.TB, encoding string) *tkgo.Tiktoken {
	tb.Helper()
	references.once.Do(func() {
		tkgo.SetBpeLoader(tkloader.NewOfflineLoader())
		references.enc = map[string]*tkgo.Tiktoken{}
		for _, name := range []string{CL100kBase, O200kBase} {
			tk, err := tkgo.GetEncoding(name)
			if err != nil {
				references.err = err
				return
			}
			references.enc[name] = tk
		}
	})
	if references.err != nil {
		tb.Fatalf("load tiktoken-go: %v", references.err)
	}
	return references.enc[encoding]
}

func mustNew(tb testing.TB, encoding string) *Counter {
	tb.Helper()
	c, err := New(encoding)
	if err != nil {
		tb.Fatalf("New(%q): %v", encoding, err)
	}
	return c
}

func TestOffline(t *testing.T) {
	for _, enc := range []string{CL100kBase, O200kBase} {
		if got := mustNew(t, enc).Count("hello world"); got != 2 {
			t.Errorf("%s: Count(hello world) = %d, want 2", enc, got)
		}
	}
	entries, err := os.ReadDir(cacheDir)
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) > 0 {
		t.Errorf("TIKTOKEN_CACHE_DIR has %d entries after loading, want 0 (nothing downloaded)", len(entries))
	}
}

func TestNew(t *testing.T) {
	tests := []struct {
		in, want string
	}{
		{"", CL100kBase},
		{"cl100k_base", CL100kBase},
		{"o200k_base", O200kBase},
	}
	for _, tt := range tests {
		if got := mustNew(t, tt.in).Encoding(); got != tt.want {
			t.Errorf("New(%q).Encoding() = %q, want %q", tt.in, got, tt.want)
		}
	}
	a, b := mustNew(t, CL100kBase), mustNew(t, CL100kBase)
	if a.enc != b.enc || a.enc.ranks == nil {
		t.Error("two Counters for cl100k_base do not share one loaded encoding")
	}
}

func TestNewUnknown(t *testing.T) {
	for _, name := range []string{"p50k_base", "r50k_base", "gpt2", "CL100K_BASE", "cl100k_base "} {
		c, err := New(name)
		if err == nil {
			t.Errorf("New(%q) = %v, want error", name, c)
			continue
		}
		for _, want := range []string{name, CL100kBase, O200kBase} {
			if !strings.Contains(err.Error(), want) {
				t.Errorf("New(%q) error %q does not mention %q", name, err, want)
			}
		}
	}
}

func TestCountKnown(t *testing.T) {
	tests := []struct {
		enc, text string
		want      int
	}{
		{CL100kBase, "", 0},
		{O200kBase, "", 0},
		{CL100kBase, "hello world", 2},
		{O200kBase, "hello world", 2},
		{CL100kBase, "tiktoken is great!", 6}, // OpenAI cookbook example
		{O200kBase, "tiktoken is great!", 6},
		{CL100kBase, "Hello, world!", 4},
		{O200kBase, "Hello, world!", 4},
		{CL100kBase, "The quick brown fox jumps over the lazy dog.", 10},
		{O200kBase, "The quick brown fox jumps over the lazy dog.", 10},
		{CL100kBase, "你好，世界", 6},
		{O200kBase, "你好，世界", 3}, // o200k's larger vocabulary covers common Han words
		{CL100kBase, " ", 1},
		{CL100kBase, "\n\n", 1},
	}
	for _, tt := range tests {
		if got := mustNew(t, tt.enc).Count(tt.text); got != tt.want {
			t.Errorf("%s: Count(%q) = %d, want %d", tt.enc, tt.text, got, tt.want)
		}
	}
}

// samples are texts whose token counts must be exact, including ones long
// enough to be cut into parts.
var samples = []string{
	"hello world",
	"I'm sure they'll say it's fine; we've done it, HE'S DONE IT, and you'd agree.",
	"func main() {\n\tfmt.Println(\"hi\")  // 42\n}\n\n\n",
	"我用Go写FastAPI，然后部署到服务器上。今天天气很好！",
	"東京タワーの高さは333メートルです。ハングル: 안녕하세요, 세계!",
	"Café naïve coöperate — “quoted” ‘text’ … 3.14159, 1,000,000 and 2024-05-01T10:00:00Z",
	"emoji 🎉🎉 family 👨‍👩‍👧 flags 🇫🇷🇩🇪 done",
	"<|endoftext|> <|fim_prefix|><|fim_middle|><|fim_suffix|><|endofprompt|>",
	"iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==",
	strings.Repeat("The user prefers dark roast coffee, works on Go services, and lives in Lyon. ", 60),
	strings.Repeat("用户喜欢喝咖啡，住在里昂，平时用Go写后端服务。", 80),
	strings.Repeat("word' ", 500),
}

func TestCountMatchesEncoder(t *testing.T) {
	for _, enc := range []string{CL100kBase, O200kBase} {
		c, tk := mustNew(t, enc), reference(t, enc)
		for _, s := range samples {
			tokens := tk.EncodeOrdinary(s)
			if got := tk.Decode(tokens); got != s {
				t.Errorf("%s: Decode(Encode(%.40q)) = %.40q, want the input back", enc, s, got)
			}
			if got, want := c.Count(s), len(tokens); got != want {
				t.Errorf("%s: Count(%.40q) = %d, want %d", enc, s, got, want)
			}
		}
	}
}

func TestSpecialTokensAreText(t *testing.T) {
	specials := map[string]int{ // id of <|endoftext|> in each encoding
		CL100kBase: 100257,
		O200kBase:  199999,
	}
	for enc, eot := range specials {
		c := mustNew(t, enc)
		for _, s := range []string{"<|endoftext|>", "<|endofprompt|>", "<|fim_prefix|>", "say <|endoftext|> twice <|endoftext|>"} {
			n := c.Count(s)
			if n < 2 {
				t.Errorf("%s: Count(%q) = %d, want it counted as ordinary text (several tokens)", enc, s, n)
			}
			if slices.Contains(reference(t, enc).EncodeOrdinary(s), eot) {
				t.Errorf("%s: %q encoded to the special token %d", enc, s, eot)
			}
		}
	}
}

// TestLongRuns checks that long runs, one piece each or nearly, are counted
// exactly.
func TestLongRuns(t *testing.T) {
	runs := []string{
		strings.Repeat("a", 3000),
		strings.Repeat(" ", 3000),
		strings.Repeat("=", 3000),
		strings.Repeat("\n ", 1500),
		strings.Repeat("数据库", 1000),
		strings.Repeat("0123456789abcdef", 200),
		strings.Repeat("word'", 600),
	}
	c, tk := mustNew(t, CL100kBase), reference(t, CL100kBase)
	for _, s := range runs {
		want := len(tk.EncodeOrdinary(s))
		if got := c.Count(s); got != want {
			t.Errorf("Count(%.12q × %d bytes) = %d, want %d", s, len(s), got, want)
		}
	}
}

func TestCountConcurrent(t *testing.T) {
	counters := []*Counter{mustNew(t, CL100kBase), mustNew(t, O200kBase)}
	want := make([][]int, len(counters))
	for i, c := range counters {
		for _, s := range samples {
			want[i] = append(want[i], c.Count(s))
		}
	}
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Go(func() {
			c := counters[g%len(counters)]
			for j, s := range samples {
				if got := c.Count(s); got != want[g%len(counters)][j] {
					t.Errorf("concurrent Count(%.20q) = %d, want %d", s, got, want[g%len(counters)][j])
				}
			}
		})
	}
	wg.Wait()
}

// paragraph is about 2 KB of ordinary English prose.
var paragraph = strings.Repeat("The assistant remembered that the user prefers concise answers, "+
	"writes backend services in Go, and is planning a trip to Kyoto in April. ", 16)[:2048]

func BenchmarkCount(b *testing.B) {
	for _, enc := range []string{CL100kBase, O200kBase} {
		c := mustNew(b, enc)
		b.Run(enc, func(b *testing.B) {
			b.SetBytes(int64(len(paragraph)))
			for b.Loop() {
				c.Count(paragraph)
			}
		})
	}
	c := mustNew(b, CL100kBase)
	run := strings.Repeat("a", 64<<10)
	b.Run("run64KiB", func(b *testing.B) {
		b.SetBytes(int64(len(run)))
		for b.Loop() {
			c.Count(run)
		}
	})
}
