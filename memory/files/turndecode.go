package files

import (
	"bytes"
	"encoding/json"
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
			ok = p.str(&t.ID)
		case "seq":
			bit = keySeq
			ok = p.int(&t.Seq)
		case "thread_id":
			bit = keyThread
			ok = p.str(&t.ThreadID)
		case "time":
			bit = keyTime
			ok = p.time(&t.Time)
		case "stored":
			bit = keyStored
			ok = p.time(&t.Stored)
		case "user":
			bit = keyUser
			ok = p.str(&t.User)
		case "reply":
			bit = keyReply
			ok = p.str(&t.Reply)
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
			return p.i == len(p.b)
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

// str reads a JSON string into dst.
func (p *turnParser) str(dst *string) bool {
	if !p.eat('"') {
		return false
	}
	start := p.i
	wide := false
	for p.i < len(p.b) {
		c := p.b[p.i]
		switch {
		case c == '"':
			s := p.b[start:p.i]
			p.i++
			if wide && !utf8.Valid(s) {
				return false // json replaces invalid bytes with U+FFFD
			}
			*dst = string(s)
			return true
		case c == '\\':
			return p.escaped(start, wide, dst)
		case c < 0x20:
			return false
		case c >= utf8.RuneSelf:
			wide = true
		}
		p.i++
	}
	return false
}

// escaped finishes a string, started at start, whose first escape is at
// p.i.
func (p *turnParser) escaped(start int, wide bool, dst *string) bool {
	buf := append(p.buf[:0], p.b[start:p.i]...)
	for p.i < len(p.b) {
		c := p.b[p.i]
		switch {
		case c == '"':
			p.i++
			if wide && !utf8.Valid(p.b[start:p.i-1]) {
				return false
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
func (p *turnParser) time(dst interface{ UnmarshalJSON([]byte) error }) bool {
	start := p.i
	if !p.plain() {
		return false
	}
	return dst.UnmarshalJSON(p.b[start:p.i]) == nil
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
			*dst = append(json.RawMessage(nil), v...)
			return true
		}
	}
	return false
}
