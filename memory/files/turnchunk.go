package files

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/mnemo-mcp/mnemo/memory"
)

// textArena gathers the strings of a chunk of the turn log as its lines
// are parsed, so that they are set, once the chunk is decoded, as
// substrings of one allocation rather than one a line (and the meta data
// as slices of another, each capped at its end): a log read from the
// start allocates a string per chunk. Its buffers are kept from one
// chunk to the next.
type textArena struct {
	lines []byte // the chunk: what spans without esc are of
	esc   []byte // strings with escapes, unescaped
	spans []textSpan
}

// textSpan is a string of turn number turn of the chunk: field (a key
// bit) is to be set to lines[start:end], or with esc, esc[start:end].
// Its numbers are 32 bits (the chunk is smaller than 2 GiB), so that the
// spans of a chunk take an eighth of its size rather than a third.
type textSpan struct {
	turn, start, end int32
	field            uint16
	esc              bool
}

// decodeChunkLines decodes lines into dst, one turn a line, up to the
// first that does not parse; it returns how many it decoded and, if it
// stopped early, an error wrapping memory.ErrCorrupt or the context's.
// The turns of dst must be zero; a is the arena their strings are
// gathered in.
func decodeChunkLines(ctx context.Context, a *textArena, lines []byte, dst []memory.Turn) (int, error) {
	arena := len(lines) <= math.MaxInt32
	if arena {
		// Up to four strings a line: the spans are allocated once.
		a.lines, a.esc, a.spans = lines, a.esc[:0], slices.Grow(a.spans[:0], 4*bytes.Count(lines, []byte{'\n'}))
		defer a.set(dst)
	}
	n, off := 0, 0
	for off < len(lines) {
		if n%256 == 0 {
			if err := ctx.Err(); err != nil {
				return n, err
			}
		}
		end := off + bytes.IndexByte(lines[off:], '\n') + 1
		var err error
		if arena {
			err = a.decode(lines[off:end], off, n, &dst[n])
		} else {
			err = decodeTurn(lines[off:end], &dst[n])
		}
		if err != nil {
			dst[n] = memory.Turn{}
			return n, fmt.Errorf("%w: %w", memory.ErrCorrupt, err)
		}
		n++
		off = end
	}
	return n, nil
}

// decode decodes line, at offset off of the chunk, into t, turn number n
// of the chunk and zero, as decodeTurn would.
func (a *textArena) decode(line []byte, off, n int, t *memory.Turn) error {
	// The parse is into a turn of its own, not read from t: t is fresh
	// memory, which a read before the first write would fault in twice.
	var x memory.Turn
	spans, esc := len(a.spans), len(a.esc)
	if p := (turnParser{b: bytes.TrimSuffix(line, []byte{'\n'}), text: a, off: off, num: n}); p.turn(&x) {
		*t = x
		return nil
	}
	a.spans, a.esc = a.spans[:spans], a.esc[:esc]
	return json.Unmarshal(line, t)
}

// set sets the strings gathered to the fields of dst they belong to, all
// substrings of one copy (the meta data, slices of another), and lets go
// of the chunk.
func (a *textArena) set(dst []memory.Turn) {
	n, m := 0, 0
	for _, sp := range a.spans {
		if sp.field == keyMeta {
			m += int(sp.end - sp.start)
		} else {
			n += int(sp.end - sp.start)
		}
	}
	var sb strings.Builder
	sb.Grow(n)
	var meta []byte
	if m > 0 {
		meta = make([]byte, 0, m)
	}
	for _, sp := range a.spans {
		src := a.lines
		if sp.esc {
			src = a.esc
		}
		if sp.field == keyMeta {
			meta = append(meta, src[sp.start:sp.end]...)
		} else {
			sb.Write(src[sp.start:sp.end])
		}
	}
	all, at, mat := sb.String(), 0, 0
	for _, sp := range a.spans {
		t := &dst[sp.turn]
		if sp.field == keyMeta {
			next := mat + int(sp.end-sp.start)
			t.MetaData = meta[mat:next:next]
			mat = next
			continue
		}
		next := at + int(sp.end-sp.start)
		setText(t, int(sp.field), all[at:next])
		at = next
	}
	a.lines, a.spans = nil, a.spans[:0]
}
