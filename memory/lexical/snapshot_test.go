package lexical

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"maps"
	"math/rand/v2"
	"reflect"
	"slices"
	"strings"
	"testing"
	"testing/iotest"
)

// sameBehaviour fails unless a and b answer alike: the same documents,
// term counts, lengths and search results (ids and scores) for every term.
func sameBehaviour(tb testing.TB, a, b *Index) {
	tb.Helper()
	checkInvariants(tb, a)
	checkInvariants(tb, b)
	if a.Len() != b.Len() || a.total != b.total {
		tb.Fatalf("Len() = %d / %d, total tokens %d / %d", a.Len(), b.Len(), a.total, b.total)
	}
	for id := range max(len(a.docs), len(b.docs)) {
		ta, tb2 := map[string]int{}, map[string]int{}
		a.DocTerms(id, func(t string, n int) { ta[t] = n })
		b.DocTerms(id, func(t string, n int) { tb2[t] = n })
		if !maps.Equal(ta, tb2) {
			tb.Fatalf("DocTerms(%d) = %v / %v", id, ta, tb2)
		}
	}
	for _, term := range slices.Sorted(maps.Keys(a.terms)) {
		ha, hb := a.Search(term, 1000, nil), b.Search(term, 1000, nil)
		if !reflect.DeepEqual(ha, hb) {
			tb.Fatalf("Search(%q) = %v / %v", term, ha, hb)
		}
	}
}

func snapshot(tb testing.TB, ix *Index) []byte {
	tb.Helper()
	var buf bytes.Buffer
	n, err := ix.WriteTo(&buf)
	if err != nil || n != int64(buf.Len()) {
		tb.Fatalf("WriteTo() = %d, %v; wrote %d bytes", n, err, buf.Len())
	}
	return buf.Bytes()
}

func TestSnapshotRoundTrip(t *testing.T) {
	corpus := benchCorpus(400)
	tests := []struct {
		name  string
		build func(ix *Index)
		exact bool // no removals: term ids are kept too
	}{
		{"empty", func(*Index) {}, false},
		{"documents", func(ix *Index) {
			for i, d := range corpus {
				ix.Add(i, d)
			}
		}, true},
		{"cjk and empty documents", func(ix *Index) {
			for i, d := range []string{"我喜欢喝咖啡", "", "他喜欢喝茶", "the and of", "数据库 database", strings.Repeat("tea ", 300) + "coffee"} {
				ix.Add(i, d)
			}
		}, true},
		{"gaps, removals and replacements", func(ix *Index) {
			r := rand.New(rand.NewPCG(1, 2))
			for i, d := range corpus {
				ix.Add(i*2, d)
			}
			for range 300 {
				id := 2 * r.IntN(len(corpus))
				if r.IntN(2) == 0 {
					ix.Remove(id)
				} else {
					ix.Add(id, corpus[r.IntN(len(corpus))])
				}
			}
		}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ix := New(Options{})
			tt.build(ix)
			got, err := Read(bytes.NewReader(snapshot(t, ix)), Options{})
			if err != nil {
				t.Fatalf("Read() = %v", err)
			}
			sameBehaviour(t, ix, got)
			if tt.exact {
				sameIndex(t, ix, got)
			}
			// Both go on alike: appends to the carved lists must not
			// spill into their neighbours.
			for i, d := range corpus[:50] {
				id := len(corpus)*2 + i
				ix.Add(id, d)
				got.Add(id, d)
				ix.Add(i, corpus[len(corpus)-1-i])
				got.Add(i, corpus[len(corpus)-1-i])
				ix.Remove(id - 7)
				got.Remove(id - 7)
			}
			sameBehaviour(t, ix, got)
		})
	}
}

// reseal returns body with the snapshot checksum appended.
func reseal(body []byte) []byte {
	return binary.LittleEndian.AppendUint32(slices.Clone(body), crc32.ChecksumIEEE(body))
}

func TestSnapshotRefusesBadInput(t *testing.T) {
	ix := New(Options{})
	for i, d := range benchCorpus(50) {
		ix.Add(i, d)
	}
	good := snapshot(t, ix)
	body := good[:len(good)-4]
	otherAnalyzer := append([]byte(snapshotMagic), binary.AppendUvarint(nil, analyzerVersion+1)...)
	otherAnalyzer = append(otherAnalyzer, body[len(snapshotMagic)+1:]...)
	tests := []struct {
		name string
		data []byte
	}{
		{"empty", nil},
		{"other format", append([]byte("MNLX\x01"), good[5:]...)},
		{"truncated", good[:len(good)/2]},
		{"one byte flipped", func() []byte { b := slices.Clone(good); b[len(b)/3] ^= 0x40; return b }()},
		{"other analyzer version", reseal(otherAnalyzer)},
		{"postings cut short, checksum redone", reseal(body[:len(body)-3])},
		{"trailing bytes, checksum redone", reseal(append(slices.Clone(body), 1, 2, 3))},
		// The last bytes are the last document's term list (format 2):
		// a term id or count there that the postings do not hold.
		{"a document's term disagrees with the postings, checksum redone", func() []byte { b := slices.Clone(body); b[len(b)-2]++; return reseal(b) }()},
		{"a document's count disagrees with the postings, checksum redone", func() []byte { b := slices.Clone(body); b[len(b)-1]++; return reseal(b) }()},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Read(bytes.NewReader(tt.data), Options{})
			if !errors.Is(err, ErrSnapshot) || got != nil {
				t.Errorf("Read() = %v, %v; want an ErrSnapshot error", got, err)
			}
		})
	}
}

// FuzzReadSnapshot feeds Read snapshot bodies with a valid checksum, so
// that the decoder itself is exercised: it must refuse or return an index
// that keeps its invariants, never panic.
func FuzzReadSnapshot(f *testing.F) {
	for _, docs := range [][]string{nil, {"a b c", "b c d"}, benchCorpus(20)} {
		ix := New(Options{})
		for i, d := range docs {
			ix.Add(i, d)
		}
		var buf bytes.Buffer
		ix.WriteTo(&buf)
		f.Add(buf.Bytes()[len(snapshotMagic) : buf.Len()-4])
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		data := reseal(append([]byte(snapshotMagic), body...))
		ix, err := Read(bytes.NewReader(data), Options{})
		// ReadSized, a few bytes at a time, refuses and accepts alike.
		sized, serr := readSized(iotest.HalfReader(bytes.NewReader(data)), int64(len(data)), Options{}, 16)
		if (err == nil) != (serr == nil) {
			t.Fatalf("Read() error %v, ReadSized() error %v", err, serr)
		}
		if err != nil {
			if !errors.Is(err, ErrSnapshot) || !errors.Is(serr, ErrSnapshot) {
				t.Fatalf("Read() error %v or ReadSized() error %v does not wrap ErrSnapshot", err, serr)
			}
			return
		}
		sameIndex(t, ix, sized)
		checkInvariants(t, ix)
		ix.Search("a b c", 10, nil)
		ix.Add(len(ix.docs), "a new document")
		checkInvariants(t, ix)
	})
}

// TestReadSized checks that ReadSized, whatever its window and however r
// splits its reads, rebuilds the index Decode rebuilds, and reads no
// more of r than the size it is given.
func TestReadSized(t *testing.T) {
	corpus := benchCorpus(300)
	indexes := map[string]func() *Index{
		"empty": func() *Index { return New(Options{}) },
		"documents": func() *Index {
			ix := New(Options{})
			for i, d := range corpus {
				ix.Add(i, d)
			}
			return ix
		},
		"removals and a long document": func() *Index {
			ix := New(Options{})
			for i, d := range corpus {
				ix.Add(i*3, d)
			}
			for i := range 40 {
				ix.Remove(i * 9)
			}
			ix.Add(1, strings.Repeat("tea coffee ", 400))
			return ix
		},
	}
	readers := map[string]func(io.Reader) io.Reader{
		"whole":    func(r io.Reader) io.Reader { return r },
		"one byte": iotest.OneByteReader,
		"halves":   iotest.HalfReader,
	}
	for name, build := range indexes {
		ix := build()
		data := snapshot(t, ix)
		want, err := Decode(data, Options{})
		if err != nil {
			t.Fatalf("%s: Decode() = %v", name, err)
		}
		for rname, wrap := range readers {
			for _, window := range []int{1, 7, 64, 4096, snapWindow} {
				t.Run(fmt.Sprintf("%s/%s/window %d", name, rname, window), func(t *testing.T) {
					r := bytes.NewReader(append(slices.Clone(data), "after"...))
					got, err := readSized(wrap(r), int64(len(data)), Options{}, window)
					if err != nil {
						t.Fatalf("readSized() = %v", err)
					}
					sameIndex(t, want, got)
					sameBehaviour(t, ix, got)
					if rest, _ := io.ReadAll(r); string(rest) != "after" {
						t.Errorf("readSized() left %q of what follows the snapshot, want %q", rest, "after")
					}
				})
			}
		}
	}
}

// TestReadSizedRefusesBadInput holds ReadSized to Decode's refusals, and
// checks that a short or failing reader is a truncated snapshot or the
// reader's own error.
func TestReadSizedRefusesBadInput(t *testing.T) {
	ix := New(Options{})
	for i, d := range benchCorpus(50) {
		ix.Add(i, d)
	}
	good := snapshot(t, ix)
	body := good[:len(good)-4]
	tests := map[string][]byte{
		"empty":               nil,
		"other format":        append([]byte("MNLX\x01"), good[5:]...),
		"truncated":           good[:len(good)/2],
		"checksum cut":        good[:len(good)-1],
		"checksum flipped":    func() []byte { b := slices.Clone(good); b[len(b)-1] ^= 1; return b }(),
		"one byte flipped":    func() []byte { b := slices.Clone(good); b[len(b)/3] ^= 0x40; return b }(),
		"a posting flipped":   func() []byte { b := slices.Clone(good); b[len(b)/5] ^= 0x01; return b }(),
		"cut short, resealed": reseal(body[:len(body)-3]),
		"trailing, resealed":  reseal(append(slices.Clone(body), 1, 2, 3)),
		"term list, resealed": func() []byte { b := slices.Clone(body); b[len(b)-2]++; return reseal(b) }(),
	}
	for name, data := range tests {
		for _, window := range []int{1, 64, snapWindow} {
			t.Run(fmt.Sprintf("%s/window %d", name, window), func(t *testing.T) {
				got, err := readSized(bytes.NewReader(data), int64(len(data)), Options{}, window)
				if !errors.Is(err, ErrSnapshot) || got != nil {
					t.Errorf("readSized() = %v, %v; want an ErrSnapshot error", got, err)
				}
			})
		}
	}
	t.Run("size past the end", func(t *testing.T) {
		got, err := ReadSized(bytes.NewReader(good), int64(len(good))+10, Options{})
		if !errors.Is(err, ErrSnapshot) || got != nil {
			t.Errorf("ReadSized() = %v, %v; want an ErrSnapshot error", got, err)
		}
	})
	t.Run("reader fails", func(t *testing.T) {
		boom := errors.New("disk on fire")
		r := io.MultiReader(bytes.NewReader(good[:len(good)/2]), iotest.ErrReader(boom))
		got, err := ReadSized(r, int64(len(good)), Options{})
		if !errors.Is(err, boom) || errors.Is(err, ErrSnapshot) || got != nil {
			t.Errorf("ReadSized() = %v, %v; want the reader's error, not ErrSnapshot", got, err)
		}
	})
}

// TestSnapshotRefusesLongDelta builds the snapshot of one document
// holding one term by hand and checks that a document or term id written
// past the end is refused, not read as the last one (the deltas were
// once clamped to it).
func TestSnapshotRefusesLongDelta(t *testing.T) {
	build := func(docDelta, termDelta uint64) []byte {
		b := []byte(snapshotMagic)
		for _, x := range []uint64{analyzerVersion, 1, 2, 1, 0, 1, 1} { // version; 1 document: 1 term, length 1, no first field; 1 term, of 1 byte
			b = binary.AppendUvarint(b, x)
		}
		b = append(b, 'x')
		for _, x := range []uint64{1, docDelta, 1, 1, termDelta, 1} { // df; its posting (document, count, count outside a first field); the document's term
			b = binary.AppendUvarint(b, x)
		}
		return reseal(b)
	}
	tests := []struct {
		name                string
		docDelta, termDelta uint64
		ok                  bool
	}{
		{"as written", 1, 1, true},
		{"document past the end", 2, 1, false},
		{"document far past the end", 1 << 40, 1, false},
		{"term past the end", 1, 2, false},
		{"term far past the end", 1, 1 << 40, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			data := build(tt.docDelta, tt.termDelta)
			ix, err := Decode(data, Options{})
			sized, serr := ReadSized(bytes.NewReader(data), int64(len(data)), Options{})
			if tt.ok {
				if err != nil || serr != nil {
					t.Fatalf("Decode() = %v, ReadSized() = %v; want no error", err, serr)
				}
				sameIndex(t, ix, sized)
				if hits := ix.Search("x", 10, nil); len(hits) != 1 || hits[0].ID != 0 {
					t.Errorf("Search(x) = %v, want document 0", hits)
				}
				return
			}
			if !errors.Is(err, ErrSnapshot) || !errors.Is(serr, ErrSnapshot) {
				t.Errorf("Decode() = %v, ReadSized() = %v; want ErrSnapshot errors", err, serr)
			}
		})
	}
}

// TestSnapshotRefusesCrossedLists builds by hand snapshots whose
// postings and document term lists have the same counts everywhere (each
// document's terms, each term's documents, each document's length) but
// not the same entries: they are refused, and the lists as written read.
func TestSnapshotRefusesCrossedLists(t *testing.T) {
	// Two documents; "x" in document 0 (postingTF times, length len0,
	// first field head0, the posting's second-field count xRest), "y"
	// once in document 1 (length 1, all of it a first field, its
	// posting's second-field count yRest). lists are the documents' term
	// lists as (term id delta, count) pairs: document 0's, then 1's.
	build := func(len0, postingTF, head0, xRest, yRest uint64, lists [4]uint64) []byte {
		b := []byte(snapshotMagic)
		for _, x := range []uint64{analyzerVersion, 2, 2, len0, head0, 2, 1, 1, 2} { // version; 2 documents of 1 term; 2 terms
			b = binary.AppendUvarint(b, x)
		}
		b = binary.AppendUvarint(b, 1)
		b = append(b, 'x')
		b = binary.AppendUvarint(b, 1)         // df
		b = binary.AppendUvarint(b, 1)         // document 0
		b = binary.AppendUvarint(b, postingTF) // its count
		b = binary.AppendUvarint(b, xRest)     // in its second field
		b = binary.AppendUvarint(b, 1)
		b = append(b, 'y')
		for _, x := range []uint64{1, 2, 1, yRest} { // df; document 1, once
			b = binary.AppendUvarint(b, x)
		}
		for _, x := range lists {
			b = binary.AppendUvarint(b, x)
		}
		return reseal(b)
	}
	tests := []struct {
		name string
		data []byte
		ok   bool
	}{
		{"as written", build(1, 1, 0, 1, 0, [4]uint64{1, 1, 2, 1}), true},
		{"twice in document 0, as written", build(2, 2, 0, 2, 0, [4]uint64{1, 2, 2, 1}), true},
		{"the documents' terms crossed", build(1, 1, 0, 1, 0, [4]uint64{2, 1, 1, 1}), false},
		{"a count that is not the posting's", build(2, 1, 0, 1, 0, [4]uint64{1, 2, 2, 1}), false},
		{"a first field, as written", build(2, 2, 1, 1, 0, [4]uint64{1, 2, 2, 1}), true},
		{"a first field of all the document, as written", build(2, 2, 2, 0, 0, [4]uint64{1, 2, 2, 1}), true},
		{"a second-field count above the count", build(2, 2, 1, 3, 0, [4]uint64{1, 2, 2, 1}), false},
		{"a first field counting more than its length", build(2, 2, 1, 0, 0, [4]uint64{1, 2, 2, 1}), false},
		{"a first field with no counts", build(2, 2, 1, 2, 0, [4]uint64{1, 2, 2, 1}), false},
		{"a second-field count past a byte", build(2, 2, 1, 256, 0, [4]uint64{1, 2, 2, 1}), false},
		{"a first field its posting does not count", build(1, 1, 0, 1, 1, [4]uint64{1, 1, 2, 1}), false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ix, err := Decode(tt.data, Options{})
			sized, serr := ReadSized(bytes.NewReader(tt.data), int64(len(tt.data)), Options{})
			if !tt.ok {
				if !errors.Is(err, ErrSnapshot) || !errors.Is(serr, ErrSnapshot) {
					t.Errorf("Decode() = %v, ReadSized() = %v; want ErrSnapshot errors", err, serr)
				}
				return
			}
			if err != nil || serr != nil {
				t.Fatalf("Decode() = %v, ReadSized() = %v; want no error", err, serr)
			}
			sameIndex(t, ix, sized)
			checkInvariants(t, ix)
			if hits := ix.Search("y", 10, nil); len(hits) != 1 || hits[0].ID != 1 {
				t.Errorf("Search(y) = %v, want document 1", hits)
			}
		})
	}
}
