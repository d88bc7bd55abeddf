package lexical

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"math"
)

// analyzerVersion numbers the behaviour of Tokenize and of the prefix
// field. A snapshot records it, and one made by another version is
// refused: its terms would not match what queries are tokenized into. Bump
// it with any change to what Tokenize returns or to appendPrefix (3: the
// Porter2 stemmer and the prefix field).
const analyzerVersion = 3

// snapshotMagic opens a snapshot; the byte after "MNLX" is the format
// version.
const snapshotMagic = "MNLX\x01"

// ErrSnapshot is wrapped by Read's errors about the snapshot's content:
// damaged, truncated, or made by another format or analyzer version.
var ErrSnapshot = errors.New("unusable index snapshot")

// WriteTo writes a snapshot of the index to w, from which Read rebuilds
// an equal index without tokenizing anything: document ids, term counts
// and lengths are kept; removed documents and unused terms are not. It
// holds the read lock while writing, so writes wait and searches go on.
// The snapshot ends with a CRC-32 of its content.
func (ix *Index) WriteTo(w io.Writer) (int64, error) {
	ix.mu.RLock()
	defer ix.mu.RUnlock()
	cw := &countingWriter{w: w, crc: crc32.NewIEEE()}
	bw := bufio.NewWriterSize(cw, 64<<10)
	var buf [binary.MaxVarintLen64]byte
	uv := func(x uint64) { bw.Write(buf[:binary.PutUvarint(buf[:], x)]) }

	bw.WriteString(snapshotMagic)
	uv(analyzerVersion)
	uv(uint64(len(ix.docs)))
	for id, d := range ix.docs {
		if d.state != live {
			uv(0)
			continue
		}
		uv(uint64(len(d.terms)) + 1)
		uv(uint64(ix.lens[id]))
	}
	used := 0
	for i := range ix.lists {
		if ix.lists[i].df > 0 {
			used++
		}
	}
	uv(uint64(used))
	for i := range ix.lists {
		l := &ix.lists[i]
		if l.df == 0 {
			continue
		}
		uv(uint64(len(l.term)))
		bw.WriteString(l.term)
		uv(uint64(l.df))
		prev := int32(-1)
		for _, p := range l.p {
			if ix.docs[p.doc].state != live {
				continue
			}
			uv(uint64(p.doc - prev))
			uv(uint64(p.tf))
			prev = p.doc
		}
	}
	if err := bw.Flush(); err != nil {
		return cw.n, fmt.Errorf("write index snapshot: %w", err)
	}
	var sum [4]byte
	binary.LittleEndian.PutUint32(sum[:], cw.crc.Sum32())
	if _, err := cw.w.Write(sum[:]); err != nil {
		return cw.n, fmt.Errorf("write index snapshot: %w", err)
	}
	return cw.n + 4, nil
}

type countingWriter struct {
	w   io.Writer
	crc interface {
		io.Writer
		Sum32() uint32
	}
	n int64
}

func (c *countingWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.n += int64(n)
	c.crc.Write(p[:n])
	return n, err
}

// Read rebuilds an index from a snapshot written by WriteTo, with the
// given ranking options. A snapshot that is damaged, truncated, or was
// made by another format or analyzer version is refused with an error
// wrapping ErrSnapshot; the caller then indexes the texts again.
func Read(r io.Reader, opts Options) (*Index, error) {
	data, err := io.ReadAll(r)
	if err != nil {
		return nil, fmt.Errorf("read index snapshot: %w", err)
	}
	if len(data) < len(snapshotMagic)+4 || string(data[:len(snapshotMagic)]) != snapshotMagic {
		return nil, fmt.Errorf("%w: not a snapshot of this format", ErrSnapshot)
	}
	body, sum := data[:len(data)-4], binary.LittleEndian.Uint32(data[len(data)-4:])
	if crc32.ChecksumIEEE(body) != sum {
		return nil, fmt.Errorf("%w: checksum mismatch (damaged or truncated)", ErrSnapshot)
	}
	// The terms are substrings of one copy of the body: one allocation
	// instead of one per term.
	d := &decoder{b: body[len(snapshotMagic):], s: string(body[len(snapshotMagic):])}
	if v := d.uv(); v != analyzerVersion {
		return nil, fmt.Errorf("%w: made by analyzer version %d, this is %d", ErrSnapshot, v, analyzerVersion)
	}
	ix := New(opts)
	// Every document takes at least a byte, every term and posting two:
	// counts are bounded by the size of the body before anything is
	// allocated for them.
	ndocs := d.count(min(len(d.b), math.MaxInt32))
	ix.docs = make([]doc, ndocs)
	ix.lens = make([]int32, ndocs)
	want := make([]int32, ndocs) // distinct terms per live document
	total := 0
	for id := range ndocs {
		n := d.count(math.MaxInt32)
		if n == 0 {
			continue
		}
		want[id] = int32(n - 1)
		total += n - 1
		ix.lens[id] = int32(d.count(math.MaxInt32))
		ix.docs[id].state = live
		ix.live++
		ix.total += int64(ix.lens[id])
	}
	if total > len(d.b)/2 {
		d.fail("%d postings cannot fit in %d bytes", total, len(d.b))
		return nil, d.err
	}
	// Every document's term list and every postings list is carved out of
	// one allocation each (capacity capped, so a later append copies).
	// Postings are checked against a compact per-document array (one
	// cache line per posting, not three): next and end delimit the
	// document's slots in docTerms still to fill, left is its length less
	// the term counts seen so far.
	docTerms := make([]int32, total)
	docTFs := make([]uint8, total)
	fill := make([]docFill, ndocs)
	off := int32(0)
	for id := range ndocs {
		fill[id] = docFill{next: off, end: off + want[id], left: ix.lens[id]}
		off += want[id]
	}
	nterms := d.count(len(d.b) / 2)
	ix.lists = make([]postings, nterms)
	ix.terms = make(map[string]int32, nterms)
	all := make([]posting, total)
	at := 0
	for tid := range nterms {
		term := d.str(d.count(maxTokenBytes * 4))
		if _, dup := ix.terms[term]; dup || term == "" {
			d.fail("term %q listed twice or empty", term)
		}
		ix.terms[term] = int32(tid)
		df := d.count(total - at)
		if df == 0 {
			d.fail("term %q has no documents", term)
		}
		l := &ix.lists[tid]
		l.term, l.df, l.p = term, int32(df), all[at:at+df:at+df]
		at += df
		if d.err != nil {
			break
		}
		// The hot loop: varints decoded from a local slice.
		b, i, prev := d.b, 0, -1
		for j := range l.p {
			delta, n := uvAt(b, i)
			if n <= 0 {
				d.fail("posting %d of term %q is truncated", j, term)
				break
			}
			i += n
			tf64, m := uvAt(b, i)
			if m <= 0 {
				d.fail("posting %d of term %q is truncated", j, term)
				break
			}
			i += m
			doc := prev + int(min(delta, uint64(ndocs)))
			if delta == 0 || doc >= ndocs || tf64 == 0 || tf64 > uint64(fill[doc].left) || fill[doc].next == fill[doc].end {
				d.fail("posting %d of term %q is out of order or range", j, term)
				break
			}
			tf := int32(tf64)
			l.p[j] = posting{doc: int32(doc), tf: tf}
			f := &fill[doc]
			f.left -= tf
			docTerms[f.next] = int32(tid)
			docTFs[f.next] = uint8(min(tf, maxDocTF))
			f.next++
			prev = doc
		}
		if d.err != nil {
			break
		}
		d.b = b[i:]
	}
	if d.err == nil && (at != total || len(d.b) != 0) {
		d.fail("%d postings for %d document terms, %d bytes left over", at, total, len(d.b))
	}
	for id := 0; d.err == nil && id < ndocs; id++ {
		f := fill[id]
		if f.next != f.end || f.left != 0 {
			d.fail("document %d has %d of %d terms and %d tokens unaccounted for", id, want[id]-(f.end-f.next), want[id], f.left)
		}
		if ix.docs[id].state == live {
			ix.docs[id].terms = docTerms[f.end-want[id] : f.end : f.end]
			ix.docs[id].tfs = docTFs[f.end-want[id] : f.end : f.end]
		}
	}
	if d.err != nil {
		return nil, d.err
	}
	ix.npost = total
	return ix, nil
}

// decoder reads uvarints from a snapshot body, remembering the first
// error.
type decoder struct {
	b   []byte
	s   string // the same bytes as b was at the start
	err error
}

func (d *decoder) fail(format string, args ...any) {
	if d.err == nil {
		d.err = fmt.Errorf("%w: %s", ErrSnapshot, fmt.Sprintf(format, args...))
	}
}

func (d *decoder) uv() uint64 {
	if d.err != nil {
		return 0
	}
	if len(d.b) > 0 && d.b[0] < 0x80 {
		x := d.b[0]
		d.b = d.b[1:]
		return uint64(x)
	}
	x, n := binary.Uvarint(d.b)
	if n <= 0 {
		d.fail("truncated number")
		return 0
	}
	d.b = d.b[n:]
	return x
}

// count reads a number that must be at most limit.
func (d *decoder) count(limit int) int {
	x := d.uv()
	if x > uint64(max(limit, 0)) {
		d.fail("number %d over %d", x, limit)
		return 0
	}
	return int(x)
}

// docFill tracks one document while Read fills its term list.
type docFill struct {
	next, end, left int32
}

// uvAt decodes the uvarint at b[i:], returning it and its length, or a
// length of 0 or less when there is none. One-byte numbers, the common
// case, take the inlined path.
func uvAt(b []byte, i int) (uint64, int) {
	if i < len(b) && b[i] < 0x80 {
		return uint64(b[i]), 1
	}
	return uvSlow(b, i)
}

func uvSlow(b []byte, i int) (uint64, int) {
	if i >= len(b) {
		return 0, 0
	}
	return binary.Uvarint(b[i:])
}

// str returns the next n bytes as a substring of d.s.
func (d *decoder) str(n int) string {
	if d.err != nil {
		return ""
	}
	if n > len(d.b) {
		d.fail("truncated text")
		return ""
	}
	start := len(d.s) - len(d.b)
	d.b = d.b[n:]
	return d.s[start : start+n]
}
