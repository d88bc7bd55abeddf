package files

import (
	"bufio"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"slices"
	"sort"

	"github.com/mnemo-mcp/mnemo/memory"
)

// ReadTurns reads the scope's turns.jsonl without taking the lock. It
// remembers where earlier reads ended (checkpoints: Seq, byte offset, line
// number) and starts at the last checkpoint at or before after, so polling
// for new turns reads only what is new, and a poll that finds nothing new
// costs one stat. A final line without a newline (a write in progress, or
// one that was interrupted) is skipped; a line that does not parse, or
// whose Seq does not increase, is an error wrapping memory.ErrCorrupt that
// names the file and line.
func (s *Store) ReadTurns(ctx context.Context, scope memory.Scope, after int64) ([]memory.Turn, error) {
	st, err := s.state(scope)
	if err != nil {
		return nil, fmt.Errorf("read turns: %w", err)
	}
	path := st.turnsPath
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("read turns from %s: %w", path, err)
	}
	turns, err := s.readTurns(ctx, st, path, after)
	if err != nil {
		return nil, fmt.Errorf("read turns from %s: %w", path, err)
	}
	return turns, nil
}

func (s *Store) readTurns(ctx context.Context, st *scopeState, path string, after int64) ([]memory.Turn, error) {
	fi, err := os.Stat(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	st.mu.Lock()
	from := st.marks.start(fi, after)
	st.mu.Unlock()
	if from.off == fi.Size() {
		return nil, nil
	}

	f, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if fi, err = f.Stat(); err != nil {
		return nil, err
	}
	st.mu.Lock()
	from = st.marks.start(fi, after) // the file may have been replaced since the stat
	st.mu.Unlock()
	if from.off > 0 {
		// A checkpoint must sit just after a newline; if it does not, the
		// file was rewritten under us (say, an append rolled back and
		// redone), so the positions are forgotten and the scan starts over.
		var b [1]byte
		if _, err := f.ReadAt(b[:], from.off-1); err != nil {
			return nil, err
		}
		if b[0] != '\n' {
			st.mu.Lock()
			st.marks.reset()
			st.mu.Unlock()
			from = checkpoint{}
		}
	}

	var (
		out    []memory.Turn
		cur    = from
		before checkpoint // the last line with Seq <= after, if read
		lines  = newLineReader(io.NewSectionReader(f, from.off, fi.Size()-from.off))
	)
	for {
		line, err := lines.next()
		if err == io.EOF {
			if len(line) > 0 {
				s.logTorn(st, path, cur.off, len(line))
			}
			break
		}
		if err != nil {
			return nil, err
		}
		if cur.line%256 == 0 {
			if err := ctx.Err(); err != nil {
				return nil, err
			}
		}
		next := checkpoint{off: cur.off + int64(len(line)), line: cur.line + 1}
		var t memory.Turn
		if cur.seq < after {
			// Still before the caller's position: only the Seq is needed.
			var head struct {
				Seq int64 `json:"seq"`
			}
			if err := json.Unmarshal(line, &head); err != nil {
				return nil, fmt.Errorf("line %d: %w: %w", next.line, memory.ErrCorrupt, err)
			}
			t.Seq = head.Seq
		}
		if t.Seq == 0 || t.Seq > after {
			if err := json.Unmarshal(line, &t); err != nil {
				return nil, fmt.Errorf("line %d: %w: %w", next.line, memory.ErrCorrupt, err)
			}
		}
		if t.Seq <= cur.seq {
			return nil, fmt.Errorf("line %d: %w: seq %d does not follow %d", next.line, memory.ErrCorrupt, t.Seq, cur.seq)
		}
		next.seq = t.Seq
		if t.Seq <= after {
			before = next
		} else {
			out = append(out, t)
		}
		cur = next
	}

	st.mu.Lock()
	if before.line > 0 {
		st.marks.add(fi, before)
	}
	st.marks.add(fi, cur)
	st.mu.Unlock()
	return out, nil
}

// logTorn reports an unterminated last line once per scope: usually it is
// a write in progress in another process, which the next read will see
// whole.
func (s *Store) logTorn(st *scopeState, path string, off int64, n int) {
	st.mu.Lock()
	logged := st.tornLogged
	st.tornLogged = true
	st.mu.Unlock()
	if !logged {
		s.log.Info("skipping incomplete last line of turn log", "path", path, "offset", off, "bytes", n)
	}
}

// lineReader splits a stream into lines of any length.
type lineReader struct {
	r    *bufio.Reader
	long []byte
}

func newLineReader(r io.Reader) *lineReader {
	return &lineReader{r: bufio.NewReaderSize(r, 64<<10)}
}

// next returns the next line including its '\n', valid until the next
// call. At the end it returns io.EOF with whatever followed the last
// '\n'.
func (l *lineReader) next() ([]byte, error) {
	l.long = l.long[:0]
	for {
		b, err := l.r.ReadSlice('\n')
		if err == bufio.ErrBufferFull {
			l.long = append(l.long, b...)
			continue
		}
		if len(l.long) > 0 {
			b = append(l.long, b...)
			l.long = b
		}
		return b, err
	}
}

// checkpoint is a position in a turn log just after a complete line: the
// line's Seq, the byte offset after its '\n' and its line number. The zero
// value is the start of the log.
type checkpoint struct {
	seq  int64
	off  int64
	line int
	used uint64
}

// maxCheckpoints bounds the positions remembered per scope; one per
// distinct reader position (for example a per-thread watermark) is enough.
const maxCheckpoints = 32

// checkpoints are the positions earlier reads of one log file ended at,
// sorted by seq.
type checkpoints struct {
	fi   os.FileInfo // the file they belong to
	list []checkpoint
	tick uint64
}

// start returns the last checkpoint with seq <= after in the file fi,
// forgetting checkpoints of a replaced file or beyond a shrunk one.
func (c *checkpoints) start(fi os.FileInfo, after int64) checkpoint {
	if c.fi == nil || !os.SameFile(c.fi, fi) {
		c.list = c.list[:0]
	}
	c.fi = fi
	c.list = slices.DeleteFunc(c.list, func(p checkpoint) bool { return p.off > fi.Size() })
	i := sort.Search(len(c.list), func(i int) bool { return c.list[i].seq > after })
	if i == 0 {
		return checkpoint{}
	}
	c.tick++
	c.list[i-1].used = c.tick
	return c.list[i-1]
}

// reset forgets every checkpoint of the current file.
func (c *checkpoints) reset() {
	c.list = c.list[:0]
}

// add remembers p for the file fi, evicting the least recently used
// checkpoint when full.
func (c *checkpoints) add(fi os.FileInfo, p checkpoint) {
	if p.line == 0 || c.fi == nil || !os.SameFile(c.fi, fi) {
		return
	}
	c.tick++
	p.used = c.tick
	i, found := slices.BinarySearchFunc(c.list, p.seq, func(q checkpoint, seq int64) int {
		return cmp.Compare(q.seq, seq)
	})
	if found {
		c.list[i] = p
		return
	}
	c.list = slices.Insert(c.list, i, p)
	if len(c.list) > maxCheckpoints {
		lru := 0
		for j := range c.list {
			if c.list[j].used < c.list[lru].used {
				lru = j
			}
		}
		c.list = slices.Delete(c.list, lru, lru+1)
	}
}
