package engine

// NewTestService is newTestService for the external tests (engine_test).
var NewTestService = newTestService

// ForgetTokenCounts empties every loaded scope's token count cache, so a
// benchmark measures a retrieval whose lines were never counted (what
// the first retrieval of a process pays).
func ForgetTokenCounts(s *Service) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, st := range s.scopes {
		st.tokenMu.Lock()
		clear(st.tokenCache)
		st.tokenMu.Unlock()
	}
}
