package files

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"runtime"
	"slices"
	"sync"

	"github.com/mnemo-mcp/mnemo/memory"
)

// ReadTurns reads the scope's turns.jsonl without taking the lock. It
// remembers where earlier reads ended (checkpoints: Seq, byte offset, line
// number) and starts at the last checkpoint at or before after, so polling
// for new turns reads only what is new, and a poll that finds nothing new
// costs one stat. A final line without a newline (a write in progress, or
// one that was interrupted) is skipped; a line that does not parse, or
// whose Seq does not increase, is an error wrapping memory.ErrCorrupt that
// names the file and line. A long stretch of the log is decoded on every
// CPU, with the same results and errors.
func (s *Store) ReadTurns(ctx context.Context, scope memory.Scope, after int64) ([]memory.Turn, error) {
	st, err := s.state(scope)
	if err != nil {
		return nil, fmt.Errorf("read turns: %w", err)
	}
	path := st.turnsPath
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("read turns from %s: %w", path, err)
	}
	if err := s.observe(st, after == 0); err != nil {
		return nil, fmt.Errorf("read turns from %s: %w", path, err)
	}
	turns, err := s.readTurns(ctx, st, path, after)
	if err != nil {
		return nil, fmt.Errorf("read turns from %s: %w", path, err)
	}
	return turns, nil
}

func (s *Store) readTurns(ctx context.Context, st *scopeFiles, path string, after int64) ([]memory.Turn, error) {
	fi, err := s.lstatIn(st, turnsName)
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

	f, err := s.openIn(st, turnsName, os.O_RDONLY, 0)
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
		cur    checkpoint
		before checkpoint // the last line with Seq <= after, if read
	)
	if from.seq >= after {
		// Every line is wanted whole (Seqs must increase past from.seq),
		// so lines can be decoded in any order, and in parallel.
		out, cur, err = s.readAll(ctx, st, path, f, from, fi.Size(), readBlock, decodeChunk)
	} else {
		out, cur, before, err = s.readFrom(ctx, st, path, f, from, fi.Size(), after)
	}
	if err != nil {
		return nil, err
	}

	st.mu.Lock()
	if before.line > 0 {
		st.marks.add(fi, before)
	}
	st.marks.add(fi, cur)
	st.mu.Unlock()
	return out, nil
}

// readFrom reads the log from checkpoint from to size, one line at a time,
// decoding only the Seq of lines at or before after. It returns the turns
// after after, the position after the last complete line and the position
// after the last line at or before after (zero if none was read).
func (s *Store) readFrom(ctx context.Context, st *scopeFiles, path string, f *os.File, from checkpoint, size, after int64) (out []memory.Turn, cur, before checkpoint, err error) {
	cur = from
	lines := newLineReader(io.NewSectionReader(f, from.off, size-from.off))
	for {
		line, err := lines.next()
		if err == io.EOF {
			if len(line) > 0 {
				s.logTorn(st, path, cur.off, len(line))
			}
			break
		}
		if err != nil {
			return nil, cur, before, err
		}
		if cur.line%256 == 0 {
			if err := ctx.Err(); err != nil {
				return nil, cur, before, err
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
				return nil, cur, before, fmt.Errorf("line %d: %w: %w", next.line, memory.ErrCorrupt, err)
			}
			t.Seq = head.Seq
		}
		if t.Seq == 0 || t.Seq > after {
			if err := decodeTurn(line, &t); err != nil {
				return nil, cur, before, fmt.Errorf("line %d: %w: %w", next.line, memory.ErrCorrupt, err)
			}
		}
		if t.Seq <= cur.seq {
			return nil, cur, before, fmt.Errorf("line %d: %w: seq %d does not follow %d", next.line, memory.ErrCorrupt, t.Seq, cur.seq)
		}
		next.seq = t.Seq
		if t.Seq <= after {
			before = next
		} else {
			out = append(out, t)
		}
		cur = next
	}
	return out, cur, before, nil
}

// readBlock is how much of the log readAll holds at a time (more when a
// line is longer), and decodeChunk the least it hands to one goroutine.
const (
	readBlock   = 4 << 20
	decodeChunk = 128 << 10
)

// readAll reads every line of the log from checkpoint from to size. It
// reads a block at a time, splits each block at line ends into a chunk
// per CPU, decodes the chunks in parallel and then checks, in order, that
// the Seqs increase, so that an error names the first bad line, as a
// line-by-line read would. It returns the turns and the position after
// the last complete line.
func (s *Store) readAll(ctx context.Context, st *scopeFiles, path string, f *os.File, from checkpoint, size int64, block, chunk int) ([]memory.Turn, checkpoint, error) {
	var (
		out  []memory.Turn
		cur  = from
		buf  = make([]byte, min(int64(block), size-from.off))
		held int // bytes of buf holding an incomplete line carried over
		off  = from.off
		// The decoders' string arenas, kept from one block to the next.
		arenas []textArena
	)
	for {
		// Bytes appended since the stat are left to the next read.
		n, err := f.ReadAt(buf[held:held+int(min(int64(len(buf)-held), size-off))], off)
		off += int64(n)
		if err != nil && err != io.EOF {
			return nil, cur, err
		}
		data := buf[:held+n]
		end := bytes.LastIndexByte(data, '\n') + 1
		if end == 0 && len(data) == len(buf) && off < size {
			// One line longer than the buffer: make room for more of it.
			buf = slices.Grow(buf, len(buf))[:2*len(buf)]
			held = len(data)
			continue
		}
		if end > 0 {
			if err := ctx.Err(); err != nil {
				return nil, cur, err
			}
			lines := data[:end]
			count := bytes.Count(lines, []byte{'\n'})
			if out == nil && off < size {
				// The turns of the blocks to come are estimated from this
				// one's lines and the log's last ones, so that out is
				// allocated once, not in append's quarter steps (five
				// times its size, all told), and not much larger than it
				// needs: the array is kept as long as the turns.
				perLine := (float64(end)/float64(count) + tailLineLength(f, off, size, float64(end)/float64(count))) / 2
				rest := float64(size-off) / perLine
				out = make([]memory.Turn, 0, count+int(rest*1.02)+16)
			}
			// The lines are decoded in place, into out's spare room, not
			// into a block's worth of turns copied over after.
			out = slices.Grow(out, count)
			dst := out[len(out) : len(out)+count]
			n, err := decodeLines(ctx, &arenas, lines, cur.line, chunk, dst)
			for i := range dst[:n] {
				if dst[i].Seq <= cur.seq {
					return nil, cur, fmt.Errorf("line %d: %w: seq %d does not follow %d", cur.line+1, memory.ErrCorrupt, dst[i].Seq, cur.seq)
				}
				cur.seq = dst[i].Seq
				cur.line++
			}
			if err != nil {
				return nil, cur, err
			}
			out = out[:len(out)+n]
			cur.off += int64(end)
		}
		held = copy(buf, data[end:])
		if n == 0 || off >= size {
			break
		}
	}
	if held > 0 {
		s.logTorn(st, path, cur.off, held)
	}
	return out, cur, nil
}

// tailSample is how much of the end of a log tailLineLength reads.
const tailSample = 64 << 10

// tailLineLength returns the mean length of the complete lines in the
// last tailSample bytes of f before size, when those start past from;
// else, or when they hold no whole line, guess.
func tailLineLength(f io.ReaderAt, from, size int64, guess float64) float64 {
	if size-from < 2*tailSample {
		return guess
	}
	buf := make([]byte, tailSample)
	if _, err := f.ReadAt(buf, size-tailSample); err != nil {
		return guess
	}
	start := bytes.IndexByte(buf, '\n') + 1
	end := bytes.LastIndexByte(buf, '\n') + 1
	n := bytes.Count(buf[start:end], []byte{'\n'})
	if start == 0 || n == 0 {
		return guess
	}
	return float64(end-start) / float64(n)
}

// decodeLines decodes lines (each ending in '\n'; the first is line
// first+1 of the log) into dst, whose turns must be zero, one turn a
// line, in chunks of at least chunk bytes, no more chunks than CPUs, one
// goroutine and one of arenas (grown to their number) each. It returns
// how many lines, from the first, were decoded, and the error that
// stopped it there: a line that does not parse (an error wrapping
// memory.ErrCorrupt that names it) or the end of the context.
func decodeLines(ctx context.Context, arenas *[]textArena, lines []byte, first, chunk int, dst []memory.Turn) (int, error) {
	type part struct {
		lines []byte
		at    int // index in dst of its first line
		n     int // lines decoded
		err   error
	}
	var parts []part
	at := 0
	for rest, left := lines, max(1, min(runtime.GOMAXPROCS(0), len(lines)/chunk)); len(rest) > 0; left-- {
		end := len(rest)
		if left > 1 {
			end = len(rest) / left
			end += bytes.IndexByte(rest[end:], '\n') + 1
		}
		parts = append(parts, part{lines: rest[:end], at: at})
		at += bytes.Count(rest[:end], []byte{'\n'})
		rest = rest[end:]
	}
	for len(*arenas) < len(parts) {
		*arenas = append(*arenas, textArena{})
	}
	decode := func(i int) {
		p := &parts[i]
		p.n, p.err = decodeChunkLines(ctx, &(*arenas)[i], p.lines, dst[p.at:])
	}
	var wg sync.WaitGroup
	for i := 1; i < len(parts); i++ {
		wg.Go(func() { decode(i) })
	}
	decode(0)
	wg.Wait()
	for _, p := range parts {
		if p.err != nil {
			if errors.Is(p.err, memory.ErrCorrupt) {
				p.err = fmt.Errorf("line %d: %w", first+p.at+p.n+1, p.err)
			}
			return p.at + p.n, p.err
		}
	}
	return len(dst), nil
}

// logTorn reports an unterminated last line once per scope: usually it is
// a write in progress in another process, which the next read will see
// whole.
func (s *Store) logTorn(st *scopeFiles, path string, off int64, n int) {
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
