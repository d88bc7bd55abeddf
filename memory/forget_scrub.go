package memory

import (
	"bytes"
	"context"
	"encoding/json"
	"slices"
)

// ForgettingUpdater is implemented by stores that can delete, in the same
// transaction (or under the same lock) as a document update, the kept
// versions of the document that hold text the update forgot: a crash or a
// failed statement then leaves either the forget with no copy of the text
// in undo history, or no forget at all — never a forget whose text a
// rollback can bring back.
type ForgettingUpdater interface {
	// UpdateDocumentForgetting is UpdateDocument where fn also returns the
	// texts it removed; after saving the result (and keeping the replaced
	// document as a version, as UpdateDocument does), every kept version
	// that contains any of them, as written or as escaped in JSON, is
	// deleted before the update commits. It returns the saved document and
	// how many versions were deleted. Empty texts are ignored.
	UpdateDocumentForgetting(ctx context.Context, scope Scope, fn func(*Document) ([]string, error)) (*Document, int, error)
}

// ForgottenNeedles returns the byte strings a stored document holds where
// it quotes one of texts: each text as written, and as escaped in a JSON
// string (with and without HTML escaping). Empty texts give none.
func ForgottenNeedles(texts []string) [][]byte {
	var out [][]byte
	add := func(b []byte) {
		if len(b) > 0 && !slices.ContainsFunc(out, func(o []byte) bool { return bytes.Equal(o, b) }) {
			out = append(out, b)
		}
	}
	for _, t := range texts {
		if t == "" {
			continue
		}
		add([]byte(t))
		for _, html := range []bool{false, true} {
			var b bytes.Buffer
			enc := json.NewEncoder(&b)
			enc.SetEscapeHTML(html)
			_ = enc.Encode(t) // a string cannot fail
			add(bytes.TrimSuffix(bytes.TrimPrefix(bytes.TrimSpace(b.Bytes()), []byte(`"`)), []byte(`"`)))
		}
	}
	return out
}
