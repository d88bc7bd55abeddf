package files

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"strings"
	"testing"

	"github.com/mnemo-mcp/mnemo/memory"
	"github.com/mnemo-mcp/mnemo/memory/storetest"
)

// encodeLog returns turns as AppendTurns writes them, with Seqs 1, 2, …
func encodeLog(tb testing.TB, turns []memory.Turn) []byte {
	tb.Helper()
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	for i, t := range turns {
		t.Seq = int64(i + 1)
		if err := enc.Encode(&t); err != nil {
			tb.Fatal(err)
		}
	}
	return buf.Bytes()
}

// oddTurns are turns whose text needs escapes, is not ASCII or is empty.
func oddTurns() []memory.Turn {
	texts := []string{
		"plain", "", "tab\there \"quoted\" back\\slash", "line\nbreak\r\n", "ctrl \x00\x01\x1f",
		"café naïve 数据库 😀", "<html> & </html>", "sep \u2028 \u2029", "slash / \u007f",
		"bad utf-8 \xff\xfe", strings.Repeat("long ", 500),
	}
	var out []memory.Turn
	for i, text := range texts {
		t := storetest.NewTurn(fmt.Sprintf("thread %d", i%3), i)
		t.User, t.Reply = text, texts[len(texts)-1-i]
		if i%4 == 0 {
			t.MetaData = nil
		}
		if i%5 == 0 {
			t.MetaData = json.RawMessage(`[1,{"a":"}]\"","b":[true,null]},-2.5e3]`)
		}
		out = append(out, t)
	}
	return out
}

// decodeLineTests are lines decodeTurn must decode exactly as json does:
// fast-path lines, and lines that must fall back (or fail).
func decodeLineTests(tb testing.TB) []string {
	lines := strings.SplitAfter(string(encodeLog(tb, oddTurns())), "\n")
	lines = lines[:len(lines)-1]
	return append(lines,
		`{}`+"\n",
		`{"seq":1}`,
		`{"seq":-0,"id":"x"}`+"\n",
		`{"seq":01}`+"\n",
		`{"seq":1.0}`+"\n",
		`{"seq":1e3}`+"\n",
		`{"seq":12345678901234567890}`+"\n",
		`{"seq":"1"}`+"\n",
		`{"seq":null,"id":null}`+"\n",
		`{"Seq":7,"ID":"upper"}`+"\n",
		`{"seq":1,"seq":2}`+"\n",
		`{"seq":1,"other":{"x":[1,2]}}`+"\n",
		`{ "seq" : 1 }`+"\n",
		`{"seq":1}`+"\r\n",
		`{"seq":1,"time":"2024-02-29T23:59:59.5Z","stored":"2023-02-29T00:00:00Z"}`+"\n",
		`{"seq":1,"time":"2024-01-01T24:00:00Z","stored":"2024-01-01T00:00:60Z"}`+"\n",
		`{"seq":1,"time":"2024-01-01T00:00:00.1234567891Z","stored":"2024-01-01T00:00:00.Z"}`+"\n",
		`{"seq":1,"time":"0000-01-01T00:00:00.000000001Z","stored":"2024-01-01T00:00:00+01:00"}`+"\n",
		`{"seq":1,"time":"2024-1-01T00:00:00Z","stored":"2024-01-01t00:00:00z"}`+"\n",
		`{"seq":1,"user":"eight ch","reply":"a quote \" in","id":"tab\tand \\"}`+"\n",
		`{"seq":1}x`+"\n",
		`{"seq":1,}`+"\n",
		`{"seq":1`+"\n",
		`{not json}`+"\n",
		`garbage`+"\n",
		`[]`+"\n",
		`{"user":"\ud83d\ude00 \u00e9 \u0041"}`+"\n",
		`{"user":"lone \ud83d surrogate"}`+"\n",
		`{"user":"low \ude00 first"}`+"\n",
		`{"user":"bad \x escape"}`+"\n",
		`{"user":"bad \u12g4 hex"}`+"\n",
		`{"user":"raw`+"\x01"+`control"}`+"\n",
		`{"user":"invalid `+"\xc3\x28"+` utf-8 \n"}`+"\n",
		`{"time":"2025-01-01T00:00:00Z","stored":"2025-13-01T00:00:00Z"}`+"\n",
		`{"time":"2025-01-01T00:00:00+02:00"}`+"\n",
		`{"time":"2025-01-01 00:00:00"}`+"\n",
		`{"time":"2025-01-01T00:00:00\u005a"}`+"\n",
		`{"time":1}`+"\n",
		`{"signals":{}}`+"\n",
		`{"signals":{"correction":true,"reinforcement":false}}`+"\n",
		`{"signals":{"correction":true,"correction":false}}`+"\n",
		`{"signals":{"correction":1}}`+"\n",
		`{"signals":{"Correction":true}}`+"\n",
		`{"signals":null}`+"\n",
		`{"meta_data":{"a":{"b":"\"}"}},"seq":3}`+"\n",
		`{"meta_data":[1,2}`+"\n",
		`{"meta_data":{"a":1 }}`+"\n",
		`{"meta_data":"text"}`+"\n",
		`{"meta_data":null}`+"\n",
		`{"meta_data":{"a":"`+"\xff"+`"}}`+"\n",
	)
}

// checkDecodeTurn fails unless decodeTurn(line) matches json.Unmarshal.
func checkDecodeTurn(t *testing.T, line string) {
	t.Helper()
	var got, want memory.Turn
	gotErr := decodeTurn([]byte(line), &got)
	wantErr := json.Unmarshal([]byte(line), &want)
	if fmt.Sprint(gotErr) != fmt.Sprint(wantErr) {
		t.Fatalf("decodeTurn(%q) error = %v, want %v", line, gotErr, wantErr)
	}
	if wantErr == nil && !reflect.DeepEqual(got, want) {
		t.Fatalf("decodeTurn(%q) = %+v, want %+v", line, got, want)
	}
}

func TestDecodeTurn(t *testing.T) {
	for _, line := range decodeLineTests(t) {
		checkDecodeTurn(t, line)
	}
}

// TestDecodeTurnFast checks that lines as AppendTurns writes them take the
// fast path.
func TestDecodeTurnFast(t *testing.T) {
	data := encodeLog(t, append(oddTurns(), storetest.NewTurns("t", 0, 20)...))
	for line := range bytes.SplitAfterSeq(data, []byte("\n")) {
		if len(line) == 0 || bytes.Contains(line, []byte(`\xff`)) || bytes.Contains(line, []byte("\xff")) {
			continue
		}
		var turn memory.Turn
		if p := (turnParser{b: bytes.TrimSuffix(line, []byte("\n"))}); !p.turn(&turn) {
			t.Errorf("line %q does not take the fast path", line)
		}
	}
}

func FuzzDecodeTurn(f *testing.F) {
	for _, line := range decodeLineTests(f) {
		f.Add(line)
	}
	f.Fuzz(checkDecodeTurn)
}

// TestReadAllMatchesReadFrom checks that the parallel read of a log gives
// the turns, end position and errors of a line-by-line read, for clean,
// torn and damaged logs, from the start and from a checkpoint, with blocks
// and chunks small enough to split lines many ways.
func TestReadAllMatchesReadFrom(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(4))
	turns := oddTurns()
	for i := range 5 {
		turns = append(turns, storetest.NewTurns(fmt.Sprintf("t%d", i), i*40, 40)...)
	}
	clean := encodeLog(t, turns)
	lines := bytes.SplitAfter(clean, []byte("\n"))
	lines = lines[:len(lines)-1]
	join := func(edit func(lines [][]byte) [][]byte) []byte {
		return bytes.Join(edit(cloneLines(lines)), nil)
	}
	logs := map[string][]byte{
		"clean": clean,
		"empty": nil,
		"torn":  append(bytes.Clone(clean), `{"id":"turn_x","seq":9`...),
		"corrupt early": join(func(l [][]byte) [][]byte {
			l[3] = []byte("{not json}\n")
			return l
		}),
		"corrupt late": join(func(l [][]byte) [][]byte {
			l[len(l)-2] = []byte(`{"seq":"x"}` + "\n")
			return l
		}),
		"seq repeats": join(func(l [][]byte) [][]byte {
			l[100] = l[99]
			return l
		}),
		"seq repeats then corrupt": join(func(l [][]byte) [][]byte {
			l[50] = l[49]
			l[150] = []byte("garbage\n")
			return l
		}),
		"corrupt then torn": append(join(func(l [][]byte) [][]byte {
			l[7] = []byte("garbage\n")
			return l
		}), "{"...),
		"one long line": append(bytes.Clone(clean), encodeTurnAt(t, int64(len(lines)+1), strings.Repeat("x", 5000))...),
	}
	s, err := Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	st, err := s.state(memory.Scope{UserID: "u"})
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Dir(st.turnsPath), 0o700); err != nil {
		t.Fatal(err)
	}
	for name, data := range logs {
		if err := os.WriteFile(st.turnsPath, data, 0o600); err != nil {
			t.Fatal(err)
		}
		f, err := os.Open(st.turnsPath)
		if err != nil {
			t.Fatal(err)
		}
		size := int64(len(data))
		froms := []checkpoint{{}}
		if name == "clean" {
			off := 0
			for i := range 30 {
				off += len(lines[i])
			}
			froms = append(froms, checkpoint{seq: 30, off: int64(off), line: 30})
		}
		for _, from := range froms {
			want, wantEnd, _, wantErr := s.readFrom(t.Context(), st, st.turnsPath, f, from, size, from.seq)
			for _, sizes := range [][2]int{{readBlock, decodeChunk}, {1000, 1}, {4096, 700}, {300, 100}} {
				got, gotEnd, gotErr := s.readAll(t.Context(), st, st.turnsPath, f, from, size, sizes[0], sizes[1])
				where := fmt.Sprintf("%s from line %d, block %d, chunk %d", name, from.line, sizes[0], sizes[1])
				if fmt.Sprint(gotErr) != fmt.Sprint(wantErr) {
					t.Errorf("%s: readAll error = %v, want %v", where, gotErr, wantErr)
					continue
				}
				if wantErr != nil {
					continue
				}
				if gotEnd != wantEnd {
					t.Errorf("%s: readAll ends at %+v, want %+v", where, gotEnd, wantEnd)
				}
				if !reflect.DeepEqual(got, want) {
					t.Errorf("%s: readAll gives %d turns, unlike readFrom's %d", where, len(got), len(want))
				}
			}
		}
		f.Close()
	}
}

// encodeTurnAt returns one encoded turn with Seq seq and the given reply.
func encodeTurnAt(tb testing.TB, seq int64, reply string) []byte {
	tb.Helper()
	turn := storetest.NewTurn("long", int(seq))
	turn.Seq, turn.Reply = seq, reply
	b, err := json.Marshal(&turn)
	if err != nil {
		tb.Fatal(err)
	}
	return append(b, '\n')
}

// cloneLines returns a deep copy of lines.
func cloneLines(lines [][]byte) [][]byte {
	out := make([][]byte, len(lines))
	for i, l := range lines {
		out[i] = bytes.Clone(l)
	}
	return out
}

// TestReadAllSizesTurns checks that readAll allocates its turns about as
// many as the log holds when its lines grow longer from first to last, as
// a log does whose texts grow: estimated from the first block alone,
// the array would be several times too large, and it is kept.
func TestReadAllSizesTurns(t *testing.T) {
	var turns []memory.Turn
	for i := range 1500 {
		turn := storetest.NewTurn("t", i)
		turn.User = strings.Repeat("w", i/3)
		turns = append(turns, turn)
	}
	data := encodeLog(t, turns)
	s, err := Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	st, err := s.state(memory.Scope{UserID: "u"})
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Dir(st.turnsPath), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(st.turnsPath, data, 0o600); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(st.turnsPath)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	got, _, err := s.readAll(t.Context(), st, st.turnsPath, f, checkpoint{}, int64(len(data)), 16<<10, decodeChunk)
	if err != nil || len(got) != len(turns) {
		t.Fatalf("readAll() = %d turns, %v; want %d", len(got), err, len(turns))
	}
	if c := cap(got); c > len(got)*12/10 {
		t.Errorf("readAll() allocated %d turns for %d", c, len(got))
	}
}

func TestTailLineLength(t *testing.T) {
	lines := bytes.Repeat([]byte(strings.Repeat("x", 99)+"\n"), 3*tailSample/100)
	tests := []struct {
		name string
		data []byte
		from int64
		want float64
	}{
		{"short log", lines[:tailSample], 0, 7},
		{"lines of 100 bytes", lines, 0, 100},
		{"sample before from", lines, int64(len(lines)) - tailSample, 7},
		{"no line end", bytes.Repeat([]byte("x"), 3*tailSample), 0, 7},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := tailLineLength(bytes.NewReader(tt.data), tt.from, int64(len(tt.data)), 7)
			if got != tt.want {
				t.Errorf("tailLineLength() = %v, want %v", got, tt.want)
			}
		})
	}
}
