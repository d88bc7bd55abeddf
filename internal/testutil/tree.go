package testutil

import (
	"bytes"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// SnapshotTree records every entry under dir, never following links: its
// kind, mode, size, modification time and, for a regular file, content.
func SnapshotTree(tb testing.TB, dir string) map[string]string {
	tb.Helper()
	out := map[string]string{}
	err := filepath.WalkDir(dir, func(p string, e fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		fi, err := os.Lstat(p)
		if err != nil {
			return err
		}
		desc := fmt.Sprintf("%v %d %d", fi.Mode(), fi.Size(), fi.ModTime().UnixNano())
		if fi.Mode().IsRegular() {
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			desc += " " + string(b)
		}
		out[p] = desc
		return nil
	})
	if err != nil {
		tb.Fatalf("snapshot %s: %v", dir, err)
	}
	return out
}

// DiffTrees lists, sorted, the entries added, removed or changed between
// two snapshots ("added PATH", "removed PATH", "changed PATH").
func DiffTrees(before, after map[string]string) []string {
	var d []string
	for p, b := range before {
		if a, ok := after[p]; !ok {
			d = append(d, "removed "+p)
		} else if a != b {
			d = append(d, "changed "+p)
		}
	}
	for p := range after {
		if _, ok := before[p]; !ok {
			d = append(d, "added "+p)
		}
	}
	slices.Sort(d)
	return d
}

// GrepFiles returns the regular files under dir (slash-separated, relative
// to dir) whose bytes hold one of words, ignoring case; forget tests use it
// to show a forgotten text is in no file.
func GrepFiles(tb testing.TB, dir string, words ...string) []string {
	tb.Helper()
	var hits []string
	err := filepath.WalkDir(dir, func(p string, e fs.DirEntry, err error) error {
		if err != nil || !e.Type().IsRegular() {
			return err
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		b = bytes.ToLower(b)
		if slices.ContainsFunc(words, func(w string) bool { return bytes.Contains(b, []byte(strings.ToLower(w))) }) {
			rel, _ := filepath.Rel(dir, p)
			hits = append(hits, filepath.ToSlash(rel))
		}
		return nil
	})
	if err != nil {
		tb.Fatalf("grep %s: %v", dir, err)
	}
	return hits
}
