package engine

import (
	"github.com/mnemo-mcp/mnemo/memory"
)

// credentialID refuses an id that looks like a credential: the rule of
// memory.CheckID, whose id rule the caller has already applied.
func credentialID(field, id string) error {
	if id == "" {
		return nil
	}
	return memory.CheckID(field, id)
}
