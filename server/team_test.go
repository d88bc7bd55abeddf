package server

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// TestFileKey: the viewer's key file of the file store is made once,
// 0600, and every process (here, goroutine) making it at once reads the
// same key; a key file others may read, or a damaged one, is refused.
func TestFileKey(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "data")
	path := filepath.Join(dir, UIKeyFileName)
	keys := make([][]byte, 8)
	var wg sync.WaitGroup
	for i := range keys {
		wg.Go(func() {
			k, err := fileKey(path, uiKeySize)
			if err != nil {
				t.Errorf("fileKey(): %v", err)
			}
			keys[i] = k
		})
	}
	wg.Wait()
	for i, k := range keys {
		if len(k) != uiKeySize || !bytes.Equal(k, keys[0]) {
			t.Fatalf("key %d = %x, want key 0 %x", i, k, keys[0])
		}
	}
	fi, err := os.Stat(path)
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("key file: %v, mode %v; want 0600", err, fi.Mode())
	}
	if again, err := fileKey(path, uiKeySize); err != nil || !bytes.Equal(again, keys[0]) {
		t.Errorf("fileKey() of an existing file = %x, %v; want the same key", again, err)
	}
	if left, _ := filepath.Glob(filepath.Join(dir, ".key-*")); len(left) > 0 {
		t.Errorf("temporary files left: %v", left)
	}

	if err := os.Chmod(path, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := fileKey(path, uiKeySize); err == nil || !strings.Contains(err.Error(), "owner only") {
		t.Errorf("a key file readable by others: %v, want refused", err)
	}
	if err := os.WriteFile(path, []byte("short"), 0o600); err != nil {
		t.Fatal(err)
	}
	os.Chmod(path, 0o600)
	if _, err := fileKey(path, uiKeySize); err == nil || !strings.Contains(err.Error(), "damaged") {
		t.Errorf("a damaged key file: %v, want refused", err)
	}
	link := filepath.Join(dir, "link.key")
	if err := os.Symlink(path, link); err != nil {
		t.Fatal(err)
	}
	if _, err := fileKey(link, uiKeySize); err == nil {
		t.Errorf("a symlinked key file was read")
	}
}

func TestPlainHTTPWarning(t *testing.T) {
	tests := []struct {
		bound, public string
		tls, warn     bool
	}{
		{"127.0.0.1:8787", "", false, false},
		{"[::1]:8787", "", false, false},
		{"0.0.0.0:8787", "", false, true},
		{"[::]:8787", "", false, true},
		{"192.0.2.7:8787", "http://memory.example.com/mcp", false, true},
		{"0.0.0.0:8787", "", true, false},
		{"0.0.0.0:8787", "https://memory.example.com/mcp", false, false},
	}
	for _, tc := range tests {
		got := plainHTTPWarning(tc.bound, tc.tls, tc.public)
		if (got != "") != tc.warn || tc.warn && (!strings.Contains(got, "in clear") || !strings.Contains(got, "tls_cert_file") || !strings.Contains(got, "TLS-terminating proxy")) {
			t.Errorf("plainHTTPWarning(%q, %v, %q) = %q, want a warning: %v", tc.bound, tc.tls, tc.public, got, tc.warn)
		}
	}
}
