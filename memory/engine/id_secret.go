package engine

import (
	"strings"

	"github.com/mnemo-mcp/mnemo/memory"
	"github.com/mnemo-mcp/mnemo/memory/redact"
)

// credentialID refuses an id that the redaction rule recognises as a
// credential: ids are stored as written (a user_id names a directory, a
// thread_id is listed and logged), so a secret given as one would be
// kept in the clear. The error names the kind, never the id.
func credentialID(field, id string) error {
	if _, found := redact.Text(id); len(found) > 0 {
		return memory.Invalid(field, "looks like a credential (%s), and ids are stored and shown as written; use a name that is not a secret",
			strings.Join(redact.Kinds(found), ", "))
	}
	return nil
}
