package tiktoken

import "math"

// noRank marks a pair of parts that is not a token.
const noRank = math.MaxInt

// mergeCount returns how many tokens the byte-pair merge turns piece into:
// starting from single bytes, it repeatedly joins the adjacent pair whose
// joined bytes have the lowest rank (the leftmost one on a tie) until no
// adjacent pair is a token. Only the count is kept, so no token is looked up
// twice and nothing is allocated for pieces of up to 127 bytes.
func mergeCount(piece string, ranks map[string]int) int {
	if len(piece) < 2 {
		return len(piece)
	}
	// part i starts at start[i] and would merge with part i+1 at rank[i];
	// the last entry is the end of the piece.
	type part struct{ start, rank int }
	var buf [128]part
	var parts []part
	if len(piece)+1 <= len(buf) {
		parts = buf[:len(piece)+1]
	} else {
		parts = make([]part, len(piece)+1)
	}
	rankOf := func(i int) int { // rank of parts i and i+1 joined
		if i+2 >= len(parts) {
			return noRank
		}
		if r, ok := ranks[piece[parts[i].start:parts[i+2].start]]; ok {
			return r
		}
		return noRank
	}
	for i := range parts {
		parts[i] = part{start: i, rank: noRank}
	}
	for i := 0; i+2 < len(parts); i++ {
		parts[i].rank = rankOf(i)
	}
	for len(parts) > 2 {
		best, at := noRank, -1
		for i, p := range parts[:len(parts)-1] {
			if p.rank < best {
				best, at = p.rank, i
			}
		}
		if at < 0 {
			break
		}
		parts = append(parts[:at+1], parts[at+2:]...)
		parts[at].rank = rankOf(at)
		if at > 0 {
			parts[at-1].rank = rankOf(at - 1)
		}
	}
	return len(parts) - 1
}
