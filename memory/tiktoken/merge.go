package tiktoken

import "math"

// longPiece is the length in bytes above which a piece is merged with a
// heap rather than by scanning all its parts for each merge.
const longPiece = 127

// noRank marks a pair of parts that is not a token.
const noRank = math.MaxInt

// mergeCount returns how many tokens the byte-pair merge turns piece into:
// starting from single bytes, it repeatedly joins the adjacent pair whose
// joined bytes have the lowest rank (the leftmost one on a tie) until no
// adjacent pair is a token. Only the count is kept, so no token is looked up
// twice and nothing is allocated for pieces of up to 127 bytes. Longer
// pieces (runs of one letter, of spaces, Han text without punctuation) go
// to mergeCountLong, which does the same merge in O(n log n).
func mergeCount(piece string, ranks *rankTable) int {
	if len(piece) < 2 {
		return len(piece)
	}
	if len(piece) > longPiece {
		return mergeCountLong(piece, ranks)
	}
	return mergeCountScan(piece, ranks)
}

// mergeCountScan is mergeCount by scanning all parts for the lowest rank
// before each merge: quadratic, and the fastest for short pieces.
func mergeCountScan(piece string, ranks *rankTable) int {
	// part i starts at start[i] and would merge with part i+1 at rank[i];
	// the last entry is the end of the piece.
	type part struct{ start, rank int }
	var buf [longPiece + 1]part
	var parts []part
	if len(piece) < len(buf) {
		parts = buf[:len(piece)+1]
	} else {
		parts = make([]part, len(piece)+1)
	}
	rankOf := func(i int) int { // rank of parts i and i+1 joined
		if i+2 >= len(parts) {
			return noRank
		}
		if r, ok := ranks.get(piece[parts[i].start:parts[i+2].start]); ok {
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

// mergeCountLong is mergeCount for long pieces: the parts form a linked
// list, and the candidate pairs wait in a heap ordered by rank, then by
// position, so each merge costs O(log n) instead of a scan. A merge makes
// the pairs on either side stale; they are left in the heap and skipped when
// they come out (a pair is current while its left part lives and holds the
// same rank: ranks are one per byte string, and parts only grow).
func mergeCountLong(piece string, ranks *rankTable) int {
	n := len(piece)
	next := make([]int, n+1) // part at i ends where next[i] starts; n is the end
	prev := make([]int, n+1)
	rank := make([]int, n+1) // rank of part i joined with the part after it
	for i := range n + 1 {
		next[i], prev[i], rank[i] = i+1, i-1, noRank
	}
	pairRank := func(i int) int {
		j := next[i]
		if j >= n {
			return noRank
		}
		if r, ok := ranks.get(piece[i:next[j]]); ok {
			return r
		}
		return noRank
	}
	var h pairHeap
	for i := range n - 1 {
		if rank[i] = pairRank(i); rank[i] != noRank {
			h.push(pair{rank[i], i})
		}
	}
	count := n
	for len(h) > 0 {
		p := h.pop()
		if rank[p.at] != p.rank || prev[p.at] == -2 {
			continue // stale
		}
		i, j := p.at, next[p.at]
		next[i] = next[j]
		prev[next[j]] = i
		prev[j] = -2 // merged away
		count--
		if rank[i] = pairRank(i); rank[i] != noRank {
			h.push(pair{rank[i], i})
		}
		if k := prev[i]; k >= 0 {
			if rank[k] = pairRank(k); rank[k] != noRank {
				h.push(pair{rank[k], k})
			}
		}
	}
	return count
}

// pair is a candidate merge of the part at byte at with the one after it.
type pair struct{ rank, at int }

func (p pair) less(q pair) bool { return p.rank < q.rank || p.rank == q.rank && p.at < q.at }

// pairHeap is a binary min-heap of pairs.
type pairHeap []pair

func (h *pairHeap) push(p pair) {
	*h = append(*h, p)
	s := *h
	for i := len(s) - 1; i > 0; {
		up := (i - 1) / 2
		if !s[i].less(s[up]) {
			break
		}
		s[i], s[up] = s[up], s[i]
		i = up
	}
}

func (h *pairHeap) pop() pair {
	s := *h
	top := s[0]
	last := len(s) - 1
	s[0] = s[last]
	s = s[:last]
	for i := 0; ; {
		small, l, r := i, 2*i+1, 2*i+2
		if l < len(s) && s[l].less(s[small]) {
			small = l
		}
		if r < len(s) && s[r].less(s[small]) {
			small = r
		}
		if small == i {
			break
		}
		s[i], s[small] = s[small], s[i]
		i = small
	}
	*h = s
	return top
}
