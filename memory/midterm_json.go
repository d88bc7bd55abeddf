package memory

import (
	"bytes"
	"encoding/json"
	"strconv"
	"time"
	"unicode/utf8"
)

// DecodeMidTermState decodes a saved mid-term state exactly as
// json.Unmarshal would, errors included. States in the shape
// json.Marshal writes (compact, known keys, each once) are parsed
// directly, without reflection: a state of a scope of 100,000 exchanges
// is mostly the turn ids of its pages, and encoding/json took 66 ms over
// them at a restart. Anything else goes through json.Unmarshal.
func DecodeMidTermState(data []byte) (*MidTermState, error) {
	var st MidTermState
	if p := (midTermParser{b: data}); p.state(&st) {
		return &st, nil
	}
	st = MidTermState{}
	if err := json.Unmarshal(data, &st); err != nil {
		return nil, err
	}
	return &st, nil
}

// midTermParser parses the compact JSON of a MidTermState. Its methods
// return false as soon as the input strays from that shape, and the
// caller falls back to encoding/json, so it need only be right about
// what it accepts.
type midTermParser struct {
	b []byte
	i int
}

func (p *midTermParser) state(st *MidTermState) bool {
	return p.object(func(key []byte) bool {
		switch string(key) {
		case "version":
			return p.int(&st.Version)
		case "moved":
			return p.moved(&st.Moved)
		case "nextId":
			return p.int(&st.NextID)
		case "sessions":
			return p.sessions(&st.Sessions)
		}
		return false
	}) && p.i == len(p.b)
}

// object reads an object whose keys field reads, each key at most once
// (encoding/json would merge a repeated key into what the first one set).
func (p *midTermParser) object(field func(key []byte) bool) bool {
	if !p.eat('{') {
		return false
	}
	if p.eat('}') {
		return true
	}
	var seenKeys [16][]byte
	seen := seenKeys[:0]
	for {
		key, ok := p.key()
		if !ok || !p.eat(':') {
			return false
		}
		for _, k := range seen {
			if bytes.Equal(k, key) {
				return false
			}
		}
		seen = append(seen, key)
		if !field(key) {
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

// array reads an array, calling elem for each element, or null (which
// leaves what it would fill nil).
func (p *midTermParser) array(elem func() bool) (null, ok bool) {
	if p.lit("null") {
		return true, true
	}
	if !p.eat('[') {
		return false, false
	}
	if p.eat(']') {
		return false, true
	}
	for {
		if !elem() {
			return false, false
		}
		if p.eat(']') {
			return false, true
		}
		if !p.eat(',') {
			return false, false
		}
	}
}

func (p *midTermParser) moved(m *map[string]int64) bool {
	if p.lit("null") {
		*m = nil
		return true
	}
	out := make(map[string]int64)
	if !p.object(func(key []byte) bool {
		var n int64
		if !p.int64(&n) {
			return false
		}
		out[string(key)] = n
		return true
	}) {
		return false
	}
	*m = out
	return true
}

// setList sets *out as json.Unmarshal sets a slice from an array: nil
// for null, empty for [], else list.
func setList[T any](out *[]T, list []T, null bool) {
	switch {
	case null:
		*out = nil
	case list == nil:
		*out = []T{}
	default:
		*out = list
	}
}

func (p *midTermParser) sessions(out *[]*MidTermSession) bool {
	var list []*MidTermSession
	null, ok := p.array(func() bool {
		if p.lit("null") {
			list = append(list, nil)
			return true
		}
		ses := new(MidTermSession)
		list = append(list, ses)
		return p.session(ses)
	})
	if ok {
		setList(out, list, null)
	}
	return ok
}

func (p *midTermParser) session(ses *MidTermSession) bool {
	return p.object(func(key []byte) bool {
		switch string(key) {
		case "id":
			return p.str(&ses.ID)
		case "summary":
			return p.str(&ses.Summary)
		case "keywords":
			return p.strs(&ses.Keywords)
		case "llmSummary":
			return p.bool(&ses.LLMSummary)
		case "pages":
			return p.pages(&ses.Pages)
		case "visits":
			return p.int(&ses.Visits)
		case "interactions":
			return p.int(&ses.Interactions)
		case "lastVisit":
			return p.time(&ses.LastVisit)
		case "created":
			return p.time(&ses.Created)
		case "uses":
			return p.int(&ses.Uses)
		case "summarizedPages":
			return p.int(&ses.SummarizedPages)
		}
		return false
	})
}

func (p *midTermParser) strs(out *[]string) bool {
	var list []string
	null, ok := p.array(func() bool {
		var s string
		if !p.str(&s) {
			return false
		}
		list = append(list, s)
		return true
	})
	if ok {
		setList(out, list, null)
	}
	return ok
}

func (p *midTermParser) pages(out *[]MidTermPage) bool {
	var list []MidTermPage
	null, ok := p.array(func() bool {
		list = append(list, MidTermPage{})
		return p.page(&list[len(list)-1])
	})
	if ok {
		setList(out, list, null)
	}
	return ok
}

// page reads one page: the bulk of a state, so without object's closure.
func (p *midTermParser) page(pg *MidTermPage) bool {
	if !p.eat('{') {
		return false
	}
	if p.eat('}') {
		return true
	}
	var id, analyzed, seq bool
	for {
		key, ok := p.plain()
		if !ok || !p.eat(':') {
			return false
		}
		switch string(key) {
		case "turnId":
			if id || !p.str(&pg.TurnID) {
				return false
			}
			id = true
		case "analyzed":
			if analyzed || !p.bool(&pg.Analyzed) {
				return false
			}
			analyzed = true
		case "seq":
			if seq || !p.int64(&pg.Seq) {
				return false
			}
			seq = true
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

func (p *midTermParser) eat(c byte) bool {
	if p.i < len(p.b) && p.b[p.i] == c {
		p.i++
		return true
	}
	return false
}

func (p *midTermParser) lit(s string) bool {
	if bytes.HasPrefix(p.b[p.i:], []byte(s)) {
		p.i += len(s)
		return true
	}
	return false
}

// plain reads a quoted string of printable ASCII without escapes, which
// json reads as its bytes.
func (p *midTermParser) plain() ([]byte, bool) {
	if !p.eat('"') {
		return nil, false
	}
	start := p.i
	for p.i < len(p.b) {
		c := p.b[p.i]
		switch {
		case c == '"':
			p.i++
			return p.b[start : p.i-1], true
		case c < 0x20 || c == '\\' || c >= 0x80:
			return nil, false
		}
		p.i++
	}
	return nil, false
}

// key reads an object's key: plain, or else as str reads it.
func (p *midTermParser) key() ([]byte, bool) {
	start := p.i
	if b, ok := p.plain(); ok {
		return b, true
	}
	p.i = start
	var s string
	if !p.str(&s) {
		return nil, false
	}
	return []byte(s), true
}

// str reads a string. One with escapes, control or non-ASCII bytes is
// handed to json.Unmarshal on its own, so that its meaning is json's.
func (p *midTermParser) str(out *string) bool {
	start := p.i
	if b, ok := p.plain(); ok {
		*out = string(b)
		return true
	}
	p.i = start
	if !p.eat('"') {
		return false
	}
	for p.i < len(p.b) {
		switch c := p.b[p.i]; {
		case c == '\\':
			p.i += 2
			continue
		case c == '"':
			p.i++
			if !utf8.Valid(p.b[start:p.i]) {
				return false
			}
			return json.Unmarshal(p.b[start:p.i], out) == nil
		}
		p.i++
	}
	return false
}

func (p *midTermParser) bool(out *bool) bool {
	switch {
	case p.lit("true"):
		*out = true
	case p.lit("false"):
		*out = false
	default:
		return false
	}
	return true
}

// int64 reads an integer as strconv.ParseInt reads it, which is what json
// does for an integer field; fractions and exponents are left to json.
func (p *midTermParser) int64(out *int64) bool {
	start := p.i
	p.eat('-')
	for p.i < len(p.b) && p.b[p.i] >= '0' && p.b[p.i] <= '9' {
		p.i++
	}
	digits := p.b[start:p.i]
	if len(digits) == 0 || digits[0] == '-' && len(digits) == 1 {
		return false
	}
	// json's grammar has no leading zeros ("01"); json would refuse them.
	if d := bytes.TrimPrefix(digits, []byte{'-'}); len(d) > 1 && d[0] == '0' {
		return false
	}
	if p.i < len(p.b) && (p.b[p.i] == '.' || p.b[p.i] == 'e' || p.b[p.i] == 'E') {
		return false
	}
	n, err := strconv.ParseInt(string(digits), 10, 64)
	if err != nil {
		return false
	}
	*out = n
	return true
}

func (p *midTermParser) int(out *int) bool {
	var n int64
	if !p.int64(&n) || int64(int(n)) != n {
		return false
	}
	*out = int(n)
	return true
}

// time reads a quoted time with time.Time's own UnmarshalJSON.
func (p *midTermParser) time(out *time.Time) bool {
	start := p.i
	if _, ok := p.plain(); !ok {
		return false
	}
	return out.UnmarshalJSON(p.b[start:p.i]) == nil
}
