package tiktoken

import (
	"bytes"
	"encoding/base64"
	"fmt"
	"hash/maphash"
	"math/bits"
	"slices"
	"strconv"
	"strings"

	"github.com/pkoukk/tiktoken-go-loader/assets"
)

// loadRanks reads the ranks of the embedded BPE file name (one "<base64
// token> <rank>" a line), the same ranks tiktoken-go-loader's
// LoadTiktokenBpe returns as a map. It is written here because that loader
// costs about 110 ms of CPU a start (a copy of the file, a slice of lines
// and four allocations a line, a map grown step by step), on the path of a
// restart's first retrieval; this one decodes every token into one string
// and builds the table once.
func loadRanks(name string) (*rankTable, error) {
	data, err := assets.Assets.ReadFile(name)
	if err != nil {
		return nil, fmt.Errorf("read BPE ranks %s: %w", name, err)
	}
	lines := bytes.Count(data, []byte{'\n'}) + 1
	// Each token decodes to at most 3/4 of its base64 length.
	var sb strings.Builder
	sb.Grow(len(data) * 3 / 4)
	type entry struct{ start, end, rank int }
	entries := make([]entry, 0, lines)
	var buf []byte
	for n := 1; len(data) > 0; n++ {
		line := data
		if i := bytes.IndexByte(data, '\n'); i >= 0 {
			line, data = data[:i], data[i+1:]
		} else {
			data = nil
		}
		if len(line) == 0 {
			continue
		}
		tok, num, ok := bytes.Cut(line, []byte{' '})
		if !ok {
			return nil, fmt.Errorf("read BPE ranks %s: line %d has no rank", name, n)
		}
		buf = slices.Grow(buf[:0], base64.StdEncoding.DecodedLen(len(tok)))[:base64.StdEncoding.DecodedLen(len(tok))]
		k, err := base64.StdEncoding.Decode(buf, tok)
		if err != nil {
			return nil, fmt.Errorf("read BPE ranks %s: line %d: %w", name, n, err)
		}
		rank, err := strconv.Atoi(string(num))
		if err != nil {
			return nil, fmt.Errorf("read BPE ranks %s: line %d: %w", name, n, err)
		}
		start := sb.Len()
		sb.Write(buf[:k])
		entries = append(entries, entry{start, sb.Len(), rank})
	}
	t, err := newRankTable(sb.String(), len(entries))
	if err != nil {
		return nil, fmt.Errorf("read BPE ranks %s: %w", name, err)
	}
	for _, e := range entries {
		if err := t.put(e.start, e.end, e.rank); err != nil {
			return nil, fmt.Errorf("read BPE ranks %s: %w", name, err)
		}
	}
	return t, nil
}

// Limits of a rankTable slot's fields.
const (
	slotLenBits  = 12
	slotRankBits = 20
	maxTokenLen  = 1<<slotLenBits - 1
	maxRank      = 1<<slotRankBits - 1
)

// rankTable maps each token (a byte string) to its rank, as a
// map[string]int would, but holds no pointer the garbage collector must
// follow but two: the tokens are one string, and each slot of the
// open-addressed table packs a token's offset in it, its length and its
// rank into a uint64 (0: empty). A map of the 100,000 to 200,000 tokens
// held as many string headers, which every GC cycle of the process
// scanned: with cl100k loaded, runtime.GC took 4.2 ms instead of 0.3.
type rankTable struct {
	all   string   // every token, one after the other
	slots []uint64 // offset<<32 | length<<slotRankBits | rank; 0 is empty
	mask  uint64
	n     int
	seed  maphash.Seed
}

// newRankTable returns an empty table over the tokens all for n of them,
// at most half full once they are put.
func newRankTable(all string, n int) (*rankTable, error) {
	if len(all) >= 1<<32 {
		return nil, fmt.Errorf("%d bytes of tokens, more than a table holds", len(all))
	}
	size := uint64(1) << bits.Len(uint(2*max(n, 1)))
	return &rankTable{all: all, slots: make([]uint64, size), mask: size - 1, seed: maphash.MakeSeed()}, nil
}

// put gives the token all[start:end] the rank, replacing the rank an
// equal token had, as a map assignment does.
func (t *rankTable) put(start, end, rank int) error {
	n := end - start
	switch {
	case n <= 0 || n > maxTokenLen:
		return fmt.Errorf("a token of %d bytes: a table holds 1 to %d", n, maxTokenLen)
	case rank < 0 || rank > maxRank:
		return fmt.Errorf("rank %d: a table holds 0 to %d", rank, maxRank)
	case uint64(t.n+1) > t.mask/2+1:
		return fmt.Errorf("more than the %d tokens the table was made for", t.mask/2+1)
	}
	slot := uint64(start)<<32 | uint64(n)<<slotRankBits | uint64(rank)
	tok := t.all[start:end]
	for i := maphash.String(t.seed, tok) & t.mask; ; i = (i + 1) & t.mask {
		switch e := t.slots[i]; {
		case e == 0:
			t.slots[i] = slot
			t.n++
			return nil
		case t.token(e) == tok:
			t.slots[i] = slot
			return nil
		}
	}
}

// get returns the rank of the token s, and whether s is one.
func (t *rankTable) get(s string) (int, bool) {
	if len(s) == 0 || len(s) > maxTokenLen {
		return 0, false
	}
	for i := maphash.String(t.seed, s) & t.mask; ; i = (i + 1) & t.mask {
		e := t.slots[i]
		if e == 0 {
			return 0, false
		}
		if int(e>>slotRankBits)&maxTokenLen == len(s) && t.token(e) == s {
			return int(e & maxRank), true
		}
	}
}

// token is the token of the slot e.
func (t *rankTable) token(e uint64) string {
	start := int(e >> 32)
	return t.all[start : start+int(e>>slotRankBits)&maxTokenLen]
}

// len returns the number of tokens in t.
func (t *rankTable) len() int { return t.n }
