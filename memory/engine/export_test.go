package engine

// NewTestService is newTestService for the external tests (engine_test).
var NewTestService = newTestService
