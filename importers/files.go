package importers

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
)

// MaxFileBytes bounds a file an import reads: above any chat export
// seen, far below what a machine running mnemo holds.
const MaxFileBytes = 1 << 30

// Open reads the source at path: a regular file of at most MaxFileBytes
// (not a device, a pipe or a socket), or a directory. A directory that
// holds a conversations.json or memory.jsonl (an unpacked export) is
// that file, unless format names a format that reads directories.
func Open(path string, format Format) (Source, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return Source{}, err
	}
	if fi.IsDir() {
		if _, dirFormat := format.(memoryOS); !dirFormat {
			if file := historyFile(path); file != "" {
				return Open(file, format)
			}
		}
		return Source{Path: path, Dir: true}, nil
	}
	data, err := ReadFile(path)
	if err != nil {
		return Source{}, err
	}
	return Source{Path: path, Data: data}, nil
}

// historyFile is the conversations.json or memory.jsonl in the directory
// dir (an unpacked export); "" when it holds neither.
func historyFile(dir string) string {
	for _, name := range []string{"conversations.json", "memory.jsonl"} {
		if _, err := os.Stat(filepath.Join(dir, name)); err == nil {
			return filepath.Join(dir, name)
		}
	}
	return ""
}

// openFile opens a file to import: a regular file (not a device, a pipe
// or a directory) of at most MaxFileBytes.
func openFile(path string) (*os.File, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, err
	}
	if !fi.Mode().IsRegular() {
		f.Close()
		return nil, fmt.Errorf("%s is not a regular file (%s); give the export file itself", path, fileKind(fi.Mode()))
	}
	if fi.Size() > MaxFileBytes {
		f.Close()
		return nil, fmt.Errorf("%s is %d bytes; mnemo imports files of at most %d bytes: split the export", path, fi.Size(), int64(MaxFileBytes))
	}
	return f, nil
}

// fileKind names what a file that is not a regular file is.
func fileKind(m os.FileMode) string {
	switch {
	case m.IsDir():
		return "a directory"
	case m&os.ModeDevice != 0:
		return "a device"
	case m&os.ModeNamedPipe != 0:
		return "a pipe"
	case m&os.ModeSocket != 0:
		return "a socket"
	}
	return "a special file"
}

// ReadFile reads a file to import (a regular file, never more than
// MaxFileBytes of it even when it grows while read).
func ReadFile(path string) ([]byte, error) {
	f, err := openFile(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, MaxFileBytes+1))
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	if len(data) > MaxFileBytes {
		return nil, fmt.Errorf("%s grew past %d bytes while read; mnemo imports files of at most that size", path, int64(MaxFileBytes))
	}
	return data, nil
}
