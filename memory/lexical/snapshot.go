package lexical

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"math"
	"strings"
)

// analyzerVersion numbers the behaviour of Tokenize and of the prefix
// field. A snapshot records it, and one made by another version is
// refused: its terms would not match what queries are tokenized into. Bump
// it with any change to what Tokenize returns or to appendPrefix (3: the
// Porter2 stemmer and the prefix field).
const analyzerVersion = 3

// snapshotMagic opens a snapshot; the byte after "MNLX" is the format
// version (2: each document's terms are kept as well as the postings, so
// that Read fills them in order instead of scattering the postings; 3:
// each document's first-field length, AddFields'; 4: each posting's count
// in its document's second field, postings.rfs, rather than each
// document's first-field terms).
const snapshotMagic = "MNLX\x04"

// ErrSnapshot is wrapped by Read's errors about the snapshot's content:
// damaged, truncated, or made by another format or analyzer version.
var ErrSnapshot = errors.New("unusable index snapshot")

// WriteTo writes a snapshot of the index to w, from which Read rebuilds
// an equal index without tokenizing anything: document ids, term counts
// and lengths are kept; removed documents and unused terms are not. It
// holds the read lock while writing, so writes wait and searches go on.
//
// The snapshot holds, in order: the documents (term count, length and
// first-field length each), the terms with their postings (document, count
// and second-field count, as postings.rfs holds it), each document's term
// ids and counts, and a CRC-32 of all that.
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
		uv(uint64(d.n) + 1)
		uv(uint64(ix.lens[id]))
		uv(uint64(ix.heads[id]))
	}
	// Unused terms are left out, so the others are numbered again, in
	// the same order: a document's term ids stay ascending.
	renum := make([]int32, len(ix.lists))
	used := 0
	for i := range ix.lists {
		renum[i] = -1
		if ix.lists[i].df > 0 {
			renum[i] = int32(used)
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
		for j, doc := range l.docs {
			if ix.docs[doc].state != live {
				continue
			}
			uv(uint64(doc - prev))
			uv(uint64(ix.tf(l, int32(i), j)))
			uv(uint64(l.rfs[j]))
			prev = doc
		}
	}
	// A document's packed terms are written as they are when no term
	// was left out (the ids are the same), else numbered again.
	same := used == len(ix.lists)
	for id := range ix.docs {
		d := &ix.docs[id]
		if d.state != live {
			continue
		}
		if same {
			bw.Write(d.terms)
			continue
		}
		prev := int32(-1)
		for it := d.iter(); it.next(); {
			uv(uint64(renum[it.tid] - prev))
			uv(uint64(it.tf))
			prev = renum[it.tid]
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
// given ranking options, as Decode does.
func Read(r io.Reader, opts Options) (*Index, error) {
	data, err := io.ReadAll(r)
	if err != nil {
		return nil, fmt.Errorf("read index snapshot: %w", err)
	}
	return Decode(data, opts)
}

// ReadSized rebuilds an index, as Decode does, from a snapshot of size
// bytes read from r (the rest of a file, say), reading no more of r. It
// reads a window at a time rather than the whole snapshot first, so that
// the snapshot is never held beside the index made from it, and reads
// the documents' term lists, the last section, straight into the buffer
// the index keeps. The checksum is compared once all is read: a damaged
// snapshot is refused after it is decoded rather than before. An error
// reading r is returned wrapped, not as ErrSnapshot, unless r ends
// before size bytes (a truncated snapshot).
func ReadSized(r io.Reader, size int64, opts Options) (*Index, error) {
	return readSized(r, size, opts, snapWindow)
}

// readSized is ReadSized reading window bytes at a time.
func readSized(r io.Reader, size int64, opts Options, window int) (*Index, error) {
	if size < int64(len(snapshotMagic))+4 {
		return nil, fmt.Errorf("%w: not a snapshot of this format", ErrSnapshot)
	}
	d := &decoder{r: r, left: size - 4, window: window}
	d.fill(len(snapshotMagic))
	if d.err != nil {
		return nil, d.err
	}
	if len(d.b) < len(snapshotMagic) || string(d.b[:len(snapshotMagic)]) != snapshotMagic {
		return nil, fmt.Errorf("%w: not a snapshot of this format", ErrSnapshot)
	}
	ix, err := d.index(opts)
	if d.err == nil && d.left == 0 {
		var sum [4]byte
		if _, rerr := io.ReadFull(r, sum[:]); rerr != nil {
			d.readFailed(rerr)
		} else if d.crc != binary.LittleEndian.Uint32(sum[:]) {
			return nil, fmt.Errorf("%w: checksum mismatch (damaged or truncated)", ErrSnapshot)
		}
	}
	if d.err != nil {
		return nil, d.err
	}
	return ix, err
}

// Decode rebuilds an index from the bytes of a snapshot written by
// WriteTo, with the given ranking options; the index keeps no reference
// to data. A snapshot that is damaged, truncated, or was made by another
// format or analyzer version is refused with an error wrapping
// ErrSnapshot; the caller then indexes the texts again. Besides the
// checksum, the postings and the documents' term lists must agree: the
// same number of each document's terms and of each term's documents, and
// the same sum of a 64-bit hash of every (document, term, count).
func Decode(data []byte, opts Options) (*Index, error) {
	if len(data) < len(snapshotMagic)+4 || string(data[:len(snapshotMagic)]) != snapshotMagic {
		return nil, fmt.Errorf("%w: not a snapshot of this format", ErrSnapshot)
	}
	body, sum := data[:len(data)-4], binary.LittleEndian.Uint32(data[len(data)-4:])
	if crc32.ChecksumIEEE(body) != sum {
		return nil, fmt.Errorf("%w: checksum mismatch (damaged or truncated)", ErrSnapshot)
	}
	d := &decoder{b: body}
	return d.index(opts)
}

// index decodes a snapshot body from its magic to its end (the checksum
// is the caller's).
func (d *decoder) index(opts Options) (*Index, error) {
	d.b = d.b[len(snapshotMagic):]
	if v := d.uv(); v != analyzerVersion {
		if d.err != nil {
			return nil, d.err
		}
		return nil, fmt.Errorf("%w: made by analyzer version %d, this is %d", ErrSnapshot, v, analyzerVersion)
	}
	ix := New(opts)
	// Every document takes at least a byte, every term and posting two:
	// counts are bounded by the size of the body before anything is
	// allocated for them.
	ndocs := d.count(min(d.rest(), math.MaxInt32))
	ix.docs = make([]doc, ndocs)
	ix.lens = make([]int32, ndocs)
	ix.heads = make([]int32, ndocs)
	// terms counts each document's terms; left, its postings not yet
	// seen: a compact array that the postings, read term by term, check
	// against. (The counts in the postings are checked with the
	// documents' own: the sum of each document's equals its length.)
	terms := make([]int32, ndocs)
	left := make([]int32, ndocs)
	total := 0
	for id := range ndocs {
		n := d.count(math.MaxInt32)
		if n == 0 {
			continue
		}
		total += n - 1
		ix.lens[id] = int32(d.count(math.MaxInt32))
		ix.heads[id] = int32(d.count(int(ix.lens[id])))
		ix.htotal += int64(ix.heads[id])
		terms[id], left[id] = int32(n-1), int32(n-1)
		ix.docs[id].state = live
		ix.live++
		ix.total += int64(ix.lens[id])
	}
	if d.err != nil {
		return nil, d.err
	}
	if total > d.rest()/4 {
		d.fail("%d postings cannot fit in %d bytes", total, d.rest())
		return nil, d.err
	}
	nterms := d.count(d.rest() / 2)
	ix.lists = make([]postings, nterms)
	ix.terms = make(map[string]int32, nterms)
	allDocs, allTFs, allRFs := make([]int32, total), make([]uint8, total), make([]uint8, total)
	// Each document's first-field counts (each count less its second
	// field's), summed, are checked against its first field's length:
	// equal, or more where a second field's count was kept at its most
	// (packRest).
	hsum, capped := make([]int64, ndocs), make([]bool, ndocs)
	// The terms are substrings of one builder's text: a few allocations
	// instead of one per term, and none of data kept.
	var text strings.Builder
	text.Grow(min(d.rest()/8, 1<<20))
	var hashPosts, hashDocs uint64
	at := 0
	for tid := range nterms {
		term := d.str(&text, d.count(maxTokenBytes*4))
		// One map operation a term: a term listed twice leaves the map
		// short of one entry.
		ix.terms[term] = int32(tid)
		if len(ix.terms) != tid+1 || term == "" {
			d.fail("term %q listed twice or empty", term)
		}
		df := d.count(total - at)
		if df == 0 {
			d.fail("term %q has no documents", term)
		}
		l := &ix.lists[tid]
		l.term, l.df = term, int32(df)
		l.docs, l.tfs, l.rfs = allDocs[at:at+df:at+df], allTFs[at:at+df:at+df], allRFs[at:at+df:at+df]
		at += df
		if d.err != nil {
			break
		}
		// The hot loop: varints decoded from a local slice, which holds
		// at least the next posting (three numbers of at most ten bytes)
		// unless the body ends first.
		b, i, prev := d.b, 0, -1
		for j := range l.docs {
			if len(b)-i < 3*binary.MaxVarintLen64 && d.left > 0 {
				d.b = b[i:]
				d.fill(3 * binary.MaxVarintLen64)
				b, i = d.b, 0
			}
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
			rest, h := uvAt(b, i)
			if h <= 0 {
				d.fail("posting %d of term %q is truncated", j, term)
				break
			}
			i += h
			// Clamped past the end, so that a delta too large is refused
			// rather than read as the last document.
			doc := prev + int(min(delta, uint64(ndocs)+1))
			if delta == 0 || doc >= ndocs || tf64 == 0 || tf64 > math.MaxInt32 || left[doc] == 0 ||
				rest > min(tf64, math.MaxUint8) {
				d.fail("posting %d of term %q is out of order or range", j, term)
				break
			}
			tf := int32(tf64)
			l.docs[j], l.tfs[j], l.rfs[j] = int32(doc), uint8(min(tf, tfOverflow)), uint8(rest)
			hsum[doc] += int64(tf) - int64(rest)
			capped[doc] = capped[doc] || rest == math.MaxUint8
			left[doc]--
			hashPosts += pairHash(doc, tid, tf)
			prev = doc
		}
		if d.err != nil {
			break
		}
		d.b = b[i:]
	}
	if d.err == nil && at != total {
		d.fail("%d postings for %d document terms", at, total)
	}
	for id := 0; d.err == nil && id < ndocs; id++ {
		if left[id] != 0 {
			d.fail("document %d has %d terms not in the postings", id, left[id])
		}
	}
	if d.err != nil {
		return nil, d.err
	}
	for id := 0; d.err == nil && id < ndocs; id++ {
		if hl := int64(ix.heads[id]); hsum[id] != hl && (!capped[id] || hsum[id] < hl) {
			d.fail("document %d has %d first-field tokens in its postings, %d in its length", id, hsum[id], hl)
		}
	}
	// Each document's terms, in document order, are checked, and kept
	// packed as the snapshot has them (docTerms reads them): the rest of
	// the body, the one section the index keeps as it is.
	b := d.section()
	starts := make([]int, ndocs+1)
	seen := make([]int32, nterms) // documents listing each term
	off, i := 0, 0
	for id := 0; id < ndocs && d.err == nil; id++ {
		starts[id] = i
		if ix.docs[id].state != live {
			continue
		}
		start, prev, toks := off, -1, int64(0)
		for end := start + int(terms[id]); off < end; {
			delta, n := uvAt(b, i)
			if n <= 0 {
				d.fail("terms of document %d are truncated", id)
				break
			}
			i += n
			tf64, m := uvAt(b, i)
			if m <= 0 {
				d.fail("terms of document %d are truncated", id)
				break
			}
			i += m
			tid := prev + int(min(delta, uint64(nterms)+1))
			if delta == 0 || tid >= nterms || tf64 == 0 || tf64 > uint64(ix.lens[id]) {
				d.fail("term %d of document %d is out of order or range", off-start, id)
				break
			}
			tf := int32(tf64)
			seen[tid]++
			toks += int64(tf)
			hashDocs += pairHash(id, tid, tf)
			prev = tid
			off++
		}
		if d.err == nil && toks != int64(ix.lens[id]) {
			d.fail("document %d has %d tokens in its terms, %d in its length", id, toks, ix.lens[id])
		}
	}
	if d.err == nil && i != len(b) {
		d.fail("%d bytes left over", len(b)-i)
	}
	if d.err == nil {
		starts[ndocs] = i
		for id := range ndocs {
			if dc := &ix.docs[id]; dc.state == live {
				lo, hi := starts[id], starts[id+1]
				dc.terms, dc.n = b[lo:hi:hi], terms[id]
			}
		}
	}
	for tid := 0; d.err == nil && tid < nterms; tid++ {
		if seen[tid] != ix.lists[tid].df {
			d.fail("term %q is listed by %d documents and has %d", ix.lists[tid].term, seen[tid], ix.lists[tid].df)
		}
	}
	if d.err == nil && hashPosts != hashDocs {
		d.fail("the postings and the documents' terms disagree")
	}
	if d.err != nil {
		return nil, d.err
	}
	ix.npost = total
	ix.countPrefixWords()
	return ix, nil
}

// pairHash mixes one (document, term, count) into 64 bits (SplitMix64's
// finaliser), for Decode's order-free comparison of the postings with
// the documents' term lists.
func pairHash(doc, tid int, tf int32) uint64 {
	x := uint64(doc)<<32 | uint64(uint32(tid))
	x ^= uint64(uint32(tf)) * 0x9e3779b97f4a7c15
	x ^= x >> 30
	x *= 0xbf58476d1ce4e5b9
	x ^= x >> 27
	x *= 0x94d049bb133111eb
	return x ^ x>>31
}

// decoder reads uvarints from a snapshot body, remembering the first
// error. The body is either all in b (Decode) or read from r a window at
// a time (ReadSized): then b is the unread end of win, left counts the
// body's bytes not read from r yet, and crc is the checksum of those
// read and consumed.
type decoder struct {
	b   []byte
	err error

	r      io.Reader
	window int // the least read from r at a time
	win    []byte
	left   int64
	crc    uint32
}

// snapWindow is how much of a snapshot ReadSized reads at a time.
const snapWindow = 256 << 10

// rest returns how many bytes of the body are left to decode.
func (d *decoder) rest() int {
	return int(min(int64(len(d.b))+d.left, math.MaxInt))
}

// fill makes at least k bytes unread in b, or all that is left of the
// body, reading from r.
func (d *decoder) fill(k int) {
	if len(d.b) >= k || d.left == 0 || d.err != nil {
		return
	}
	d.crc = crc32.Update(d.crc, crc32.IEEETable, d.win[:len(d.win)-len(d.b)])
	size := min(int64(max(k, d.window)), int64(len(d.b))+d.left)
	win := d.win[:cap(d.win)]
	if int64(len(win)) < size {
		win = make([]byte, size)
	}
	n := copy(win, d.b)
	m := int(min(int64(len(win)-n), d.left))
	if _, err := io.ReadFull(d.r, win[n:n+m]); err != nil {
		d.readFailed(err)
		d.b, d.win = nil, nil
		return
	}
	d.left -= int64(m)
	d.win = win[:n+m]
	d.b = d.win
}

// section returns the rest of the body, for the index to keep: a copy of
// it when the body is in memory, else read from r into a buffer of its
// own.
func (d *decoder) section() []byte {
	if d.err != nil {
		return nil
	}
	if d.r == nil {
		s := bytes.Clone(d.b)
		d.b = d.b[len(d.b):]
		return s
	}
	d.crc = crc32.Update(d.crc, crc32.IEEETable, d.win[:len(d.win)-len(d.b)])
	s := make([]byte, int64(len(d.b))+d.left)
	n := copy(s, d.b)
	d.b, d.win = nil, nil
	if _, err := io.ReadFull(d.r, s[n:]); err != nil {
		d.readFailed(err)
		return nil
	}
	d.left = 0
	d.crc = crc32.Update(d.crc, crc32.IEEETable, s)
	return s
}

// readFailed records an error reading r: the end of r before the size
// given is a truncated snapshot.
func (d *decoder) readFailed(err error) {
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
		d.fail("truncated snapshot")
		return
	}
	if d.err == nil {
		d.err = fmt.Errorf("read index snapshot: %w", err)
	}
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
	if len(d.b) < binary.MaxVarintLen64 {
		d.fill(binary.MaxVarintLen64)
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

// str returns the next n bytes, appended to text, as a substring of
// text's content.
func (d *decoder) str(text *strings.Builder, n int) string {
	if d.err != nil {
		return ""
	}
	d.fill(n)
	if n > len(d.b) {
		d.fail("truncated text")
		return ""
	}
	start := text.Len()
	text.Write(d.b[:n])
	d.b = d.b[n:]
	return text.String()[start:]
}
