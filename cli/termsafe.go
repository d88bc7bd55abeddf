package cli

import (
	"fmt"
	"io"
	"unicode/utf8"
)

// safeWriter neutralises characters a terminal would act on before it
// writes: remembered text is untrusted, and ESC, OSC 52 (clipboard
// writes), BEL, NUL, DEL, the C1 controls (U+009B is a one-byte CSI) and
// the bidirectional overrides must not reach a terminal as they are.
// Text output shows them as visible escapes (\x1b, \u009b); JSON output
// as \u escapes, which decode to the same string. Line feeds and tabs
// stay.
type safeWriter struct {
	w    io.Writer
	json bool
	tail []byte // an incomplete UTF-8 sequence held for the next Write
}

// unsafeRune reports whether r must not reach a terminal as it is.
func unsafeRune(r rune) bool {
	switch {
	case r == '\n' || r == '\t':
		return false
	case r < 0x20 || r == 0x7f || r >= 0x80 && r <= 0x9f:
		return true
	case r >= 0x202a && r <= 0x202e, r >= 0x2066 && r <= 0x2069, r == 0x200e || r == 0x200f || r == 0x061c:
		return true
	}
	return false
}

func (s *safeWriter) Write(p []byte) (int, error) {
	n := len(p)
	if len(s.tail) > 0 {
		p = append(s.tail, p...)
		s.tail = nil
	}
	out := make([]byte, 0, len(p))
	for i := 0; i < len(p); {
		r, size := utf8.DecodeRune(p[i:])
		if r == utf8.RuneError && size <= 1 && !utf8.FullRune(p[i:]) {
			s.tail = append([]byte(nil), p[i:]...)
			break
		}
		switch {
		case r == utf8.RuneError && size == 1:
			out = fmt.Appendf(out, `\x%02x`, p[i])
		case unsafeRune(r) && s.json:
			out = fmt.Appendf(out, `\u%04x`, r)
		case unsafeRune(r) && r < 0x80:
			out = fmt.Appendf(out, `\x%02x`, r)
		case unsafeRune(r):
			out = fmt.Appendf(out, `\u%04x`, r)
		default:
			out = append(out, p[i:i+size]...)
		}
		i += size
	}
	if _, err := s.w.Write(out); err != nil {
		return 0, err
	}
	return n, nil
}

// termSafe is s with the characters safeWriter neutralises shown as
// visible escapes, for text built outside a writer.
func termSafe(s string) string {
	var b []byte
	w := &safeWriter{w: writerFunc(func(p []byte) (int, error) { b = append(b, p...); return len(p), nil })}
	w.Write([]byte(s))
	if len(w.tail) > 0 {
		for _, c := range w.tail {
			b = fmt.Appendf(b, `\x%02x`, c)
		}
	}
	return string(b)
}

type writerFunc func([]byte) (int, error)

func (f writerFunc) Write(p []byte) (int, error) { return f(p) }
