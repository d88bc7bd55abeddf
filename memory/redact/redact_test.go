package redact

import (
	"strings"
	"testing"
)

func TestText(t *testing.T) {
	tests := []struct {
		name, in, want string
		kinds          []string
	}{
		{"openai key", "my key is sk-proj-abcDEF1234567890abcdefGHIJ and it works", "my key is [redacted: openai api key] and it works", []string{"openai api key"}},
		{"legacy openai key", "OPENAI_API_KEY=sk-abcdefghijklmnopqrstuvwxyz012345", "OPENAI_API_KEY=[redacted: openai api key]", []string{"openai api key"}},
		{"anthropic key", "use sk-ant-api03-AAAABBBBCCCCDDDDEEEEFFFF please", "use [redacted: anthropic api key] please", []string{"anthropic api key"}},
		{"aws access key", "AKIAIOSFODNN7EXAMPLE is the id", "[redacted: aws access key] is the id", []string{"aws access key"}},
		{"aws secret", "aws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY", "aws_secret_access_key = [redacted: aws secret key]", []string{"aws secret key"}},
		{"github token", "token ghp_0123456789abcdefghijklmnopqrstuvwxyzAB", "token [redacted: github token]", []string{"github token"}},
		{"slack", "xoxb-123456789012-abcdefghij", "[redacted: slack token]", []string{"slack token"}},
		{"google", "AIzaSyA1234567890abcdefghijklmnopqrstuv", "[redacted: google api key]", []string{"google api key"}},
		{"stripe", "sk_live_0123456789abcdefABCD", "[redacted: stripe key]", []string{"stripe key"}},
		{"jwt", "Authorization: eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U", "Authorization: [redacted: jwt]", []string{"jwt"}},
		{"bearer", "curl -H 'Authorization: Bearer abcdefghijklmnopqrstuvwxyz123456'", "curl -H 'Authorization: Bearer [redacted: bearer token]'", []string{"bearer token"}},
		{"url password", "postgres://app:s3cr3t-pw@db.internal:5432/prod", "postgres://app:[redacted: password]@db.internal:5432/prod", []string{"password"}},
		{"password assignment", "password: hunter22", "password: [redacted: password]", []string{"password"}},
		{"password is", "my password is Tr0ub4dor&3 ok", "my password is [redacted: password] ok", []string{"password"}},
		{"private key", "here:\n-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAA\n-----END OPENSSH PRIVATE KEY-----\nthanks", "here:\n[redacted: private key]\nthanks", []string{"private key"}},
		{"torn private key", "-----BEGIN RSA PRIVATE KEY-----\nMIIEpAIBAAKCAQEA", "[redacted: private key]", []string{"private key"}},
		{"api key assignment", `api_key: "abcd1234efgh5678"`, `api_key: "[redacted: secret]"`, []string{"secret"}},
		{"two kinds", "sk-abcdefghijklmnopqrstuvwxyz and AKIAIOSFODNN7EXAMPLE", "[redacted: openai api key] and [redacted: aws access key]", []string{"openai api key", "aws access key"}},
		{"basic credentials", "curl -H 'Authorization: Basic YWxpY2U6czNjcjN0LXB3' https://api", "curl -H 'Authorization: Basic [redacted: basic credentials]' https://api", []string{"basic credentials"}},
		{"basic credentials unpadded", "Authorization: basic Ym9iOmh1bnRlcjI", "Authorization: basic [redacted: basic credentials]", []string{"basic credentials"}},
		{"hugging face token", "HF_TOKEN=hf_aBcDeFgHiJkLmNoPqRsTuVwXyZ0123456789", "HF_TOKEN=[redacted: hugging face token]", []string{"hugging face token"}},
		{"slack token without digits in a part", "xoxp-1234567890-abcdEFGHijklMNOP", "[redacted: slack token]", []string{"slack token"}},
		{"secret assignment", "client_secret = 9f8e7d6c5b4a39281706", "client_secret = [redacted: secret]", []string{"secret"}},
		{"already redacted", "[redacted: openai api key]", "[redacted: openai api key]", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, found := Text(tt.in)
			if got != tt.want {
				t.Errorf("Text(%q) = %q, want %q", tt.in, got, tt.want)
			}
			if k := Kinds(found); strings.Join(k, ",") != strings.Join(tt.kinds, ",") {
				t.Errorf("Text(%q) kinds = %q, want %q", tt.in, k, tt.kinds)
			}
		})
	}
}

// TestTextKeepsOrdinaryText checks near misses that ordinary conversation
// holds: none of them is a secret.
// TestMnemoToken: a token mnemo token add prints is redacted; a name
// that shares its prefix is not (TestTextKeepsOrdinaryText).
func TestMnemoToken(t *testing.T) {
	const tok = "mnemo_q3Zx_9kLm2NvB-7aPcR4tYw8eHs1uJdG5fKoX0iWbE6"
	if got, found := Text("my token is " + tok); strings.Contains(got, tok) || len(found) != 1 {
		t.Errorf("Text(a mnemo token) = %q (%v), want it redacted", got, found)
	}
}

func TestTextKeepsOrdinaryText(t *testing.T) {
	for _, s := range []string{
		"I ask for the task-management skills I need.",
		"The password is easy to guess, so I changed it.",
		"We deployed sk-learn models; risk-assessment was fine.",
		"My token of appreciation is this card.",
		"Visit https://example.com/path?page=2&sort=asc for details.",
		"Our AKIA meeting is at 5.", // not 16 more characters
		"eyJ is how JWTs start, but this is prose.",
		"The secret: never give up.",
		"I'm allergic to sesame. 上海小组用PostgreSQL。",
		"ssh-keygen made a public key: ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIO user@host",
		"Call me at +1 415 555 0199 or mail maya@example.com.",
		// A snake_case name after mnemo_ is a name, not a token (issue 41, low 10).
		"Run mnemo_redaction_false_positive_measurement again.",
	} {
		if got, found := Text(s); got != s || found != nil {
			t.Errorf("Text(%q) = %q (%v), want it unchanged", s, got, found)
		}
	}
}

func TestURL(t *testing.T) {
	tests := []struct{ in, want string }{
		{"http://user:SECRET@localhost:11434/v1", "http://user:xxxxx@localhost:11434/v1"},
		{"https://TOKEN@api.example.com/v1", "https://xxxxx@api.example.com/v1"},
		{"https://api.example.com/v1?api-key=SECRET&x=1", "https://api.example.com/v1?api-key=xxxxx&x=1"},
		{"https://api.example.com/v1?key=SECRET", "https://api.example.com/v1?key=xxxxx"},
		{"https://h/v1?access_token=SECRET&sig=AB", "https://h/v1?access_token=xxxxx&sig=xxxxx"},
		{"postgres://app:pw@/db?host=/tmp/x&sslmode=disable", "postgres://app:xxxxx@/db?host=/tmp/x&sslmode=disable"},
		{"postgresql://mnemo:SECRET@db.internal:5432/mnemo?sslmode=require", "postgresql://mnemo:xxxxx@db.internal:5432/mnemo?sslmode=require"},
		{"postgres://mnemo@db.internal/mnemo?password=SECRET&sslmode=disable", "postgres://xxxxx@db.internal/mnemo?password=xxxxx&sslmode=disable"},
		{"postgres://mnemo:p%40ss%2FSECRET@db/mnemo", "postgres://mnemo:xxxxx@db/mnemo"},
		{"postgres://mnemo:SEC RET@db/%zz", "postgres://mnemo:xxxxx@db/%zz"},
		{"host=db user=mnemo password=SECRET dbname=mnemo", "host=db user=mnemo password=xxxxx dbname=mnemo"},
		{"http://localhost:11434/v1", "http://localhost:11434/v1"},
		{"http://user:SEC RET@bad url/%zz?api-key=SECRET", "http://user:xxxxx@bad url/%zz?api-key=xxxxx"},
	}
	for _, tt := range tests {
		if got := URL(tt.in); got != tt.want {
			t.Errorf("URL(%q) = %q, want %q", tt.in, got, tt.want)
		}
		if strings.Contains(URL(tt.in), "SECRET") {
			t.Errorf("URL(%q) keeps the secret", tt.in)
		}
	}
}

func TestMessage(t *testing.T) {
	msg := `llm endpoint http://u:SECRET@h/v1?api-key=KEY2 said "bad key abc"`
	got := Message(msg, "abc", "")
	for _, s := range []string{"SECRET", "KEY2", "abc"} {
		if strings.Contains(got, s) {
			t.Errorf("Message() = %q keeps %q", got, s)
		}
	}
}

func FuzzText(f *testing.F) {
	f.Add("my key is sk-proj-abcDEF1234567890abcdefGHIJ")
	f.Add("-----BEGIN RSA PRIVATE KEY-----\nxx")
	f.Add("postgres://a:b@c/d password: x")
	f.Fuzz(func(t *testing.T, s string) {
		got, found := Text(s)
		if len(found) == 0 && got != s {
			t.Fatalf("no findings but text changed")
		}
		again, more := Text(got)
		if again != got || len(more) != 0 {
			t.Fatalf("redacting twice changed %q to %q (%v)", got, again, more)
		}
	})
}

// TestMessageShortSecret: a short secret is masked where it stands alone,
// and the words around it are left whole (a mangled "datxxxxxase" would
// tell the password "ab").
func TestMessageShortSecret(t *testing.T) {
	tests := []struct{ secret, msg, want string }{
		{"ab", "cannot reach the database: password ab refused", "cannot reach the database: password xxxxx refused"},
		{"ab", "user=mnemo password=ab dbname=db", "user=mnemo password=xxxxx dbname=db"},
		{"ab", "ab", "xxxxx"},
		{"x", "fix: check the storage", "fix: check the storage"},
		{"x", "x:x", "xxxxx:xxxxx"},
		{"pässwö", "is pässwö: unavailable", "is xxxxx: unavailable"},
		{"longsecret1", "glued:alongsecret1z", "glued:axxxxxz"},
	}
	for _, tc := range tests {
		if got := Message(tc.msg, tc.secret); got != tc.want {
			t.Errorf("Message(%q, %q) = %q, want %q", tc.msg, tc.secret, got, tc.want)
		}
	}
}
