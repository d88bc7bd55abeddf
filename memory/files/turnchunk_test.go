package files

import (
	"bytes"
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/mnemo-mcp/mnemo/memory"
	"github.com/mnemo-mcp/mnemo/memory/storetest"
)

// checkDecodeChunk fails unless decodeChunkLines decodes the lines of
// chunk (each ending in '\n') as decodeTurn decodes each: the same turns,
// up to the same line, with the same error. The arena a is reused, as
// readAll reuses it from one block to the next.
func checkDecodeChunk(t *testing.T, a *textArena, chunk []byte) {
	t.Helper()
	var want []memory.Turn
	var wantErr error
	for line := range bytes.SplitAfterSeq(chunk, []byte("\n")) {
		if len(line) == 0 {
			continue
		}
		var turn memory.Turn
		if err := decodeTurn(line, &turn); err != nil {
			wantErr = fmt.Errorf("%w: %w", memory.ErrCorrupt, err)
			break
		}
		want = append(want, turn)
	}
	dst := make([]memory.Turn, bytes.Count(chunk, []byte("\n")))
	n, err := decodeChunkLines(t.Context(), a, chunk, dst)
	if fmt.Sprint(err) != fmt.Sprint(wantErr) {
		t.Fatalf("decodeChunkLines(%.200q) error = %v, want %v", chunk, err, wantErr)
	}
	if n != len(want) {
		t.Fatalf("decodeChunkLines(%.200q) = %d turns, want %d", chunk, n, len(want))
	}
	if !reflect.DeepEqual(dst[:n], want) && n > 0 {
		t.Fatalf("decodeChunkLines(%.200q) = %+v, want %+v", chunk, dst[:n], want)
	}
	for i := n; i < len(dst); i++ {
		if !reflect.DeepEqual(dst[i], memory.Turn{}) {
			t.Fatalf("decodeChunkLines(%.200q) set turn %d after the last decoded: %+v", chunk, i, dst[i])
		}
	}
}

func TestDecodeChunkLines(t *testing.T) {
	lines := decodeLineTests(t)
	var good []string
	for _, l := range lines {
		if strings.HasSuffix(l, "\n") {
			good = append(good, l)
		}
	}
	tests := map[string]string{
		"empty":      "",
		"log":        string(encodeLog(t, append(oddTurns(), storetest.NewTurns("t", 0, 50)...))),
		"every line": strings.Join(good, ""),
		"bad first":  "garbage\n" + string(encodeLog(t, storetest.NewTurns("t", 0, 3))),
		"bad after escapes": string(encodeLog(t, oddTurns())) +
			`{"seq":99,"user":"esc \" aped","reply":"x"` + "\n",
		"escape then fallback": `{"seq":1,"user":"a\nb","Reply":"upper"}` + "\n" + `{"seq":2,"user":"c\td"}` + "\n",
	}
	var a textArena
	for name, chunk := range tests {
		t.Run(name, func(t *testing.T) {
			checkDecodeChunk(t, &a, []byte(chunk))
		})
	}
}

// TestDecodeChunkLinesAllocs checks that a chunk of lines in AppendTurns'
// shape gets its strings in one allocation and its meta data in another, not one
// a line.
func TestDecodeChunkLinesAllocs(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector allocates")
	}
	chunk := encodeLog(t, storetest.NewTurns("t", 0, 200))
	dst := make([]memory.Turn, 200)
	var a textArena
	allocs := testing.AllocsPerRun(20, func() {
		clear(dst)
		if n, err := decodeChunkLines(t.Context(), &a, chunk, dst); n != len(dst) || err != nil {
			t.Fatalf("decodeChunkLines = %d, %v", n, err)
		}
	})
	if allocs > 2 {
		t.Errorf("decodeChunkLines of 200 lines: %v allocations, want 2 (strings, meta data)", allocs)
	}
}

func FuzzDecodeChunkLines(f *testing.F) {
	lines := decodeLineTests(f)
	for i := range lines {
		f.Add(strings.Join(lines[i:min(i+3, len(lines))], "\n"))
	}
	f.Add(string(encodeLog(f, oddTurns())))
	var a textArena
	f.Fuzz(func(t *testing.T, s string) {
		if !strings.HasSuffix(s, "\n") {
			s += "\n"
		}
		checkDecodeChunk(t, &a, []byte(s))
	})
}
