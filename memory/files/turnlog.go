package files

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"

	"github.com/mnemo-mcp/mnemo/memory"
)

// logWriter is the append side of a scope's turn log. Its fields belong to
// the holder of the scope lock.
type logWriter struct {
	f     *os.File    // opened O_APPEND, kept open between calls
	fi    os.FileInfo // identity of f, to notice the file being replaced
	off   int64       // end of the last complete line
	seq   int64       // Seq of that line; 0 for an empty log
	valid bool        // off and seq describe f as it is on disk
}

// close closes the log file if it is open.
func (w *logWriter) close() error {
	if w.f == nil {
		return nil
	}
	return w.f.Close()
}

// AppendTurns appends turns to the scope's turns.jsonl with one write and
// an fsync under the scope lock, numbering them after the last turn in the
// log, whoever wrote it. It reads only the log's last line, and only when
// the log changed since this Store last wrote it. A final line without a
// newline (a write that was interrupted) is cut off first. If the write or
// the fsync fails, the log is cut back to where it was. Turns are returned
// as new values with Seq set; the caller's slice is not changed. A turn
// whose MetaData is not valid JSON fails the whole call with an error
// wrapping memory.ErrInvalidInput; no turns is a no-op.
func (s *Store) AppendTurns(ctx context.Context, scope memory.Scope, turns []memory.Turn) ([]memory.Turn, error) {
	return s.appendTurns(ctx, scope, turns, true)
}

// appendTurns is AppendTurns, and WriteTurns without sync.
func (s *Store) appendTurns(ctx context.Context, scope memory.Scope, turns []memory.Turn, sync bool) ([]memory.Turn, error) {
	st, err := s.state(scope)
	if err != nil {
		return nil, fmt.Errorf("append turns: %w", err)
	}
	path := st.turnsPath
	for i, t := range turns {
		if len(t.MetaData) > 0 && !json.Valid(t.MetaData) {
			return nil, fmt.Errorf("append turns to %s: %w", path,
				&memory.InputError{Field: "meta_data", Message: fmt.Sprintf("turn %d: not valid JSON", i)})
		}
	}
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("append turns to %s: %w", path, err)
	}
	if len(turns) == 0 {
		return []memory.Turn{}, nil
	}
	if err := s.lock(ctx, st); err != nil {
		return nil, fmt.Errorf("append turns to %s: %w", path, err)
	}
	defer s.unlock(st)
	if err := s.adoptLocked(st); err != nil {
		return nil, fmt.Errorf("append turns to %s: %w", path, err)
	}
	out, err := s.appendLocked(st, path, turns, sync)
	if err != nil {
		return nil, fmt.Errorf("append turns to %s: %w", path, err)
	}
	return out, nil
}

func (s *Store) appendLocked(st *scopeFiles, path string, turns []memory.Turn, sync bool) ([]memory.Turn, error) {
	if err := s.syncWriter(st, path); err != nil {
		return nil, err
	}
	w := &st.w
	out := make([]memory.Turn, len(turns))
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	for i, t := range turns {
		t.Seq = w.seq + int64(i) + 1
		if err := enc.Encode(&t); err != nil {
			return nil, fmt.Errorf("encode turn %d: %w", i, err)
		}
		out[i] = t
	}
	if _, err := w.f.Write(buf.Bytes()); err != nil {
		s.rollback(st, path)
		return nil, err
	}
	end := w.off + int64(buf.Len())
	if sync {
		if err := w.f.Sync(); err != nil {
			s.rollback(st, path)
			return nil, err
		}
	}
	s.noteWrite(st, w.off, end, sync)
	st.mu.Lock()
	st.marks.extend(w.fi, w.off, w.off+int64(buf.Len()), w.seq+int64(len(turns)), len(turns))
	st.mu.Unlock()
	w.off += int64(buf.Len())
	w.seq += int64(len(turns))
	return out, nil
}

// rollback cuts the log back to where the failed append started, so that
// turns the caller was told failed do not appear later.
func (s *Store) rollback(st *scopeFiles, path string) {
	if err := st.w.f.Truncate(st.w.off); err != nil {
		s.log.Error("undo failed append", "path", path, "offset", st.w.off, "err", err)
	}
	st.w.valid = false
}

// syncWriter makes st.w describe the log on disk: it (re)opens the file
// when it is new or was replaced, and re-reads the last line when the
// size is not what this Store left. When nothing changed, one stat is the
// whole cost.
func (s *Store) syncWriter(st *scopeFiles, path string) error {
	w := &st.w
	fi, err := s.lstatIn(st, turnsName)
	switch {
	case err == nil && w.f != nil && os.SameFile(fi, w.fi):
		if w.valid && fi.Size() == w.off {
			return nil
		}
	case err == nil || errors.Is(err, fs.ErrNotExist):
		s.closeWriter(st)
		*w = logWriter{}
		if fi, err = s.openLog(st, path); err != nil {
			return err
		}
	default:
		return err
	}
	end, seq, err := lastCompleteLine(w.f, fi.Size())
	if err != nil {
		return err
	}
	if end < fi.Size() {
		s.log.Warn("cutting off incomplete last line of turn log left by an interrupted write",
			"path", path, "offset", end, "bytes", fi.Size()-end)
		if err := w.f.Truncate(end); err != nil {
			return fmt.Errorf("cut off incomplete last line: %w", err)
		}
	}
	w.off, w.seq, w.valid = end, seq, true
	return nil
}

// openLog opens the log for appending, creating it 0600 and making its
// directory entry durable when it is new. The file is opened read-write so
// the last line is read through the very descriptor that appends.
func (s *Store) openLog(st *scopeFiles, path string) (os.FileInfo, error) {
	f, err := s.openIn(st, turnsName, os.O_RDWR|os.O_APPEND|os.O_CREATE|os.O_EXCL, 0o600)
	created := err == nil
	if errors.Is(err, fs.ErrExist) {
		f, err = s.openIn(st, turnsName, os.O_RDWR|os.O_APPEND, 0)
	}
	if err != nil {
		return nil, err
	}
	if created {
		if err := s.d.syncDir(st.rel); err != nil {
			f.Close()
			return nil, err
		}
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, err
	}
	st.w = logWriter{f: f, fi: fi}
	return fi, nil
}

// lastCompleteLine finds the end of the last newline-terminated line in
// the first size bytes of r, and that line's Seq. It reads backwards from
// the end, so its cost is the length of the last line (plus any partial
// line after it), not of the log.
func lastCompleteLine(r io.ReaderAt, size int64) (end, seq int64, err error) {
	nl, err := lastNewline(r, size)
	if err != nil || nl < 0 {
		return 0, 0, err
	}
	prev, err := lastNewline(r, nl)
	if err != nil {
		return 0, 0, err
	}
	line := make([]byte, nl-prev-1)
	if _, err := r.ReadAt(line, prev+1); err != nil {
		return 0, 0, err
	}
	var head struct {
		Seq int64 `json:"seq"`
	}
	if err := json.Unmarshal(line, &head); err != nil {
		return 0, 0, fmt.Errorf("last line (at byte %d): %w: %w", prev+1, memory.ErrCorrupt, err)
	}
	if head.Seq <= 0 {
		return 0, 0, fmt.Errorf("last line (at byte %d): %w: no seq", prev+1, memory.ErrCorrupt)
	}
	return nl + 1, head.Seq, nil
}

// lastNewline returns the offset of the last '\n' before offset before,
// or -1.
func lastNewline(r io.ReaderAt, before int64) (int64, error) {
	const chunk = 16 << 10
	var buf []byte
	for end := before; end > 0; {
		start := max(end-chunk, 0)
		if buf == nil {
			buf = make([]byte, chunk)
		}
		b := buf[:end-start]
		if _, err := r.ReadAt(b, start); err != nil {
			return 0, err
		}
		if i := bytes.LastIndexByte(b, '\n'); i >= 0 {
			return start + int64(i), nil
		}
		end = start
	}
	return -1, nil
}
