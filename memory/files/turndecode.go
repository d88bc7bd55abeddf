package files

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"strings"
	"time"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/mnemo-mcp/mnemo/memory"
)

// decodeTurn decodes one line of a turn log into t exactly as
// json.Unmarshal(line, t) would. Lines in the shape AppendTurns writes
// (compact, known keys, each once) are parsed directly, without
// reflection; anything else, including every malformed line, goes through
// json.Unmarshal, so errors are json's own.
func decodeTurn(line []byte, t *memory.Turn) error {
	x := *t
	if p := (turnParser{b: bytes.TrimSuffix(line, []byte{'\n'})}); p.turn(&x) {
		*t = x
		return nil
	}
	return json.Unmarshal(line, t)
}

// turnParser parses the compact JSON of one turn. Its methods return false
// as soon as the input strays from that shape: the caller then falls back
// to encoding/json, so the parser need only be right about what it
// accepts.
type turnParser struct {
	b   []byte
	i   int
	buf []byte // unescaped string scratch
	// spans are the strings read, not yet set: a line's are copied into
	// one allocation once it has parsed, not one each, or, with text, a
	// whole chunk's.
	spans  [6]span
	nspans int
	// text, when set, gathers the strings of the chunk the line is of,
	// at offset off, turn number num of the chunk (textArena).
	text     *textArena
	off, num int
}

// span is a string of the line, b[start:end], that a field of the turn
// (one of the key bits) is to be set to, or with esc, one unescaped into
// text.esc[start:end]. It names the field rather than pointing at it,
// which would move the turn being parsed to the heap.
type span struct {
	field      int
	start, end int
	esc        bool
}

// addSpan records that the field is to be set to the string at
// [start:end] of the line (esc false) or of text.esc; it reports false
// when the spans are full.
func (p *turnParser) addSpan(field, start, end int, esc bool) bool {
	if p.nspans == len(p.spans) {
		return false
	}
	p.spans[p.nspans] = span{field: field, start: start, end: end, esc: esc}
	p.nspans++
	return true
}

// setSpans sets the strings of p.spans, all substrings of one copy.
func (p *turnParser) setSpans(t *memory.Turn) {
	spans := p.spans[:p.nspans]
	if p.text != nil {
		for _, sp := range spans {
			if !sp.esc {
				sp.start, sp.end = sp.start+p.off, sp.end+p.off
			}
			p.text.spans = append(p.text.spans, textSpan{turn: int32(p.num), start: int32(sp.start), end: int32(sp.end), field: uint16(sp.field), esc: sp.esc})
		}
		p.nspans = 0
		return
	}
	n := 0
	for _, sp := range spans {
		n += sp.end - sp.start
	}
	var sb strings.Builder
	sb.Grow(n)
	for _, sp := range spans {
		sb.Write(p.b[sp.start:sp.end])
	}
	all, at := sb.String(), 0
	for _, sp := range spans {
		next := at + sp.end - sp.start
		setText(t, sp.field, all[at:next])
		at = next
	}
	p.nspans = 0
}

// setText sets the string field key of t (keyID, keyThread, keyUser or
// keyReply) to s.
func setText(t *memory.Turn, key int, s string) {
	switch key {
	case keyID:
		t.ID = s
	case keyThread:
		t.ThreadID = s
	case keyUser:
		t.User = s
	case keyReply:
		t.Reply = s
	}
}

// The keys of memory.Turn, as bits of a seen-set.
const (
	keyID = 1 << iota
	keySeq
	keyThread
	keyTime
	keyStored
	keyUser
	keyReply
	keySignals
	keyMeta
)

func (p *turnParser) turn(t *memory.Turn) bool {
	if !p.eat('{') {
		return false
	}
	if p.eat('}') {
		return p.i == len(p.b)
	}
	seen := 0
	for {
		key, ok := p.key()
		if !ok {
			return false
		}
		var bit int
		switch string(key) {
		case "id":
			bit = keyID
			ok = p.str(&t.ID, keyID)
		case "seq":
			bit = keySeq
			ok = p.int(&t.Seq)
		case "thread_id":
			bit = keyThread
			ok = p.str(&t.ThreadID, keyThread)
		case "time":
			bit = keyTime
			ok = p.time(&t.Time)
		case "stored":
			bit = keyStored
			ok = p.time(&t.Stored)
		case "user":
			bit = keyUser
			ok = p.str(&t.User, keyUser)
		case "reply":
			bit = keyReply
			ok = p.str(&t.Reply, keyReply)
		case "signals":
			bit = keySignals
			ok = p.signals(&t.Signals)
		case "meta_data":
			bit = keyMeta
			ok = p.raw(&t.MetaData)
		default:
			return false // json matches keys case-insensitively
		}
		if !ok || seen&bit != 0 {
			return false
		}
		seen |= bit
		if p.eat('}') {
			if p.i != len(p.b) {
				return false
			}
			p.setSpans(t)
			return true
		}
		if !p.eat(',') {
			return false
		}
	}
}

func (p *turnParser) eat(c byte) bool {
	if p.i < len(p.b) && p.b[p.i] == c {
		p.i++
		return true
	}
	return false
}

// key reads a plain quoted key and the colon after it.
func (p *turnParser) key() ([]byte, bool) {
	if !p.eat('"') {
		return nil, false
	}
	start := p.i
	for p.i < len(p.b) {
		c := p.b[p.i]
		if c == '"' {
			key := p.b[start:p.i]
			p.i++
			return key, p.eat(':')
		}
		if c == '\\' || c < 0x20 || c >= utf8.RuneSelf {
			return nil, false
		}
		p.i++
	}
	return nil, false
}

// plain skips a string without escapes.
func (p *turnParser) plain() bool {
	if !p.eat('"') {
		return false
	}
	for p.i < len(p.b) {
		switch c := p.b[p.i]; {
		case c == '"':
			p.i++
			return true
		case c == '\\' || c < 0x20:
			return false
		}
		p.i++
	}
	return false
}

// str reads a JSON string into dst, the turn's field of key bit field:
// one without escapes is set by setSpans, once the line has parsed.
func (p *turnParser) str(dst *string, field int) bool {
	if !p.eat('"') {
		return false
	}
	start := p.i
	wide := false
	// Most strings hold no quote, backslash, control or non-ASCII byte:
	// eight bytes are checked at a time up to the closing quote.
	if q := bytes.IndexByte(p.b[start:], '"'); q >= 0 && plainASCII(p.b[start:start+q]) {
		p.i = start + q + 1
		if !p.addSpan(field, start, start+q, false) {
			*dst = string(p.b[start : start+q])
		}
		return true
	}
	for p.i < len(p.b) {
		c := p.b[p.i]
		switch {
		case c == '"':
			s := p.b[start:p.i]
			p.i++
			if wide && !utf8.Valid(s) {
				return false // json replaces invalid bytes with U+FFFD
			}
			if !p.addSpan(field, start, p.i-1, false) {
				*dst = string(s)
			}
			return true
		case c == '\\':
			return p.escaped(start, wide, field, dst)
		case c < 0x20:
			return false
		case c >= utf8.RuneSelf:
			wide = true
		}
		p.i++
	}
	return false
}

// plainASCII reports whether b holds only bytes 0x20 to 0x7f other than
// the backslash: a JSON string's content that means itself.
func plainASCII(b []byte) bool {
	const (
		ones  = 0x0101010101010101
		highs = 0x8080808080808080
	)
	for len(b) >= 8 {
		w := binary.LittleEndian.Uint64(b)
		bs := w ^ ('\\' * ones)
		// A byte of w at or over 0x80, under 0x20, or a backslash (a
		// zero byte of bs) sets its high bit.
		if (w|((w-0x20*ones)&^w)|((bs-ones)&^bs))&highs != 0 {
			return false
		}
		b = b[8:]
	}
	for _, c := range b {
		if c < 0x20 || c >= utf8.RuneSelf || c == '\\' {
			return false
		}
	}
	return true
}

// escaped finishes a string, started at start, whose first escape is at
// p.i. With text, the string is unescaped onto text.esc.
func (p *turnParser) escaped(start int, wide bool, field int, dst *string) bool {
	buf, from := p.buf[:0], 0
	if p.text != nil {
		buf, from = p.text.esc, len(p.text.esc)
	}
	buf = append(buf, p.b[start:p.i]...)
	for p.i < len(p.b) {
		c := p.b[p.i]
		switch {
		case c == '"':
			p.i++
			if wide && !utf8.Valid(p.b[start:p.i-1]) {
				return false
			}
			if p.text != nil {
				p.text.esc = buf
				if !p.addSpan(field, from, len(buf), true) {
					*dst = string(buf[from:])
				}
				return true
			}
			*dst = string(buf)
			p.buf = buf
			return true
		case c < 0x20:
			return false
		case c >= utf8.RuneSelf:
			wide = true
		case c == '\\':
			if p.i+1 >= len(p.b) {
				return false
			}
			p.i++
			switch e := p.b[p.i]; e {
			case '"', '\\', '/':
				buf = append(buf, e)
			case 'b':
				buf = append(buf, '\b')
			case 'f':
				buf = append(buf, '\f')
			case 'n':
				buf = append(buf, '\n')
			case 'r':
				buf = append(buf, '\r')
			case 't':
				buf = append(buf, '\t')
			case 'u':
				r, ok := p.hex4(p.i + 1)
				if !ok {
					return false
				}
				p.i += 4
				if utf16.IsSurrogate(r) {
					lo, ok := p.hex4(p.i + 3)
					if !ok || p.b[p.i+1] != '\\' || p.b[p.i+2] != 'u' {
						return false
					}
					if r = utf16.DecodeRune(r, lo); r == utf8.RuneError {
						return false
					}
					p.i += 6
				}
				buf = utf8.AppendRune(buf, r)
			default:
				return false
			}
			p.i++
			continue
		}
		buf = append(buf, c)
		p.i++
	}
	return false
}

// hex4 decodes the four hex digits at b[i:].
func (p *turnParser) hex4(i int) (rune, bool) {
	if i+4 > len(p.b) {
		return 0, false
	}
	var r rune
	for _, c := range p.b[i : i+4] {
		switch {
		case '0' <= c && c <= '9':
			c -= '0'
		case 'a' <= c && c <= 'f':
			c -= 'a' - 10
		case 'A' <= c && c <= 'F':
			c -= 'A' - 10
		default:
			return 0, false
		}
		r = r<<4 | rune(c)
	}
	return r, true
}

// int reads an integer of at most 18 digits, which cannot overflow.
func (p *turnParser) int(dst *int64) bool {
	neg := p.eat('-')
	start := p.i
	var n int64
	for p.i < len(p.b) && '0' <= p.b[p.i] && p.b[p.i] <= '9' {
		n = n*10 + int64(p.b[p.i]-'0')
		p.i++
	}
	digits := p.i - start
	if digits == 0 || digits > 18 || digits > 1 && p.b[start] == '0' {
		return false
	}
	if p.i < len(p.b) && (p.b[p.i] == '.' || p.b[p.i] == 'e' || p.b[p.i] == 'E') {
		return false
	}
	if neg {
		n = -n
	}
	*dst = n
	return true
}

// time reads a timestamp the way json does: the quoted literal, handed to
// UnmarshalJSON.
func (p *turnParser) time(dst *time.Time) bool {
	start := p.i
	if !p.plain() {
		return false
	}
	if t, ok := utcTime(p.b[start+1 : p.i-1]); ok {
		*dst = t
		return true
	}
	return dst.UnmarshalJSON(p.b[start:p.i]) == nil
}

// utcTime parses the timestamps mnemo writes, "2006-01-02T15:04:05Z" with
// up to nine digits of fraction, to the time time.Parse(time.RFC3339)
// returns for them; ok is false for anything else (another zone, a
// field out of range), which UnmarshalJSON then reads.
func utcTime(b []byte) (t time.Time, ok bool) {
	if len(b) < 20 || b[4] != '-' || b[7] != '-' || b[10] != 'T' || b[13] != ':' || b[16] != ':' || b[len(b)-1] != 'Z' {
		return t, false
	}
	num := func(b []byte) int {
		n := 0
		for _, c := range b {
			if c < '0' || c > '9' {
				return -1
			}
			n = n*10 + int(c-'0')
		}
		return n
	}
	year, month, day := num(b[0:4]), num(b[5:7]), num(b[8:10])
	hour, minute, sec := num(b[11:13]), num(b[14:16]), num(b[17:19])
	nsec := 0
	if frac := b[19 : len(b)-1]; len(frac) > 0 {
		if len(frac) < 2 || len(frac) > 10 || frac[0] != '.' {
			return t, false
		}
		if nsec = num(frac[1:]); nsec < 0 {
			return t, false
		}
		for range 10 - len(frac) {
			nsec *= 10
		}
	}
	if year < 0 || month < 1 || month > 12 || day < 1 || day > 28 && day > daysIn(month, year) ||
		hour < 0 || hour > 23 || minute < 0 || minute > 59 || sec < 0 || sec > 59 {
		return t, false
	}
	return time.Date(year, time.Month(month), day, hour, minute, sec, nsec, time.UTC), true
}

// daysIn returns the number of days of month in year.
func daysIn(month, year int) int {
	return time.Date(year, time.Month(month)+1, 0, 0, 0, 0, 0, time.UTC).Day()
}

func (p *turnParser) signals(s *memory.Signals) bool {
	if !p.eat('{') {
		return false
	}
	if p.eat('}') {
		return true
	}
	seen := 0
	for {
		key, ok := p.key()
		if !ok {
			return false
		}
		var dst *bool
		bit := 1
		switch string(key) {
		case "correction":
			dst = &s.Correction
		case "reinforcement":
			dst, bit = &s.Reinforcement, 2
		default:
			return false
		}
		if seen&bit != 0 {
			return false
		}
		seen |= bit
		switch {
		case bytes.HasPrefix(p.b[p.i:], []byte("true")):
			*dst = true
			p.i += 4
		case bytes.HasPrefix(p.b[p.i:], []byte("false")):
			*dst = false
			p.i += 5
		default:
			return false
		}
		if p.eat('}') {
			return true
		}
		if !p.eat(',') {
			return false
		}
	}
}

// raw reads an object or array verbatim, as json.RawMessage does.
func (p *turnParser) raw(dst *json.RawMessage) bool {
	if p.i >= len(p.b) || p.b[p.i] != '{' && p.b[p.i] != '[' {
		return false
	}
	start, depth := p.i, 0
	for p.i < len(p.b) {
		switch p.b[p.i] {
		case '{', '[':
			depth++
		case '}', ']':
			depth--
		case '"':
			p.i++
			for p.i < len(p.b) && p.b[p.i] != '"' {
				if p.b[p.i] == '\\' {
					p.i++
				}
				p.i++
			}
			if p.i >= len(p.b) {
				return false
			}
		}
		p.i++
		if depth == 0 {
			v := p.b[start:p.i]
			if !json.Valid(v) {
				return false
			}
			if p.text == nil || !p.addSpan(keyMeta, start, p.i, false) {
				*dst = append(json.RawMessage(nil), v...)
			}
			return true
		}
	}
	return false
}
