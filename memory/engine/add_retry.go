package engine

import "github.com/mnemo-mcp/mnemo/memory"

// retriedAppend reports whether the turns a store's AppendTurns returned
// are turns stored earlier under the same idempotency key rather than
// the ones given (a store that checks the key in its append, as
// memory/postgres does, returns those): a retry of an exchange whose
// first append committed though its answer was lost. The same key with a
// different exchange is an input error.
func retriedAppend(stored, turns []memory.Turn) (bool, error) {
	if len(stored) == 0 || len(turns) == 0 || stored[0].ID == turns[0].ID {
		return false, nil
	}
	key := turns[0].IdempotencyKey
	if len(stored) != len(turns) {
		return false, memory.Invalid("idempotency_key", "%q was used for a different exchange in this thread; use a new key for a new exchange", key)
	}
	for i := range stored {
		if stored[i].User != turns[i].User || stored[i].Reply != turns[i].Reply {
			return false, memory.Invalid("idempotency_key", "%q was used for a different exchange in this thread; use a new key for a new exchange", key)
		}
	}
	return true, nil
}
