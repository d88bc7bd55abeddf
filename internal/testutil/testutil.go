// Package testutil holds helpers shared by the tests of several packages.
// Only _test.go files import it.
package testutil

import (
	"bytes"
	"sync"
)

// LockedBuffer is a bytes.Buffer that a logger, a child process's output
// and the test may share.
type LockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

// Write appends p to the buffer.
func (l *LockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

// String returns what was written so far.
func (l *LockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}
