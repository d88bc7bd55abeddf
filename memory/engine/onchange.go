package engine

import (
	"github.com/mnemo-mcp/mnemo/memory"
)

// WithChangeHook sets a function called after each change this Service
// makes to a scope's memory document or turn log outside add (a saved,
// updated or forgotten fact, forgotten turns or scope, an updater run).
// It runs synchronously and must not block; the MCP server uses it to
// send resource notifications.
func WithChangeHook(fn func(memory.Scope)) Option { return func(s *Service) { s.OnChange(fn) } }

// OnChange adds fn to the functions called after each change, as
// WithChangeHook does, for a listener created after the Service (the MCP
// server).
func (s *Service) OnChange(fn func(memory.Scope)) {
	if fn == nil {
		return
	}
	s.mu.Lock()
	s.changed = append(s.changed, fn)
	s.mu.Unlock()
}

// notifyChange calls the change hooks.
func (s *Service) notifyChange(scope memory.Scope) {
	s.mu.Lock()
	hooks := s.changed
	s.mu.Unlock()
	for _, fn := range hooks {
		fn(scope)
	}
}
