package postgres

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"time"
	"unicode/utf8"

	"github.com/mnemo-mcp/mnemo/memory"
)

// A turn's body is stored in one of two forms, told apart by its first
// byte:
//
//   - '{': the turn as JSON without its Seq, as schema version 1 wrote
//     every body (and as a turn that cannot be written compactly still
//     is: see encodeTurn);
//   - bodyCompact (0x01): a compact binary form that decodes about ten
//     times faster, which is what makes the first read of a scope of
//     10,000 turns cheap.
//
// The compact form is: the flags byte; the times Time and Stored; then
// the strings ID, ThreadID, User, Reply, MetaData (compact JSON) and
// IdempotencyKey, each a uvarint length and its bytes. A time is a kind
// byte, then for timeUTC a varint of Unix seconds and a uvarint of
// nanoseconds, for timeText a uvarint length and the RFC 3339 text (with
// its offset), which is how JSON keeps it.
const bodyCompact byte = 0x01

// Flag bits of the compact form.
const (
	flagCorrection byte = 1 << iota
	flagReinforcement
)

// Kinds of time in the compact form.
const (
	timeUTC byte = iota
	timeText
)

// errShortBody is a compact body that ends early.
var errShortBody = errors.New("compact turn body ends early")

// encodeTurn renders t (its Seq left out) in the compact form. A turn
// whose text is not valid UTF-8 or whose time JSON could not render is
// written as JSON, as schema version 1 did, so that it reads back exactly
// as the file store would return it.
func encodeTurn(t *memory.Turn) ([]byte, error) {
	if !compactable(t) {
		return encodeTurnJSON(t)
	}
	meta := t.MetaData
	if len(meta) > 0 {
		var buf bytes.Buffer
		if err := json.Compact(&buf, meta); err != nil {
			return nil, fmt.Errorf("meta_data: %w", err)
		}
		meta = buf.Bytes()
	}
	// Room for the fixed part (two UTC times, six short lengths) and the
	// text; a zoned time may grow it once.
	b := make([]byte, 0, 64+len(t.ID)+len(t.ThreadID)+len(t.User)+len(t.Reply)+len(meta)+len(t.IdempotencyKey))
	var flags byte
	if t.Signals.Correction {
		flags |= flagCorrection
	}
	if t.Signals.Reinforcement {
		flags |= flagReinforcement
	}
	b = append(b, bodyCompact, flags)
	b = appendTime(b, t.Time)
	b = appendTime(b, t.Stored)
	for _, s := range [...]string{t.ID, t.ThreadID, t.User, t.Reply} {
		b = binary.AppendUvarint(b, uint64(len(s)))
		b = append(b, s...)
	}
	b = binary.AppendUvarint(b, uint64(len(meta)))
	b = append(b, meta...)
	b = binary.AppendUvarint(b, uint64(len(t.IdempotencyKey)))
	b = append(b, t.IdempotencyKey...)
	return b, nil
}

// compactable says whether t reads back from the compact form exactly as
// from JSON: its strings are valid UTF-8 (JSON would replace bad bytes)
// and its times are within the years JSON can render.
func compactable(t *memory.Turn) bool {
	for _, s := range [...]string{t.ID, t.ThreadID, t.User, t.Reply, t.IdempotencyKey} {
		if !utf8.ValidString(s) {
			return false
		}
	}
	for _, tm := range [...]time.Time{t.Time, t.Stored} {
		if y := tm.Year(); y < 0 || y > 9999 {
			return false
		}
	}
	return true
}

// appendTime appends tm: UTC as seconds and nanoseconds, any other zone
// as its RFC 3339 text, which keeps the offset as JSON does.
func appendTime(b []byte, tm time.Time) []byte {
	if tm.Location() == time.UTC {
		b = append(b, timeUTC)
		b = binary.AppendVarint(b, tm.Unix())
		return binary.AppendUvarint(b, uint64(tm.Nanosecond()))
	}
	text := tm.Format(time.RFC3339Nano)
	b = append(b, timeText)
	b = binary.AppendUvarint(b, uint64(len(text)))
	return append(b, text...)
}

// encodeTurnJSON renders t as the file store's log does: compact JSON
// (meta data compacted), '<', '>' and '&' kept.
func encodeTurnJSON(t *memory.Turn) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(t); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n")), nil
}

// decodeTurn parses body, in either form, into t (Seq untouched).
func decodeTurn(body []byte, t *memory.Turn) error {
	if len(body) == 0 || body[0] != bodyCompact {
		return json.Unmarshal(body, t)
	}
	d := turnDecoder{b: body[1:]}
	flags := d.byte()
	*t = memory.Turn{}
	t.Signals = memory.Signals{Correction: flags&flagCorrection != 0, Reinforcement: flags&flagReinforcement != 0}
	t.Time = d.time()
	t.Stored = d.time()
	if d.err != nil {
		return d.err
	}
	// One string holds the text fields; each field is a piece of it.
	d.text, d.textLen = string(d.b), len(d.b)
	t.ID = d.str()
	t.ThreadID = d.str()
	t.User = d.str()
	t.Reply = d.str()
	if meta := d.bytes(); len(meta) > 0 {
		t.MetaData = json.RawMessage(bytes.Clone(meta))
	}
	t.IdempotencyKey = d.str()
	if d.err == nil && len(d.b) != 0 {
		d.err = fmt.Errorf("compact turn body has %d bytes after its last field", len(d.b))
	}
	return d.err
}

// turnDecoder reads the compact form; the first error sticks.
type turnDecoder struct {
	b   []byte
	err error
	// text holds the bytes d.b held when the text fields began, and
	// textLen their length then (see str).
	text    string
	textLen int
}

func (d *turnDecoder) byte() byte {
	if d.err != nil || len(d.b) == 0 {
		d.fail()
		return 0
	}
	c := d.b[0]
	d.b = d.b[1:]
	return c
}

func (d *turnDecoder) fail() {
	if d.err == nil {
		d.err = errShortBody
	}
}

func (d *turnDecoder) uvarint() uint64 {
	if d.err != nil {
		return 0
	}
	v, n := binary.Uvarint(d.b)
	if n <= 0 {
		d.fail()
		return 0
	}
	d.b = d.b[n:]
	return v
}

func (d *turnDecoder) varint() int64 {
	if d.err != nil {
		return 0
	}
	v, n := binary.Varint(d.b)
	if n <= 0 {
		d.fail()
		return 0
	}
	d.b = d.b[n:]
	return v
}

// bytes returns the next length-prefixed field, a piece of d.b.
func (d *turnDecoder) bytes() []byte {
	n := d.uvarint()
	if d.err != nil || n > uint64(len(d.b)) {
		d.fail()
		return nil
	}
	v := d.b[:n]
	d.b = d.b[n:]
	return v
}

// str returns the next length-prefixed field as a piece of d.text, so
// the fields of a turn share one allocation.
func (d *turnDecoder) str() string {
	v := d.bytes()
	if d.err != nil {
		return ""
	}
	end := d.textLen - len(d.b)
	return d.text[end-len(v) : end]
}

func (d *turnDecoder) time() time.Time {
	switch d.byte() {
	case timeUTC:
		sec := d.varint()
		nsec := d.uvarint()
		if d.err != nil || nsec >= 1e9 {
			d.fail()
			return time.Time{}
		}
		return time.Unix(sec, int64(nsec)).UTC()
	case timeText:
		v := d.bytes()
		if d.err != nil {
			return time.Time{}
		}
		tm, err := time.Parse(time.RFC3339Nano, string(v))
		if err != nil && d.err == nil {
			d.err = fmt.Errorf("compact turn body: time: %w", err)
		}
		return tm
	default:
		d.fail()
		return time.Time{}
	}
}
