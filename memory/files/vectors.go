package files

import (
	"bufio"
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"os"
	"path/filepath"

	"github.com/mnemo-mcp/mnemo/memory"
)

// vectorsName is the per-scope sidecar of page embeddings: a header line
// naming the model, then records of (uvarint id length, id, uvarint
// dimensions, little-endian float32s). It is a cache: losing it only costs
// embedding again.
const (
	vectorsName   = "vectors.bin"
	vectorsMagic  = "mnemo-vectors 1\t"
	maxVectorDims = 1 << 16
	maxVectorID   = 1 << 10
)

var _ memory.VectorStore = (*Store)(nil)

// LoadVectors returns the page vectors stored for scope under model; none
// stored, or stored under another model, returns nothing. A record torn by
// a crash ends the file: it is cut off so later appends stay readable.
func (s *Store) LoadVectors(ctx context.Context, scope memory.Scope, model string) ([]memory.PageVector, error) {
	st, err := s.cacheState(ctx, scope)
	if err != nil {
		return nil, err
	}
	path := filepath.Join(st.dir, vectorsName)
	if err := s.observe(st, false); err != nil {
		return nil, fmt.Errorf("read vectors %s: %w", path, err)
	}
	rel := filepath.Join(st.rel, vectorsName)
	data, err := s.d.readFile(rel)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read vectors %s: %w", path, err)
	}
	vecs, good, ok := decodeVectors(data, model)
	if !ok {
		return nil, nil
	}
	if good < len(data) {
		if err := s.cutVectors(ctx, st, data[:good]); err != nil {
			return nil, fmt.Errorf("cut torn vectors %s: %w", path, err)
		}
	}
	return vecs, nil
}

// cutVectors cuts the vectors file back to good, under the scope lock,
// if it still starts with good.
func (s *Store) cutVectors(ctx context.Context, st *scopeFiles, good []byte) error {
	if err := s.lockExisting(ctx, st); err != nil {
		return err
	}
	defer s.unlock(st)
	f, err := s.d.open(filepath.Join(st.rel, vectorsName), os.O_RDWR, 0)
	if err != nil {
		return err
	}
	defer f.Close()
	head := make([]byte, len(good))
	if _, err := f.ReadAt(head, 0); err != nil || !bytes.Equal(head, good) {
		return nil // changed meanwhile: someone else repaired or replaced it
	}
	return f.Truncate(int64(len(good)))
}

// SaveVectors appends vecs to scope's vectors file, replacing the file when
// it holds another model's vectors, under the scope lock. It never creates
// the scope's directory, and is refused with an error wrapping ErrStale
// when the scope's turns were removed since this Store read them.
func (s *Store) SaveVectors(ctx context.Context, scope memory.Scope, model string, vecs []memory.PageVector) error {
	st, err := s.cacheState(ctx, scope)
	if err != nil {
		return err
	}
	path := filepath.Join(st.dir, vectorsName)
	if err := s.lockCache(ctx, st); err != nil {
		return fmt.Errorf("append vectors %s: %w", path, err)
	}
	defer s.unlock(st)
	rel := filepath.Join(st.rel, vectorsName)
	if !s.sameModel(rel, model) {
		return s.writeVectors(st, model, vecs)
	}
	var rec bytes.Buffer
	for _, v := range vecs {
		appendVector(&rec, v)
	}
	f, err := s.d.open(rel, os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return fmt.Errorf("open vectors %s: %w", path, err)
	}
	_, err = f.Write(rec.Bytes())
	return errors.Join(wrapErr("append vectors", path, err), wrapErr("close vectors", path, f.Close()))
}

// ReplaceVectors rewrites scope's vectors file to hold exactly vecs, with
// the same conditions as SaveVectors.
func (s *Store) ReplaceVectors(ctx context.Context, scope memory.Scope, model string, vecs []memory.PageVector) error {
	st, err := s.cacheState(ctx, scope)
	if err != nil {
		return err
	}
	if err := s.lockCache(ctx, st); err != nil {
		return fmt.Errorf("write vectors %s: %w", filepath.Join(st.dir, vectorsName), err)
	}
	defer s.unlock(st)
	return s.writeVectors(st, model, vecs)
}

// writeVectors replaces the scope's vectors file atomically. The caller
// holds the scope lock.
func (s *Store) writeVectors(st *scopeFiles, model string, vecs []memory.PageVector) error {
	var b bytes.Buffer
	b.WriteString(vectorsMagic + model + "\n")
	for _, v := range vecs {
		appendVector(&b, v)
	}
	if _, err := s.d.writeAtomic(st.rel, vectorsName, b.Bytes()); err != nil {
		return fmt.Errorf("write vectors %s: %w", filepath.Join(st.dir, vectorsName), err)
	}
	return nil
}

func wrapErr(what, path string, err error) error {
	if err == nil {
		return nil
	}
	return fmt.Errorf("%s %s: %w", what, path, err)
}

// sameModel reports whether the file at path starts with model's header.
func (s *Store) sameModel(rel, model string) bool {
	f, err := s.d.open(rel, os.O_RDONLY, 0)
	if err != nil {
		return false
	}
	defer f.Close()
	line, err := bufio.NewReader(io.LimitReader(f, 4096)).ReadString('\n')
	return err == nil && line == vectorsMagic+model+"\n"
}

func appendVector(b *bytes.Buffer, v memory.PageVector) {
	b.Write(binary.AppendUvarint(nil, uint64(len(v.TurnID))))
	b.WriteString(v.TurnID)
	b.Write(binary.AppendUvarint(nil, uint64(len(v.Vector))))
	for _, x := range v.Vector {
		b.Write(binary.LittleEndian.AppendUint32(nil, math.Float32bits(x)))
	}
}

// decodeVectors parses a vectors file. ok is false when it holds another
// model's vectors (or no header); good is the length of the well-formed
// prefix.
func decodeVectors(data []byte, model string) (vecs []memory.PageVector, good int, ok bool) {
	header := vectorsMagic + model + "\n"
	if !bytes.HasPrefix(data, []byte(header)) {
		return nil, 0, false
	}
	off := len(header)
	for off < len(data) {
		n, k := binary.Uvarint(data[off:])
		if k <= 0 || n == 0 || n > maxVectorID || off+k+int(n) > len(data) {
			break
		}
		id := string(data[off+k : off+k+int(n)])
		p := off + k + int(n)
		dims, k := binary.Uvarint(data[p:])
		if k <= 0 || dims > maxVectorDims || p+k+4*int(dims) > len(data) {
			break
		}
		p += k
		v := make([]float32, dims)
		for i := range v {
			v[i] = math.Float32frombits(binary.LittleEndian.Uint32(data[p+4*i:]))
		}
		vecs = append(vecs, memory.PageVector{TurnID: id, Vector: v})
		off = p + 4*int(dims)
	}
	return vecs, off, true
}
