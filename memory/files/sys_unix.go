//go:build unix

package files

import (
	"context"
	"errors"
	"fmt"
	"os"
	"syscall"
	"time"
)

// lockFile takes an exclusive flock(2) on f, polling with a non-blocking
// attempt and a short backoff so that it can give up when ctx ends (a
// blocking flock cannot be interrupted). flock is per open file
// description: it excludes other processes and other descriptors of this
// process, so two Stores on one directory in one process exclude each
// other too. It is advisory, and not reliable on some network file
// systems.
func lockFile(ctx context.Context, f *os.File) error {
	const maxDelay = 20 * time.Millisecond
	delay := 500 * time.Microsecond
	for {
		ok, err := tryLockFile(f)
		if ok || err != nil {
			return err
		}
		t := time.NewTimer(delay)
		select {
		case <-ctx.Done():
			t.Stop()
			return ctx.Err()
		case <-t.C:
		}
		delay = min(2*delay, maxDelay)
	}
}

// tryLockFile takes an exclusive flock on f if nobody else holds it.
func tryLockFile(f *os.File) (bool, error) {
	for {
		err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
		switch {
		case err == nil:
			return true, nil
		case errors.Is(err, syscall.EINTR):
			continue
		case errors.Is(err, syscall.EWOULDBLOCK), errors.Is(err, syscall.EAGAIN):
			return false, nil
		}
		return false, fmt.Errorf("lock %s: %w", f.Name(), err)
	}
}

// unlockFile releases the flock on f.
func unlockFile(f *os.File) error {
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_UN); err != nil {
		return fmt.Errorf("unlock %s: %w", f.Name(), err)
	}
	return nil
}

// dirSync says directories can be fsynced here.
const dirSync = true

// syncDir fsyncs a directory, making entries created or renamed in it
// durable.
func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	if err := d.Sync(); err != nil {
		d.Close()
		return fmt.Errorf("sync directory %s: %w", dir, err)
	}
	return d.Close()
}
