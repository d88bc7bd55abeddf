//go:build !unix

package files

import (
	"context"
	"fmt"
	"os"
	"sync"
)

// Without flock(2) (Windows, Plan 9, wasm) the scope lock is in-process
// only: it is keyed by the lock file's path, so it excludes goroutines and
// other Stores on the same directory in this process, but NOT other
// processes. Two mnemo processes sharing one data directory on these
// systems can number turns twice and lose document updates; run one
// process per directory there, or use the PostgreSQL store.
var (
	pathLocksMu sync.Mutex
	pathLocks   = map[string]chan struct{}{}
)

func pathLock(path string) chan struct{} {
	pathLocksMu.Lock()
	defer pathLocksMu.Unlock()
	ch := pathLocks[path]
	if ch == nil {
		ch = make(chan struct{}, 1)
		pathLocks[path] = ch
	}
	return ch
}

// lockFile takes the in-process lock of f's path, giving up when ctx ends.
func lockFile(ctx context.Context, f *os.File) error {
	select {
	case pathLock(f.Name()) <- struct{}{}:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// tryLockFile takes the in-process lock of f's path if it is free.
func tryLockFile(f *os.File) (bool, error) {
	select {
	case pathLock(f.Name()) <- struct{}{}:
		return true, nil
	default:
		return false, nil
	}
}

// unlockFile releases the in-process lock of f's path.
func unlockFile(f *os.File) error {
	select {
	case <-pathLock(f.Name()):
		return nil
	default:
		return fmt.Errorf("unlock %s: not locked", f.Name())
	}
}

// dirSync says directories cannot be fsynced here.
const dirSync = false

// syncDir does nothing: directories cannot be fsynced on these systems
// (on Windows, NTFS journals the rename itself).
func syncDir(string) error { return nil }
