package files

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sync"
)

// scopeDir is a scope's directory, opened once through the data
// directory (every component checked, no link followed) and kept, so
// that the files of an add are reached with one call each instead of a
// walk of the whole path per call.
//
// Confinement is checked when the directory is opened, and its identity
// (device and inode) each time it is used: one lstat of its path. When
// the path names another directory (the scope was deleted and created
// again, or the directory swapped for another or for a link), or nothing,
// the kept one is closed and the path is opened and checked afresh, so a
// directory swapped after open never receives a write meant for the
// scope. Names inside it are single components, looked at without
// following links (a link is refused with ErrSymlink); a file is opened
// through the kept os.Root, which confines even a link planted between
// the check and the open to the scope's own directory, and is then
// compared with what its name holds, so that such a link is refused too.
type scopeDir struct {
	mu   sync.Mutex // held over each use, so the root is never closed under one
	root *os.Root   // nil until opened, or after close
	fi   fs.FileInfo
}

// close closes the kept directory, if open.
func (sd *scopeDir) close() error {
	sd.mu.Lock()
	defer sd.mu.Unlock()
	return sd.closeLocked()
}

func (sd *scopeDir) closeLocked() error {
	if sd.root == nil {
		return nil
	}
	err := sd.root.Close()
	sd.root, sd.fi = nil, nil
	return err
}

// inScope runs fn on the scope's directory, opening (or reopening) it when
// the path no longer names the kept one. A missing directory is an error
// wrapping fs.ErrNotExist.
func (s *Store) inScope(st *scopeFiles, fn func(r *os.Root) error) error {
	sd := &st.sd
	sd.mu.Lock()
	defer sd.mu.Unlock()
	fi, err := os.Lstat(filepath.Join(s.root, st.rel))
	if err != nil {
		sd.closeLocked()
		return err
	}
	if sd.root == nil || !os.SameFile(fi, sd.fi) {
		sd.closeLocked()
		if err := s.openScopeDir(sd, st.rel); err != nil {
			return err
		}
	}
	return fn(sd.root)
}

// openScopeDir opens rel after checking each of its components, and
// makes sure the directory opened is the one checked.
func (s *Store) openScopeDir(sd *scopeDir, rel string) error {
	checked, err := s.d.walk(rel)
	if err != nil {
		return err
	}
	if checked == nil {
		return fmt.Errorf("%s: %w", filepath.ToSlash(rel), fs.ErrNotExist)
	}
	if !checked.IsDir() {
		return fmt.Errorf("%s is not a directory", filepath.ToSlash(rel))
	}
	r, err := s.d.root.OpenRoot(rel)
	if err != nil {
		return err
	}
	fi, err := r.Stat(".")
	if err != nil {
		r.Close()
		return err
	}
	if !os.SameFile(fi, checked) {
		r.Close()
		return fmt.Errorf("%s changed while it was opened; try again", filepath.ToSlash(rel))
	}
	sd.root, sd.fi = r, fi
	return nil
}

// lstatIn describes name in the scope's directory, never what a link
// points to; a link is an error wrapping ErrSymlink.
func (s *Store) lstatIn(st *scopeFiles, name string) (fs.FileInfo, error) {
	var fi fs.FileInfo
	err := s.inScope(st, func(r *os.Root) error {
		var err error
		fi, err = r.Lstat(name)
		if err == nil && fi.Mode()&fs.ModeSymlink != 0 {
			return &symlinkError{rel: filepath.Join(st.rel, name)}
		}
		return err
	})
	return fi, err
}

// openIn opens name in the scope's directory with flag and perm. A link
// at name, there before the open or planted during it, is refused. A file
// replaced at name while it was opened (an atomic save) is opened again.
func (s *Store) openIn(st *scopeFiles, name string, flag int, perm fs.FileMode) (*os.File, error) {
	var f *os.File
	err := s.inScope(st, func(r *os.Root) error {
		for range 8 {
			if fi, err := r.Lstat(name); err == nil && fi.Mode()&fs.ModeSymlink != 0 {
				return &symlinkError{rel: filepath.Join(st.rel, name)}
			}
			var err error
			if f, err = r.OpenFile(name, flag, perm); err != nil {
				return err
			}
			same, err := opened(r, f, name)
			if err == nil && same {
				return nil
			}
			f.Close()
			f = nil
			if err != nil {
				if errors.Is(err, ErrSymlink) {
					return &symlinkError{rel: filepath.Join(st.rel, name)}
				}
				return err
			}
		}
		return fmt.Errorf("%s keeps being replaced; try again", filepath.ToSlash(filepath.Join(st.rel, name)))
	})
	return f, err
}

// opened reports whether f is the file name holds in r now; a link at
// name is an error wrapping ErrSymlink, since f may be what it points to.
func opened(r *os.Root, f *os.File, name string) (bool, error) {
	got, err := f.Stat()
	if err != nil {
		return false, err
	}
	there, err := r.Lstat(name)
	if errors.Is(err, fs.ErrNotExist) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	if there.Mode()&fs.ModeSymlink != 0 {
		return false, ErrSymlink
	}
	return os.SameFile(got, there), nil
}
