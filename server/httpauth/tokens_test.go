package httpauth

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// fixedRand is a deterministic randomness source for token ids.
type fixedRand struct{ b byte }

func (r *fixedRand) Read(p []byte) (int, error) {
	for i := range p {
		r.b++
		p[i] = r.b
	}
	return len(p), nil
}

func newTestTokenFile(t testing.TB) *TokenFile {
	t.Helper()
	f := NewTokenFile(filepath.Join(t.TempDir(), "data", TokensFileName))
	f.Now = func() time.Time { return time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC) }
	f.Rand = &fixedRand{}
	return f
}

func mustAdd(t testing.TB, f *TokenFile, user, agent string) (string, Token) {
	t.Helper()
	secret, tok, err := f.Add(user, agent)
	if err != nil {
		t.Fatalf("Add(%q, %q) error = %v", user, agent, err)
	}
	return secret, tok
}

func TestTokenFileAddListRevoke(t *testing.T) {
	f := newTestTokenFile(t)
	if list, err := f.List(); err != nil || len(list) != 0 {
		t.Fatalf("List() of a missing file = %v, %v; want none", list, err)
	}
	alice, aliceTok := mustAdd(t, f, "alice", "")
	bob, bobTok := mustAdd(t, f, "bob", "coder")

	for _, s := range []string{alice, bob} {
		if !strings.HasPrefix(s, TokenPrefix) || len(s) != len(TokenPrefix)+43 {
			t.Errorf("token %q: want %s and 43 base64url characters", s, TokenPrefix)
		}
	}
	if alice == bob || aliceTok.ID == bobTok.ID {
		t.Errorf("two tokens share a secret or id: %s %s", aliceTok.ID, bobTok.ID)
	}
	data, err := os.ReadFile(f.Path())
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(data, []byte(alice)) || bytes.Contains(data, []byte(bob)) || bytes.Contains(data, []byte(alice[len(TokenPrefix):])) {
		t.Errorf("tokens file holds a token:\n%s", data)
	}
	fi, _ := os.Stat(f.Path())
	if fi.Mode().Perm() != 0o600 {
		t.Errorf("tokens file mode = %v, want 0600", fi.Mode().Perm())
	}
	di, _ := os.Stat(filepath.Dir(f.Path()))
	if di.Mode().Perm() != 0o700 {
		t.Errorf("data directory mode = %v, want 0700", di.Mode().Perm())
	}

	list, err := f.List()
	if err != nil || len(list) != 2 || list[0].User != "alice" || list[1].Agent != "coder" || !list[1].Created.Equal(f.Now()) {
		t.Fatalf("List() = %+v, %v; want alice, then bob/coder", list, err)
	}
	if _, err := f.Revoke(aliceTok.ID); err != nil {
		t.Fatalf("Revoke(%s) error = %v", aliceTok.ID, err)
	}
	if _, err := f.Revoke(aliceTok.ID); !errors.Is(err, ErrNoToken) {
		t.Errorf("Revoke twice error = %v, want ErrNoToken", err)
	}
	list, _ = f.List()
	if len(list) != 1 || list[0].ID != bobTok.ID {
		t.Errorf("List() after revoke = %+v, want bob's only", list)
	}
	entries, _ := os.ReadDir(filepath.Dir(f.Path()))
	if len(entries) != 1 {
		t.Errorf("data directory holds %d entries, want the tokens file only (no temporary files)", len(entries))
	}
}

func TestTokenFileAddRefusesBadIDs(t *testing.T) {
	f := newTestTokenFile(t)
	for _, tc := range []struct{ user, agent string }{{"", ""}, {"../x", ""}, {"alice", "a/b"}, {"a b", ""}} {
		if _, _, err := f.Add(tc.user, tc.agent); err == nil {
			t.Errorf("Add(%q, %q) succeeded; want an error", tc.user, tc.agent)
		}
	}
}

func TestTokenVerifierSeesChangesWithoutRestart(t *testing.T) {
	f := newTestTokenFile(t)
	v := NewTokenVerifier(f.Path())
	ctx := t.Context()

	if _, err := v.Verify(ctx, TokenPrefix+"x"); !isCode(err, "invalid_token") {
		t.Errorf("Verify with no tokens file error = %v, want invalid_token", err)
	}
	alice, aliceTok := mustAdd(t, f, "alice", "")
	id, err := v.Verify(ctx, alice)
	if err != nil || id.User != "alice" || id.Method != MethodToken || id.Credential != aliceTok.ID {
		t.Fatalf("Verify(alice's token) = %+v, %v; want alice by token %s", id, err, aliceTok.ID)
	}
	bob, _ := mustAdd(t, f, "bob", "coder")
	if id, err := v.Verify(ctx, bob); err != nil || id.User != "bob" || id.Agent != "coder" {
		t.Errorf("Verify(token added after start) = %+v, %v; want bob/coder", id, err)
	}
	if _, err := f.Revoke(aliceTok.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := v.Verify(ctx, alice); !isCode(err, "invalid_token") {
		t.Errorf("Verify(revoked token) error = %v, want invalid_token", err)
	}
	if _, err := v.Verify(ctx, bob+"x"); !isCode(err, "invalid_token") {
		t.Errorf("Verify(altered token) error = %v, want invalid_token", err)
	}
	if _, err := v.Verify(ctx, "eyJ.a.b"); !errors.Is(err, ErrUnrecognized) {
		t.Errorf("Verify(a JWT) error = %v, want ErrUnrecognized", err)
	}

	// A damaged file refuses every token until it is fixed: as unavailable
	// (503), not as bad tokens.
	good, _ := os.ReadFile(f.Path())
	if err := os.WriteFile(f.Path(), []byte(`{"version":1,"tokens":[{"id":"tok_1","user":"bob","hash":"md5:x"}]}`), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := v.Verify(ctx, bob); !errors.Is(err, ErrUnavailable) {
		t.Errorf("Verify with a damaged file error = %v, want ErrUnavailable", err)
	}
	if err := os.WriteFile(f.Path(), good, 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := v.Verify(ctx, bob); err != nil {
		t.Errorf("Verify after the file is fixed error = %v", err)
	}
}

func TestTokensFileRefusedWhenUnsafe(t *testing.T) {
	f := newTestTokenFile(t)
	secret, _ := mustAdd(t, f, "alice", "")
	dir := filepath.Dir(f.Path())
	link := filepath.Join(dir, "link.json")
	if err := os.Symlink(f.Path(), link); err != nil {
		t.Skipf("no symlinks here: %v", err)
	}
	if _, err := NewTokenVerifier(link).Verify(t.Context(), secret); !errors.Is(err, ErrUnavailable) || !strings.Contains(err.Error(), "symbolic link") {
		t.Errorf("Verify through a symlinked file error = %v, want a refusal naming the symlink", err)
	}
	if _, err := NewTokenFile(link).List(); err == nil {
		t.Errorf("List() of a symlinked file succeeded; want an error")
	}
	if _, _, err := NewTokenFile(link).Add("bob", ""); err == nil {
		t.Errorf("Add() through a symlinked file succeeded; want an error")
	}
	if err := os.Chmod(f.Path(), 0o666); err != nil {
		t.Fatal(err)
	}
	if _, err := NewTokenVerifier(f.Path()).Verify(t.Context(), secret); !errors.Is(err, ErrUnavailable) || !strings.Contains(err.Error(), "writable by other users") {
		t.Errorf("Verify with a world-writable file error = %v, want a refusal", err)
	}
}

func TestParseTokens(t *testing.T) {
	hash := "sha256:" + strings.Repeat("ab", 32)
	tests := []struct {
		name, data string
		wantErr    string
	}{
		{"empty list", `{"version":1,"tokens":[]}`, ""},
		{"one", `{"version":1,"tokens":[{"id":"tok_1a","user":"alice","created":"2025-01-01T00:00:00Z","hash":"` + hash + `"}]}`, ""},
		{"not json", `tokens`, "decode"},
		{"trailing data", `{"version":1,"tokens":[]} {}`, "after"},
		{"version", `{"version":2,"tokens":[]}`, "version 2"},
		{"bad id", `{"version":1,"tokens":[{"id":"x","user":"alice","hash":"` + hash + `"}]}`, "id"},
		{"duplicate id", `{"version":1,"tokens":[{"id":"tok_1","user":"a","hash":"` + hash + `"},{"id":"tok_1","user":"b","hash":"` + hash + `"}]}`, "twice"},
		{"bad user", `{"version":1,"tokens":[{"id":"tok_1","user":"../a","hash":"` + hash + `"}]}`, "user"},
		{"no user", `{"version":1,"tokens":[{"id":"tok_1","hash":"` + hash + `"}]}`, "user"},
		{"bad agent", `{"version":1,"tokens":[{"id":"tok_1","user":"a","agent":"a/b","hash":"` + hash + `"}]}`, "agent"},
		{"short hash", `{"version":1,"tokens":[{"id":"tok_1","user":"a","hash":"sha256:abcd"}]}`, "hash"},
		{"plain token", `{"version":1,"tokens":[{"id":"tok_1","user":"a","hash":"mnemo_abc"}]}`, "hash"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := parseTokens([]byte(tt.data))
			if tt.wantErr == "" && err != nil || tt.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tt.wantErr)) {
				t.Errorf("parseTokens() error = %v, want %q", err, tt.wantErr)
			}
		})
	}
}

func FuzzParseTokens(f *testing.F) {
	f.Add([]byte(`{"version":1,"tokens":[{"id":"tok_1a","user":"alice","agent":"x","created":"2025-01-01T00:00:00Z","hash":"sha256:` + strings.Repeat("0f", 32) + `"}]}`))
	f.Add([]byte(`{"version":1,"tokens":null}`))
	f.Add([]byte(`{"version":1,"tokens":[{}]}`))
	f.Add([]byte(`[]`))
	f.Fuzz(func(t *testing.T, data []byte) {
		doc, err := parseTokens(data)
		if err != nil {
			return
		}
		// Whatever parses has usable entries: a valid user and a hash that
		// a presented token's hash can be compared with.
		for _, tok := range doc.Tokens {
			if tok.User == "" || len(tok.Hash) != len("sha256:")+64 || !strings.HasPrefix(tok.ID, "tok_") {
				t.Errorf("parseTokens accepted an unusable entry %+v", tok)
			}
		}
	})
}

// isCode reports whether err is an *Error with the OAuth error code.
func isCode(err error, code string) bool {
	var e *Error
	return errors.As(err, &e) && e.Code == code
}
