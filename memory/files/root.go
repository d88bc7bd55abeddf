package files

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// ErrSymlink is wrapped by the error of every operation that meets a
// symbolic link inside the data directory.
var ErrSymlink = errors.New("symbolic link in the data directory")

// symlinkError names the link, relative to the data directory.
type symlinkError struct{ rel string }

func (e *symlinkError) Error() string {
	return fmt.Sprintf("%s is a symbolic link; mnemo follows no links inside its data directory (remove it; mnemo doctor lists them)", filepath.ToSlash(e.rel))
}

func (e *symlinkError) Unwrap() error { return ErrSymlink }

// dataDir performs every file operation of a Store, on paths relative to
// the data directory. A data directory may come from a cloned repository,
// so its contents are untrusted: no operation follows a symbolic link
// found beneath it, and none can reach outside it. The data directory
// itself may be a link (the user's choice); confinement applies beneath.
//
// Mechanism: the directory is opened as an os.Root, and every path is
// first checked with Lstat, component by component, refusing any link
// (the error names the path relative to the data directory and nothing
// is changed). os.Root alone would do: it never escapes the directory,
// even when a component is swapped during an operation, but it follows
// links that stay inside, so that a planted users/bob/agents ->
// ../alice/agents would let one scope read and delete another; the Lstat
// checks refuse every link, inside or out. The one window left, a
// component replaced by an in-directory link between the check and the
// use, needs a concurrent writer inside the data directory, who can
// rewrite the data files anyway, and even then os.Root keeps the
// operation inside. openat2(RESOLVE_BENEATH|RESOLVE_NO_SYMLINKS) would
// close that window on Linux ≥ 5.6 only, through a new dependency and with
// a fallback still needed everywhere else; os.Root is the standard
// library's and works on every system mnemo builds for.
type dataDir struct {
	path string // absolute; for messages to the operator only
	root *os.Root
}

func openDataDir(path string) (*dataDir, error) {
	r, err := os.OpenRoot(path)
	if err != nil {
		return nil, err
	}
	return &dataDir{path: path, root: r}, nil
}

func (d *dataDir) close() error { return d.root.Close() }

// check refuses rel when any of its components is a symbolic link. A
// component that does not exist ends the check: the operation itself
// then reports it missing, or creates it.
func (d *dataDir) check(rel string) error {
	_, err := d.walk(rel)
	return err
}

// walk is check, returning the Lstat of rel itself (nil when missing or
// rel is "."). The components are examined with plain lstat(2) calls on
// the absolute path, one per component (an os.Root Lstat would reopen
// every parent for each); the operation that follows goes through
// os.Root, which keeps it inside the data directory whatever changes in
// between.
func (d *dataDir) walk(rel string) (fs.FileInfo, error) {
	rel = filepath.Clean(rel)
	if rel == "." {
		return nil, nil
	}
	if !filepath.IsLocal(rel) {
		return nil, fmt.Errorf("%s is outside the data directory", rel)
	}
	parts := strings.Split(rel, string(filepath.Separator))
	p := d.path
	var fi fs.FileInfo
	for i, name := range parts {
		p = filepath.Join(p, name)
		var err error
		fi, err = os.Lstat(p)
		if errors.Is(err, fs.ErrNotExist) {
			return nil, nil
		}
		if err != nil {
			return nil, err
		}
		if fi.Mode()&fs.ModeSymlink != 0 {
			return nil, &symlinkError{rel: filepath.Join(parts[:i+1]...)}
		}
		if i < len(parts)-1 && !fi.IsDir() {
			return nil, fmt.Errorf("%s is not a directory", filepath.ToSlash(filepath.Join(parts[:i+1]...)))
		}
	}
	return fi, nil
}

// open opens rel with flag and perm, creating it (perm) with O_CREATE.
func (d *dataDir) open(rel string, flag int, perm fs.FileMode) (*os.File, error) {
	if err := d.check(rel); err != nil {
		return nil, err
	}
	f, err := d.root.OpenFile(rel, flag, perm)
	if err != nil {
		return nil, err
	}
	return f, nil
}

// readFile returns the content of the regular file rel.
func (d *dataDir) readFile(rel string) ([]byte, error) {
	f, err := d.open(rel, os.O_RDONLY, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	// Sized from the file, as os.ReadFile does: a 4.5 MB mid-term state
	// is read in one allocation, not in io.ReadAll's growing steps.
	var buf bytes.Buffer
	if fi, err := f.Stat(); err == nil && fi.Size() > 0 && fi.Size() < 1<<31 {
		buf.Grow(int(fi.Size()) + bytes.MinRead)
	}
	if _, err := buf.ReadFrom(f); err != nil {
		return nil, err
	}
	if buf.Len() == 0 {
		return []byte{}, nil // empty, not nil, as io.ReadAll reads an empty file
	}
	return buf.Bytes(), nil
}

// lstat describes rel itself, never what a link points to.
func (d *dataDir) lstat(rel string) (fs.FileInfo, error) {
	fi, err := d.walk(rel)
	if err != nil || fi != nil {
		return fi, err
	}
	return d.root.Lstat(rel)
}

// exists reports whether rel is there; a link or an error is reported
// as an error.
func (d *dataDir) exists(rel string) (bool, error) {
	_, err := d.lstat(rel)
	if errors.Is(err, fs.ErrNotExist) {
		return false, nil
	}
	return err == nil, err
}

// readDir lists the directory rel; a missing one has no entries.
func (d *dataDir) readDir(rel string) ([]fs.DirEntry, error) {
	f, err := d.open(rel, os.O_RDONLY, 0)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
	entries, err := f.ReadDir(-1)
	slices.SortFunc(entries, func(a, b fs.DirEntry) int { return strings.Compare(a.Name(), b.Name()) })
	return entries, err
}

// mkdirAll creates rel and its missing parents, 0700, fsyncing each
// parent that gained an entry so the new directory survives a crash.
func (d *dataDir) mkdirAll(rel string) error {
	rel = filepath.Clean(rel)
	if err := d.check(rel); err != nil {
		return err
	}
	parent := "."
	for _, name := range strings.Split(rel, string(filepath.Separator)) {
		p := filepath.Join(parent, name)
		switch err := d.root.Mkdir(p, 0o700); {
		case err == nil:
			if err := d.syncDir(parent); err != nil {
				return err
			}
		case errors.Is(err, fs.ErrExist):
			fi, err := d.root.Lstat(p)
			if err != nil {
				return err
			}
			if fi.Mode()&fs.ModeSymlink != 0 {
				return &symlinkError{rel: p}
			}
			if !fi.IsDir() {
				return fmt.Errorf("%s is not a directory", filepath.ToSlash(p))
			}
		default:
			return err
		}
		parent = p
	}
	return nil
}

// remove removes the file or empty directory rel (a link itself, never
// its target); a missing one is not an error.
func (d *dataDir) remove(rel string) error {
	if err := d.check(filepath.Dir(rel)); err != nil {
		return err
	}
	if err := d.root.Remove(rel); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	return nil
}

// rename renames oldRel to newRel; both must be free of links.
func (d *dataDir) rename(oldRel, newRel string) error {
	if err := d.check(oldRel); err != nil {
		return err
	}
	if err := d.check(newRel); err != nil {
		return err
	}
	return d.root.Rename(oldRel, newRel)
}

// removeAll removes rel and everything in it. A link met inside is
// removed itself, never followed (os.Root.RemoveAll unlinks entries
// relative to their directory's descriptor).
func (d *dataDir) removeAll(rel string) error {
	if err := d.check(filepath.Dir(rel)); err != nil {
		return err
	}
	return d.root.RemoveAll(rel)
}

// syncDir fsyncs the directory rel, making entries created or renamed in
// it durable (nothing on systems that cannot; see dirSync).
func (d *dataDir) syncDir(rel string) error {
	if !dirSync {
		return nil
	}
	f, err := d.open(rel, os.O_RDONLY, 0)
	if err != nil {
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return fmt.Errorf("sync directory %s: %w", filepath.ToSlash(rel), err)
	}
	return f.Close()
}

// links returns the symbolic links under rel (paths relative to the data
// directory, slash-separated), without following any.
func (d *dataDir) links(rel string) ([]string, error) {
	var out []string
	err := fs.WalkDir(d.root.FS(), filepath.ToSlash(rel), func(p string, e fs.DirEntry, err error) error {
		if errors.Is(err, fs.ErrNotExist) && p == filepath.ToSlash(rel) {
			return fs.SkipAll
		}
		if err != nil {
			return err
		}
		if e.Type()&fs.ModeSymlink != 0 {
			out = append(out, p)
		}
		return nil
	})
	return out, err
}

// writeAtomic replaces relDir/name with data: temp file (0600) in relDir,
// write, fsync, rename, directory fsync. Until the rename, any failure
// removes the temp file and leaves relDir/name as it was; a link at
// relDir/name is refused. It returns the stat of the new file once the
// rename is done, even when the directory fsync after it fails.
func (d *dataDir) writeAtomic(relDir, name string, data []byte) (fs.FileInfo, error) {
	target := filepath.Join(relDir, name)
	if err := d.check(target); err != nil {
		return nil, err
	}
	var b [8]byte
	rand.Read(b[:])
	tmp := filepath.Join(relDir, "."+name+"."+hex.EncodeToString(b[:])+tempSuffix)
	f, err := d.root.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return nil, err
	}
	renamed := false
	defer func() {
		if !renamed {
			f.Close()
			d.root.Remove(tmp)
		}
	}()
	if _, err := f.Write(data); err != nil {
		return nil, err
	}
	if err := f.Sync(); err != nil {
		return nil, err
	}
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if err := f.Close(); err != nil {
		return nil, err
	}
	if err := d.root.Rename(tmp, target); err != nil {
		return nil, err
	}
	renamed = true
	return fi, d.syncDir(relDir)
}

// FindSymlinks returns the symbolic links inside the data directory dir,
// as paths relative to it, sorted; the stores refuse to follow them. dir
// itself may be a link. A missing dir has none.
func FindSymlinks(dir string) ([]string, error) {
	d, err := openDataDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("look for symbolic links in %s: %w", dir, err)
	}
	defer d.close()
	links, err := d.links(".")
	if err != nil {
		return nil, fmt.Errorf("look for symbolic links in %s: %w", dir, err)
	}
	slices.Sort(links)
	return links, nil
}
