// Package redact finds secrets in text and replaces them, under one rule
// for the whole program: what remembered text may not keep (API keys of
// the common providers, cloud credentials, tokens, JWTs, private key
// blocks, passwords in URLs and in "password: ..." assignments) and what
// the operator's own settings may not show (credentials and secret query
// parameters of URLs, configured keys).
//
// A secret is replaced by "[redacted: KIND]" so that the text still reads
// and says what was there. The patterns are anchored on the shapes the
// providers publish (prefixes, lengths, alphabets), so ordinary prose does
// not match: over the LoCoMo development conversations (the eval corpus)
// they find nothing.
//
// A text is scanned once for the rules' literals (internal/relit) and only
// the rules it may match are run: the same findings as running each one
// (onepass_test.go checks it, and FuzzTextOnePass).
package redact

import (
	"encoding/base64"
	"net/url"
	"regexp"
	"sort"
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"

	"github.com/mnemo-mcp/mnemo/internal/relit"
)

// Finding is one redacted secret: its kind and where it was, in bytes of
// the original text.
type Finding struct {
	Kind  string `json:"kind"`
	Start int    `json:"start"`
	End   int    `json:"end"`
}

// rule is one kind of secret. When group is set, only that submatch is
// replaced (the value of an assignment, the password of a URL). When
// check is set, a match is a secret only if check holds for the replaced
// text (a generated key is random; a phrase that shares its prefix is
// not).
type rule struct {
	kind  string
	re    *regexp.Regexp
	group int
	check func(string) bool
}

// rules, most specific first: where two overlap, the first wins.
var rules = sync.OnceValue(func() []rule {
	return []rule{
		// A block without its END line is redacted to the end of the text.
		{"private key", regexp.MustCompile(`-----BEGIN [A-Z ]*PRIVATE KEY(?: BLOCK)?-----[\s\S]*?(?:-----END [A-Z ]*PRIVATE KEY(?: BLOCK)?-----|\z)`), 0, nil},
		{"jwt", regexp.MustCompile(`\beyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}`), 0, nil},
		{"anthropic api key", regexp.MustCompile(`\bsk-ant-[A-Za-z0-9_-]{20,}`), 0, notWordsAfterPrefix},
		{"openai api key", regexp.MustCompile(`\bsk-(?:proj-|svcacct-|admin-)?[A-Za-z0-9_-]{20,}`), 0, notWordsAfterPrefix},
		{"stripe key", regexp.MustCompile(`\b(?:sk|rk|pk)_(?:live|test)_[A-Za-z0-9]{16,}`), 0, nil},
		{"github token", regexp.MustCompile(`\b(?:gh[pousr]_[A-Za-z0-9]{30,}|github_pat_[A-Za-z0-9_]{22,})`), 0, nil},
		{"gitlab token", regexp.MustCompile(`\bglpat-[A-Za-z0-9_-]{20,}`), 0, nil},
		{"slack token", regexp.MustCompile(`\bxox[abposr]-[A-Za-z0-9-]{10,}`), 0, notWordsAfterPrefix},
		{"google api key", regexp.MustCompile(`\bAIza[0-9A-Za-z_-]{35}`), 0, nil},
		{"hugging face token", regexp.MustCompile(`\bhf_[A-Za-z0-9]{30,}`), 0, notWordsAfterPrefix},
		{"npm token", regexp.MustCompile(`\bnpm_[A-Za-z0-9]{36}`), 0, nil},
		{"mnemo token", regexp.MustCompile(`\bmnemo_[A-Za-z0-9_-]{32,}`), 0, notWordsAfterPrefix},
		{"aws access key", regexp.MustCompile(`\b(?:AKIA|ASIA|ABIA|ACCA)[0-9A-Z]{16}\b`), 0, nil},
		{"aws secret key", regexp.MustCompile(`(?i)\baws_?secret_?(?:access_?)?key\s*["']?\s*[:=]\s*["']?([A-Za-z0-9/+=]{40})`), 1, nil},
		{"azure key", regexp.MustCompile(`(?i)\b(?:AccountKey|SharedAccessKey)=([A-Za-z0-9+/=]{20,})`), 1, nil},
		{"bearer token", regexp.MustCompile(`(?i)\bBearer\s+([A-Za-z0-9._~+/-]{20,}=*)`), 1, notWords},
		// HTTP Basic credentials: base64 of "user:password".
		{"basic credentials", regexp.MustCompile(`(?i)\bBasic\s+([A-Za-z0-9+/]{4,}={0,2})`), 1, basicCredentials},
		{"password", regexp.MustCompile(`\b[a-zA-Z][a-zA-Z0-9+.-]*://[^\s:/@]+:([^\s@/]+)@`), 1, nil},
		{"password", regexp.MustCompile(`(?i)\b(?:password|passwd|pwd|passphrase)\s*[:=]\s*["']?([^\s"']{4,})`), 1, nil},
		// "my password is X" only when X looks like one (a digit or a symbol
		// in it): "the password is easy to guess" keeps its words.
		{"password", regexp.MustCompile(`(?i)\b(?:password|passwd|passphrase)\s+(?:is|was)\s+["']?([^\s"']*[0-9!@#$%^&*_+=~-][^\s"'.,;]*)`), 1, nil},
		{"secret", regexp.MustCompile(`(?i)\b(?:api[_-]?key|secret[_-]?key|client[_-]?secret|access[_-]?token|auth[_-]?token|secret)\s*[:=]\s*["']?([A-Za-z0-9_./+=-]{12,})`), 1, notWords},
	}
})

// gates are the rules' literal tests, in the order of rules, as one set
// that a text is scanned with once.
var gates = sync.OnceValue(func() *relit.Set {
	out := make([]relit.Gate, len(rules()))
	for i, r := range rules() {
		out[i] = relit.Required(r.re)
	}
	return relit.NewSet(out)
})

// Text returns text with every secret replaced by "[redacted: KIND]", and
// what was replaced, in order. Text that holds none is returned as it is.
func Text(text string) (string, []Finding) { return text2(text, true) }

// text2 is Text; gated says a rule whose literals the text lacks is not
// run (the one scan of relit.Prepare decides for every rule), which never
// changes the result: the tests compare it with every rule run.
func text2(text string, gated bool) (string, []Finding) {
	var found []Finding
	open := gates().Scan(relit.Prepare(text))
	for i, r := range rules() {
		if gated && !open.Has(i) {
			continue
		}
		for _, m := range r.re.FindAllStringSubmatchIndex(text, -1) {
			start, end := m[2*r.group], m[2*r.group+1]
			if start < 0 || strings.HasPrefix(text[start:end], "[redacted") {
				continue
			}
			if overlaps(found, start, end) || r.check != nil && !r.check(text[start:end]) {
				continue
			}
			found = append(found, Finding{Kind: r.kind, Start: start, End: end})
		}
	}
	if len(found) == 0 {
		return text, nil
	}
	sort.Slice(found, func(i, j int) bool { return found[i].Start < found[j].Start })
	var b strings.Builder
	last := 0
	for _, f := range found {
		b.WriteString(text[last:f.Start])
		b.WriteString("[redacted: " + f.Kind + "]")
		last = f.End
	}
	b.WriteString(text[last:])
	return b.String(), found
}

// maxWord is the longest run of letters taken for a word: a longer one is
// not prose (English words past 16 letters are rare; a random key's
// letters run longer between digits and case changes).
const maxWord = 16

// notWords reports whether s looks generated rather than written: it has
// a digit, or a part that is no word. s is split at '-', '_', '.', '/',
// '+', '=' and at each change from a lower-case to an upper-case letter;
// a word is as isWord says. "learn-compatible",
// "see-you-tomorrow", "AutoModelForSequenceClassification" are words; a
// random key, with digits and case changes inside its runs, is not.
func notWords(s string) bool {
	if strings.ContainsAny(s, "0123456789") {
		return true
	}
	for _, part := range strings.FieldsFunc(s, func(r rune) bool { return strings.ContainsRune("-_./+=", r) }) {
		for _, w := range camelWords(part) {
			if !isWord(w) {
				return true
			}
		}
	}
	return false
}

// camelWords splits s before every upper-case letter that follows a
// lower-case one.
func camelWords(s string) []string {
	var out []string
	start := 0
	for i := 1; i < len(s); i++ {
		if s[i] >= 'A' && s[i] <= 'Z' && s[i-1] >= 'a' && s[i-1] <= 'z' {
			out = append(out, s[start:i])
			start = i
		}
	}
	return append(out, s[start:])
}

// isWord reports whether w reads as a word: "a", or 2 to maxWord letters
// with a vowel, lower-case after at most 5 leading capitals (Word, URLParser),
// or an acronym of 2 to 5 capitals (HTTP, JSON).
func isWord(w string) bool {
	if w == "a" {
		return true
	}
	if len(w) < 2 || len(w) > maxWord {
		return false
	}
	caps := 0
	for caps < len(w) && w[caps] >= 'A' && w[caps] <= 'Z' {
		caps++
	}
	if caps == len(w) {
		return caps <= 5
	}
	if caps > 5 {
		return false
	}
	for i := caps; i < len(w); i++ {
		if w[i] < 'a' || w[i] > 'z' {
			return false
		}
	}
	return strings.ContainsAny(strings.ToLower(w), "aeiouy")
}

// notWordsAfterPrefix is notWords of what follows a key's prefix (the
// text up to its first '-' or '_', as in sk-, xoxb-, hf_).
func notWordsAfterPrefix(s string) bool {
	if i := strings.IndexAny(s, "-_"); i >= 0 {
		s = s[i+1:]
	}
	return notWords(s)
}

// basicCredentials reports whether s is base64 of "user:password" in
// printable text, as an Authorization: Basic header carries.
func basicCredentials(s string) bool {
	b, err := base64.StdEncoding.DecodeString(s)
	if err != nil {
		b, err = base64.RawStdEncoding.DecodeString(strings.TrimRight(s, "="))
	}
	if err != nil || len(b) < 3 {
		return false
	}
	colon := false
	for _, c := range b {
		switch {
		case c == ':':
			colon = true
		case c < 0x20 || c > 0x7e:
			return false
		}
	}
	return colon
}

func overlaps(found []Finding, start, end int) bool {
	for _, f := range found {
		if start < f.End && f.Start < end {
			return true
		}
	}
	return false
}

// Kinds lists the distinct kinds of findings, in order of appearance.
func Kinds(found []Finding) []string {
	var kinds []string
	seen := map[string]bool{}
	for _, f := range found {
		if !seen[f.Kind] {
			seen[f.Kind] = true
			kinds = append(kinds, f.Kind)
		}
	}
	return kinds
}

// secretParams are query parameters whose values are credentials.
var secretParams = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`(?i)^(?:.*[_-])?(?:key|apikey|api-key|token|secret|password|passwd|pwd|sig|signature|auth|credential|credentials|code)$`)
})

// Masked is the text that replaces a credential in a URL or message.
const Masked = "xxxxx"

// URL returns raw with its credentials masked: the password of the
// userinfo (the user name too when there is no password, as in
// https://TOKEN@host), and the values of query parameters that name a key,
// token, secret, password or signature. It works on text that does not
// parse as a URL too, so a malformed URL in an error message is masked.
func URL(raw string) string {
	u, err := url.Parse(raw)
	if err != nil || u.Scheme == "" && u.Host == "" {
		return maskLoose(raw)
	}
	if u.User != nil {
		if _, has := u.User.Password(); has {
			u.User = url.UserPassword(u.User.Username(), Masked)
		} else if u.User.Username() != "" {
			u.User = url.User(Masked)
		}
	}
	if u.RawQuery != "" {
		q := u.Query()
		changed := false
		for k, vs := range q {
			if secretParams().MatchString(k) {
				for i := range vs {
					vs[i] = Masked
				}
				changed = true
			}
		}
		if changed {
			u.RawQuery = q.Encode()
		}
	}
	return u.String()
}

var (
	looseUserinfo = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`(//[^\s/@:]*:)[^/@]*@`) })
	looseUser     = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`(//)[^\s/@:]+@`) })
	// looseKeyword is password=… in a key=value connection string
	// (PostgreSQL's "host=db user=u password=…" form).
	looseKeyword = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`(?i)(\bpassword\s*=\s*)('(?:[^'\\]|\\.)*'|[^\s&]*)`) })
	looseQuery   = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`(?i)([?&](?:[\w-]*[_-])?(?:key|apikey|api-key|token|secret|password|passwd|pwd|sig|signature|auth|credentials?|code)=)[^&\s#]*`)
	})
)

// maskLoose masks credentials in text that is not a parseable URL.
func maskLoose(s string) string {
	s = looseUserinfo().ReplaceAllString(s, "${1}"+Masked+"@")
	s = looseUser().ReplaceAllString(s, "${1}"+Masked+"@")
	s = looseKeyword().ReplaceAllString(s, "${1}"+Masked)
	return looseQuery().ReplaceAllString(s, "${1}"+Masked)
}

// urlInText finds URLs inside a longer message.
var urlInText = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`[a-zA-Z][a-zA-Z0-9+.-]*://[^\s"'<>]+`) })

// Message returns msg with every URL in it masked (URL) and every known
// secret replaced by "xxxxx". Every non-empty secret is replaced, however
// short: one rule, so that a short key is not shown where a long one is
// hidden. A secret shorter than shortSecret bytes is replaced where it
// stands alone (not inside a word): replaced inside words, a password such
// as "ab" would turn "database" into "datxxxxxase", mangling the message
// and telling the password by the gap it leaves.
func Message(msg string, secrets ...string) string {
	for _, s := range secrets {
		msg = Secret(msg, s)
	}
	return urlInText().ReplaceAllStringFunc(msg, URL)
}

// Secret returns msg with secret replaced by "xxxxx" as Message does:
// everywhere, or only where it stands alone when it is short; msg as it
// is for an empty secret.
func Secret(msg, secret string) string {
	switch {
	case secret == "":
		return msg
	case len(secret) < shortSecret:
		return replaceAlone(msg, secret)
	}
	return strings.ReplaceAll(msg, secret, Masked)
}

// shortSecret is the length under which Message masks a secret only
// where it stands alone.
const shortSecret = 8

// replaceAlone replaces each occurrence of s in msg that is not preceded
// or followed by a letter or digit.
func replaceAlone(msg, s string) string {
	var b strings.Builder
	for {
		i := strings.Index(msg, s)
		if i < 0 {
			b.WriteString(msg)
			return b.String()
		}
		end := i + len(s)
		before, _ := utf8.DecodeLastRuneInString(msg[:i])
		after, _ := utf8.DecodeRuneInString(msg[end:])
		b.WriteString(msg[:i])
		if i > 0 && wordRune(before) || end < len(msg) && wordRune(after) {
			b.WriteString(msg[i:end])
		} else {
			b.WriteString(Masked)
		}
		msg = msg[end:]
	}
}

func wordRune(r rune) bool { return unicode.IsLetter(r) || unicode.IsDigit(r) }
