package tiktoken

import (
	"bytes"
	"encoding/base64"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/pkoukk/tiktoken-go-loader/assets"
)

// loadRanks reads the ranks of the embedded BPE file name (one "<base64
// token> <rank>" a line), the same map tiktoken-go-loader's
// LoadTiktokenBpe returns. It is written here because that loader costs
// about 110 ms of CPU a start (a copy of the file, a slice of lines and
// four allocations a line, a map grown step by step), on the path of a
// restart's first retrieval; this one decodes every token into one string
// and sizes the map once.
func loadRanks(name string) (map[string]int, error) {
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
	all := sb.String()
	ranks := make(map[string]int, len(entries))
	for _, e := range entries {
		ranks[all[e.start:e.end]] = e.rank
	}
	return ranks, nil
}
