package memory

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/mnemo-mcp/mnemo/memory/redact"
)

// Redaction counts the secrets of one kind that were redacted. It never
// holds the secret.
type Redaction struct {
	Kind  string `json:"kind"`
	Count int    `json:"count"`
}

// Redactor redacts secrets when on, and counts them by kind.
type Redactor struct {
	On    bool
	found []Redaction
}

// Text returns s with its secrets redacted.
func (r *Redactor) Text(s string) string {
	if !r.On {
		return s
	}
	out, found := redact.Text(s)
	r.count(found)
	return out
}

// JSON returns compact JSON data with the secrets in its strings (keys
// included) redacted; everything else is kept byte for byte.
func (r *Redactor) JSON(data json.RawMessage) json.RawMessage {
	if !r.On || len(data) == 0 {
		return data
	}
	var out []byte
	last := 0
	for i := 0; i < len(data); i++ {
		if data[i] != '"' {
			continue
		}
		j := i + 1
		for j < len(data) && data[j] != '"' {
			if data[j] == '\\' {
				j++
			}
			j++
		}
		if j >= len(data) {
			break
		}
		var s string
		if json.Unmarshal(data[i:j+1], &s) == nil {
			if red, found := redact.Text(s); len(found) > 0 {
				q, err := json.Marshal(red)
				if err == nil {
					out = append(append(out, data[last:i]...), q...)
					last = j + 1
					r.count(found)
				}
			}
		}
		i = j
	}
	if out == nil {
		return data
	}
	return append(out, data[last:]...)
}

func (r *Redactor) count(found []redact.Finding) {
	for _, f := range found {
		i := 0
		for i < len(r.found) && r.found[i].Kind != f.Kind {
			i++
		}
		if i == len(r.found) {
			r.found = append(r.found, Redaction{Kind: f.Kind})
		}
		r.found[i].Count++
	}
}

// Take returns the redactions counted since the last take.
func (r *Redactor) Take() []Redaction {
	found := r.found
	r.found = nil
	return found
}

// RedactionNote words redactions for a note: "secrets redacted: 2 openai
// api key".
func RedactionNote(found []Redaction) string {
	parts := make([]string, len(found))
	for i, f := range found {
		parts[i] = fmt.Sprintf("%d %s", f.Count, f.Kind)
	}
	return "secrets redacted: " + strings.Join(parts, ", ")
}
