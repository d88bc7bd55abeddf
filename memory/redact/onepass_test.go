package redact

import (
	"math/rand/v2"
	"os"
	"reflect"
	"strings"
	"testing"
)

// secretPieces are fragments of every rule's shape, upper and lower case,
// with the Unicode folds of k and s, from which random texts are made.
var secretPieces = []string{
	"-----BEGIN RSA PRIVATE KEY-----", "-----END RSA PRIVATE KEY-----", "eyJhbGciOiJIUzI1NiJ9", ".", "sk-", "sk-ant-", "proj-",
	"sk_live_", "pk_test_", "ghp_", "github_pat_", "glpat-", "xoxb-", "AIza", "hf_", "npm_", "mnemo_", "AKIA", "ASIA",
	"aws_secret_access_key", "AWS_SECRET_KEY", "AccountKey=", "sharedaccesskey=", "Bearer ", "basic ", "dXNlcjpwYXNz",
	"https://", "user:", "pa55@", "password", "PassPhrase", "pwd", " is ", ": ", "=", "api_key", "Client-Secret",
	"auth_token", "secret", "ſecret", "\u212aey", "abcDEF1234567890abcdefGHIJKLMNOPQRSTUVWXYZ", "0123456789abcdef0123456789abcdef0123",
	"learn-compatible", " ", "\n", "'", "\"", "[redacted: x]",
}

// randomSecretText returns a text of up to n pieces.
func randomSecretText(r *rand.Rand, n int) string {
	var b strings.Builder
	for range r.IntN(n + 1) {
		b.WriteString(secretPieces[r.IntN(len(secretPieces))])
	}
	return b.String()
}

// TestOnePassEqualsEveryRule: Text, which runs only the rules whose
// literals the text holds, gives what running every rule gives, on the
// ordinary corpus, the table of TestText and random texts made of the
// rules' own pieces.
func TestOnePassEqualsEveryRule(t *testing.T) {
	data, err := os.ReadFile("testdata/ordinary.txt")
	if err != nil {
		t.Fatal(err)
	}
	texts := strings.Split(string(data), "\n")
	r := rand.New(rand.NewPCG(4, 2))
	for range 30000 {
		texts = append(texts, randomSecretText(r, 10))
	}
	redacted := 0
	for _, s := range texts {
		got, gotFound := text2(s, true)
		want, wantFound := text2(s, false)
		if got != want || !reflect.DeepEqual(gotFound, wantFound) {
			t.Fatalf("Text(%q) = %q %v, every rule gives %q %v", s, got, gotFound, want, wantFound)
		}
		if len(wantFound) > 0 {
			redacted++
		}
	}
	if redacted < 1000 {
		t.Errorf("only %d of %d random texts hold a secret: the pieces no longer reach the rules", redacted, len(texts))
	}
}

// FuzzTextOnePass: the gated pass equals every rule run, on any input.
func FuzzTextOnePass(f *testing.F) {
	r := rand.New(rand.NewPCG(8, 8))
	for range 20 {
		f.Add(randomSecretText(r, 8))
	}
	f.Fuzz(func(t *testing.T, s string) {
		got, gotFound := text2(s, true)
		want, wantFound := text2(s, false)
		if got != want || !reflect.DeepEqual(gotFound, wantFound) {
			t.Fatalf("Text(%q) = %q %v, every rule gives %q %v", s, got, gotFound, want, wantFound)
		}
	})
}
