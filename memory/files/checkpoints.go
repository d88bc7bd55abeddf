package files

import (
	"cmp"
	"os"
	"slices"
	"sort"
)

// checkpoint is a position in a turn log just after a complete line: the
// line's Seq, the byte offset after its '\n' and its line number. The zero
// value is the start of the log.
type checkpoint struct {
	seq  int64
	off  int64
	line int
	used uint64
}

// maxCheckpoints bounds the positions remembered per scope; one per
// distinct reader position (for example a per-thread watermark) is enough.
const maxCheckpoints = 32

// checkpoints are the positions earlier reads of one log file ended at,
// sorted by seq.
type checkpoints struct {
	fi   os.FileInfo // the file they belong to
	list []checkpoint
	tick uint64
}

// start returns the last checkpoint with seq <= after in the file fi,
// forgetting checkpoints of a replaced file or beyond a shrunk one.
func (c *checkpoints) start(fi os.FileInfo, after int64) checkpoint {
	if c.fi == nil || !os.SameFile(c.fi, fi) {
		c.list = c.list[:0]
	}
	c.fi = fi
	c.list = slices.DeleteFunc(c.list, func(p checkpoint) bool { return p.off > fi.Size() })
	i := sort.Search(len(c.list), func(i int) bool { return c.list[i].seq > after })
	if i == 0 {
		return checkpoint{}
	}
	c.tick++
	c.list[i-1].used = c.tick
	return c.list[i-1]
}

// reset forgets every checkpoint of the current file.
func (c *checkpoints) reset() {
	c.list = c.list[:0]
}

// add remembers p for the file fi, evicting the least recently used
// checkpoint when full.
func (c *checkpoints) add(fi os.FileInfo, p checkpoint) {
	if p.line == 0 || c.fi == nil || !os.SameFile(c.fi, fi) {
		return
	}
	c.tick++
	p.used = c.tick
	i, found := slices.BinarySearchFunc(c.list, p.seq, func(q checkpoint, seq int64) int {
		return cmp.Compare(q.seq, seq)
	})
	if found {
		c.list[i] = p
		return
	}
	c.list = slices.Insert(c.list, i, p)
	if len(c.list) > maxCheckpoints {
		lru := 0
		for j := range c.list {
			if c.list[j].used < c.list[lru].used {
				lru = j
			}
		}
		c.list = slices.Delete(c.list, lru, lru+1)
	}
}

// extend remembers the end of lines appended to the file fi at from, when
// a read ended at from: the next read after them then starts at their
// end instead of reading back what this Store just wrote.
func (c *checkpoints) extend(fi os.FileInfo, from, to, seq int64, lines int) {
	if c.fi == nil || !os.SameFile(c.fi, fi) {
		return
	}
	for _, p := range c.list {
		if p.off == from && p.line > 0 {
			c.add(fi, checkpoint{seq: seq, off: to, line: p.line + lines})
			return
		}
	}
}
