package lexical

import (
	"bytes"
	"encoding/binary"
	"errors"
	"hash/crc32"
	"maps"
	"math/rand/v2"
	"reflect"
	"slices"
	"strings"
	"testing"
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
		ix, err := Read(bytes.NewReader(reseal(append([]byte(snapshotMagic), body...))), Options{})
		if err != nil {
			if !errors.Is(err, ErrSnapshot) {
				t.Fatalf("Read() error %v does not wrap ErrSnapshot", err)
			}
			return
		}
		checkInvariants(t, ix)
		ix.Search("a b c", 10, nil)
		ix.Add(len(ix.docs), "a new document")
		checkInvariants(t, ix)
	})
}
