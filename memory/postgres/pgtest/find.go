package pgtest

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
)

// MinVersion is the oldest PostgreSQL major version the tests run on.
const MinVersion = 15

// binaries are the programs the helper runs; a directory is a candidate
// only when it holds both.
var binaries = []string{"initdb", "postgres"}

// FindBinDir returns the directory of the binaries of a PostgreSQL
// MinVersion or later. It looks, in this order, on PATH, in pg_config
// --bindir, in Debian's /usr/lib/postgresql/*/bin and in Homebrew's
// /opt/homebrew/opt/postgresql@*/bin, /usr/local/opt/postgresql@*/bin and
// /opt/homebrew/bin (newest version first within a pattern). The error
// says where it looked and why each installation found was not used.
func FindBinDir(ctx context.Context) (string, error) {
	return findBinDir(ctx, candidateDirs(ctx), serverVersion)
}

// candidateDirs lists the directories FindBinDir tries, in order.
func candidateDirs(ctx context.Context) []string {
	var dirs []string
	if p, err := exec.LookPath("initdb"); err == nil {
		dirs = append(dirs, filepath.Dir(p))
	}
	if out, err := exec.CommandContext(ctx, "pg_config", "--bindir").Output(); err == nil {
		dirs = append(dirs, strings.TrimSpace(string(out)))
	}
	for _, pattern := range []string{"/usr/lib/postgresql/*/bin", "/opt/homebrew/opt/postgresql@*/bin", "/usr/local/opt/postgresql@*/bin"} {
		m, _ := filepath.Glob(pattern)
		dirs = append(dirs, newestFirst(m)...)
	}
	return append(dirs, "/opt/homebrew/bin")
}

// newestFirst orders versioned directories by the first number in their
// path, highest first (16 before 15, 17.2 before 9).
func newestFirst(dirs []string) []string {
	out := append([]string(nil), dirs...)
	sort.SliceStable(out, func(i, j int) bool { return pathVersion(out[i]) > pathVersion(out[j]) })
	return out
}

func pathVersion(p string) int {
	start := strings.IndexAny(p, "0123456789")
	if start < 0 {
		return -1
	}
	end := start
	for end < len(p) && p[end] >= '0' && p[end] <= '9' {
		end++
	}
	n, err := strconv.Atoi(p[start:end])
	if err != nil {
		return -1
	}
	return n
}

// findBinDir returns the first of dirs that holds the binaries of a
// PostgreSQL whose major version (as version reports it) is MinVersion
// or later.
func findBinDir(ctx context.Context, dirs []string, version func(ctx context.Context, dir string) (int, error)) (string, error) {
	var rejected []string
	seen := map[string]bool{}
	for _, d := range dirs {
		if d == "" || seen[d] {
			continue
		}
		seen[d] = true
		var missing []string
		for _, b := range binaries {
			if info, err := os.Stat(filepath.Join(d, b)); err != nil || info.IsDir() {
				missing = append(missing, b)
			}
		}
		switch {
		case len(missing) == len(binaries):
			continue // no PostgreSQL here at all
		case len(missing) > 0:
			rejected = append(rejected, fmt.Sprintf("%s lacks %s", d, strings.Join(missing, ", ")))
			continue
		}
		v, err := version(ctx, d)
		if err != nil {
			rejected = append(rejected, fmt.Sprintf("%s: %v", d, err))
			continue
		}
		if v < MinVersion {
			rejected = append(rejected, fmt.Sprintf("%s is PostgreSQL %d, older than %d", d, v, MinVersion))
			continue
		}
		return d, nil
	}
	where := "on PATH, pg_config --bindir, /usr/lib/postgresql/*/bin, /opt/homebrew/opt/postgresql@*/bin, /usr/local/opt/postgresql@*/bin, /opt/homebrew/bin"
	if len(rejected) == 0 {
		return "", fmt.Errorf("no PostgreSQL found (looked %s)", where)
	}
	return "", fmt.Errorf("no PostgreSQL %d or later found (looked %s): %s", MinVersion, where, strings.Join(rejected, "; "))
}

// serverVersion runs dir/postgres --version and returns the major version.
func serverVersion(ctx context.Context, dir string) (int, error) {
	out, err := exec.CommandContext(ctx, filepath.Join(dir, "postgres"), "--version").Output()
	if err != nil {
		return 0, fmt.Errorf("postgres --version: %w", err)
	}
	return parseVersion(string(out))
}

// parseVersion reads the major version from the output of postgres
// --version: "postgres (PostgreSQL) 15.8 (Debian 15.8-0+deb12u1)",
// "postgres (PostgreSQL) 17beta1", "postgres (PostgreSQL) 9.6.24".
func parseVersion(s string) (int, error) {
	_, rest, ok := strings.Cut(s, "(PostgreSQL) ")
	if !ok {
		return 0, fmt.Errorf("postgres --version printed %q, not a PostgreSQL version", strings.TrimSpace(s))
	}
	end := 0
	for end < len(rest) && rest[end] >= '0' && rest[end] <= '9' {
		end++
	}
	n, err := strconv.Atoi(rest[:end])
	if err != nil {
		return 0, errors.New("postgres --version printed no version number: " + strings.TrimSpace(s))
	}
	return n, nil
}
