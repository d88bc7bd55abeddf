package relit

import "strings"

// Set tests many gates in one scan of a text: where Gate.Open reads the
// text once per literal, Set.Scan reads it once for all the gates'
// literals, looking a literal up only where its first two bytes stand.
// It says what each gate's Open would say.
type Set struct {
	gates [][][]int32 // per gate, its literal sets as ids into lits
	lits  []lit
	exact table // the literals matched as written
	fold  table // the case-insensitive ones, in lower case
	folds []int32
}

// table finds the literals that start at a place of a text.
type table struct {
	// starts has bit b0<<8|b1 set when a literal of at least two bytes
	// starts with b0, b1; pairs lists them. ones lists the literals of
	// one byte by that byte.
	starts [1 << 16 / 64]uint64
	pairs  map[uint16][]int32
	ones   [256][]int32
}

func (tb *table) add(id int32, s string) {
	if len(s) == 1 {
		tb.ones[s[0]] = append(tb.ones[s[0]], id)
		return
	}
	k := uint16(s[0])<<8 | uint16(s[1])
	tb.starts[k/64] |= 1 << (k % 64)
	if tb.pairs == nil {
		tb.pairs = make(map[uint16][]int32)
	}
	tb.pairs[k] = append(tb.pairs[k], id)
}

// NewSet returns the set of gates, in their order.
func NewSet(gates []Gate) *Set {
	s := &Set{gates: make([][][]int32, len(gates))}
	ids := make(map[lit]int32)
	for i, g := range gates {
		for _, set := range g.all {
			var refs []int32
			for _, l := range set {
				id, ok := ids[l]
				if !ok {
					id = int32(len(s.lits))
					ids[l] = id
					s.lits = append(s.lits, l)
					switch {
					case l.s == "":
						// Matches everywhere: found before any scan.
					case l.fold:
						s.fold.add(id, l.s)
						s.folds = append(s.folds, id)
					default:
						s.exact.add(id, l.s)
					}
				}
				refs = append(refs, id)
			}
			s.gates[i] = append(s.gates[i], refs)
		}
	}
	return s
}

// Open holds which gates of a Set are open for one text.
type Open struct{ bits []uint64 }

// Has reports whether gate i may match the text.
func (o Open) Has(i int) bool { return o.bits[i/64]&(1<<(i%64)) != 0 }

// Scan returns which of the set's gates may match t.
func (s *Set) Scan(t Text) Open {
	found := make([]uint64, (len(s.lits)+63)/64)
	for id, l := range s.lits {
		if l.s == "" {
			found[id/64] |= 1 << (id % 64)
		}
	}
	s.exact.scan(s.lits, t.s, found)
	switch {
	case !t.ascii:
		// As Open: case folding reaches past ASCII, so a folded
		// literal counts as there.
		for _, id := range s.folds {
			found[id/64] |= 1 << (id % 64)
		}
	case len(s.folds) > 0:
		s.fold.scan(s.lits, t.lower, found)
	}
	open := Open{bits: make([]uint64, (len(s.gates)+63)/64)}
	for i, sets := range s.gates {
		ok := true
		for _, refs := range sets {
			one := false
			for _, id := range refs {
				if found[id/64]&(1<<(id%64)) != 0 {
					one = true
					break
				}
			}
			if !one {
				ok = false
				break
			}
		}
		if ok {
			open.bits[i/64] |= 1 << (i % 64)
		}
	}
	return open
}

// scan marks in found the literals of tb that text holds where their
// flags allow (see lit).
func (tb *table) scan(lits []lit, text string, found []uint64) {
	first := 0 // the first word byte, where a literal marked first must be
	for first < len(text) && !isWordByte(text[first]) {
		first++
	}
	mark := func(id int32, i int) {
		if found[id/64]&(1<<(id%64)) != 0 {
			return
		}
		l := lits[id]
		end := i + len(l.s)
		switch {
		case l.first && i != first:
		case l.before && i > 0 && isWordByte(text[i-1]):
		case l.after && end < len(text) && isWordByte(text[end]):
		case !strings.HasPrefix(text[i:], l.s):
		default:
			found[id/64] |= 1 << (id % 64)
		}
	}
	for i := 0; i < len(text); i++ {
		for _, id := range tb.ones[text[i]] {
			mark(id, i)
		}
		if i+1 < len(text) {
			k := uint16(text[i])<<8 | uint16(text[i+1])
			if tb.starts[k/64]&(1<<(k%64)) != 0 {
				for _, id := range tb.pairs[k] {
					mark(id, i)
				}
			}
		}
	}
}
