package pgtest

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

func TestParseVersion(t *testing.T) {
	tests := []struct {
		out     string
		want    int
		wantErr bool
	}{
		{"postgres (PostgreSQL) 15.8 (Debian 15.8-0+deb12u1)\n", 15, false},
		{"postgres (PostgreSQL) 17.2 (Homebrew)\n", 17, false},
		{"postgres (PostgreSQL) 18beta1\n", 18, false},
		{"postgres (PostgreSQL) 9.6.24\n", 9, false},
		{"postgres (PostgreSQL) devel\n", 0, true},
		{"bash: postgres: command not found\n", 0, true},
		{"", 0, true},
	}
	for _, tt := range tests {
		got, err := parseVersion(tt.out)
		if got != tt.want || (err != nil) != tt.wantErr {
			t.Errorf("parseVersion(%q) = %d, %v; want %d, error %v", tt.out, got, err, tt.want, tt.wantErr)
		}
	}
}

// TestFindBinDir runs the finder over fake installations: directories
// holding empty files named like the binaries, with the versions a fake
// postgres --version reports.
func TestFindBinDir(t *testing.T) {
	root := t.TempDir()
	install := func(name string, bins ...string) string {
		d := filepath.Join(root, name)
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
		for _, b := range bins {
			if err := os.WriteFile(filepath.Join(d, b), nil, 0o755); err != nil {
				t.Fatal(err)
			}
		}
		return d
	}
	pg14 := install("14", "initdb", "postgres")
	pg15 := install("15", "initdb", "postgres")
	pg17 := install("17", "initdb", "postgres")
	broken := install("broken", "initdb", "postgres")
	clientOnly := install("client", "psql", "pg_config")
	noInitdb := install("noinitdb", "postgres", "pg_ctl")
	versions := map[string]int{pg14: 14, pg15: 15, pg17: 17}
	version := func(_ context.Context, dir string) (int, error) {
		if v, ok := versions[dir]; ok {
			return v, nil
		}
		return 0, errors.New("exec format error")
	}
	tests := []struct {
		name    string
		dirs    []string
		want    string
		wantErr []string // words the error names
	}{
		{"first good one wins", []string{pg17, pg15}, pg17, nil},
		{"too old skipped", []string{pg14, pg15}, pg15, nil},
		{"incomplete and broken skipped", []string{"", clientOnly, noInitdb, broken, pg15}, pg15, nil},
		{"nothing anywhere", []string{clientOnly, filepath.Join(root, "absent")}, "", []string{"no PostgreSQL found", "pg_config --bindir", "/opt/homebrew"}},
		{"only unusable ones", []string{pg14, noInitdb, broken, pg14}, "", []string{"PostgreSQL 14, older than 15", "lacks initdb", "exec format error"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := findBinDir(t.Context(), tt.dirs, version)
			if got != tt.want {
				t.Errorf("findBinDir = %q, want %q (err %v)", got, tt.want, err)
			}
			if (err != nil) != (tt.wantErr != nil) {
				t.Fatalf("findBinDir error = %v, want one: %v", err, tt.wantErr != nil)
			}
			for _, w := range tt.wantErr {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not say %q", err, w)
				}
			}
		})
	}
}

func TestNewestFirst(t *testing.T) {
	in := []string{"/usr/lib/postgresql/9/bin", "/usr/lib/postgresql/15/bin", "/usr/lib/postgresql/17/bin", "/usr/lib/postgresql/16/bin"}
	want := []string{"/usr/lib/postgresql/17/bin", "/usr/lib/postgresql/16/bin", "/usr/lib/postgresql/15/bin", "/usr/lib/postgresql/9/bin"}
	if got := newestFirst(in); !reflect.DeepEqual(got, want) {
		t.Errorf("newestFirst = %v, want %v", got, want)
	}
}

// TestFindBinDirHere finds the PostgreSQL of this machine when it has one
// (CI installs one), and checks it with its real postgres --version.
func TestFindBinDirHere(t *testing.T) {
	dir, err := FindBinDir(t.Context())
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal(err)
		}
		t.Skip(err)
	}
	v, err := serverVersion(t.Context(), dir)
	if err != nil || v < MinVersion {
		t.Errorf("found %s, version %d (%v)", dir, v, err)
	}
}
