package cli

import (
	"bytes"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"strings"
	"testing"
	"time"
	"unicode"

	"github.com/mnemo-mcp/mnemo/memory"
)

func TestConfigPrecedence(t *testing.T) {
	file := writeFile(t, `{"debounce_seconds": 20, "max_facts": 50, "llm_model": "file-model", "shutdown_grace": "3s", "similarity_weight": 0.5}`)
	tests := []struct {
		name  string
		args  []string
		env   env
		check func(*Config) (got, want any)
	}{
		{"default", nil, nil, func(c *Config) (any, any) { return c.Memory.DebounceSeconds, 30 }},
		{"file beats default", []string{"--config", file}, nil, func(c *Config) (any, any) { return c.Memory.DebounceSeconds, 20 }},
		{"env beats file", []string{"--config", file}, env{"MNEMO_DEBOUNCE_SECONDS": "10"}, func(c *Config) (any, any) { return c.Memory.DebounceSeconds, 10 }},
		{"flag beats env", []string{"--config", file, "--debounce-seconds", "5"}, env{"MNEMO_DEBOUNCE_SECONDS": "10"}, func(c *Config) (any, any) { return c.Memory.DebounceSeconds, 5 }},
		{"flag with =", []string{"--debounce-seconds=7"}, nil, func(c *Config) (any, any) { return c.Memory.DebounceSeconds, 7 }},
		{"file via MNEMO_CONFIG", nil, env{"MNEMO_CONFIG": file}, func(c *Config) (any, any) { return c.Memory.MaxFacts, 50 }},
		{"file float", []string{"--config", file}, nil, func(c *Config) (any, any) { return c.Memory.SimilarityWeight, 0.5 }},
		{"file duration", []string{"--config", file}, nil, func(c *Config) (any, any) { return c.ShutdownGrace, 3 * time.Second }},
		{"untouched by file", []string{"--config", file}, nil, func(c *Config) (any, any) { return c.Memory.MaxInjectionTokens, 2000 }},
		{"empty env ignored", nil, env{"MNEMO_MAX_FACTS": ""}, func(c *Config) (any, any) { return c.Memory.MaxFacts, 100 }},
		{"llm model default", nil, nil, func(c *Config) (any, any) { return c.LLM.Model, "gpt-4o-mini" }},
		{"llm model from file", []string{"--config", file}, nil, func(c *Config) (any, any) { return c.LLM.Model, "file-model" }},
		{"llm timeout default", nil, nil, func(c *Config) (any, any) { return c.LLM.Timeout, 60 * time.Second }},
		{"api key fallback", nil, env{"OPENAI_API_KEY": "sk-fallback"}, func(c *Config) (any, any) { return c.LLM.APIKey, "sk-fallback" }},
		{"api key MNEMO_ first", nil, env{"OPENAI_API_KEY": "sk-fallback", "MNEMO_LLM_API_KEY": "sk-mnemo"}, func(c *Config) (any, any) { return c.LLM.APIKey, "sk-mnemo" }},
		{"base url fallback", nil, env{"OPENAI_BASE_URL": "http://localhost:11434/v1"}, func(c *Config) (any, any) { return c.LLM.BaseURL, "http://localhost:11434/v1" }},
		{"log level", []string{"--log-level", "DEBUG"}, nil, func(c *Config) (any, any) { return c.LogLevel.String(), "DEBUG" }},
		{"user id", nil, env{"MNEMO_USER_ID": "maya"}, func(c *Config) (any, any) { return c.Memory.UserID, "maya" }},
		{"token encoding", []string{"--token-encoding", "o200k_base"}, nil, func(c *Config) (any, any) { return c.TokenEncoding, "o200k_base" }},
		{"data dir default", nil, nil, func(c *Config) (any, any) { return c.DataDir, defaultDirForTest("/home/maya") }},
		{"data dir env", nil, env{"MNEMO_DATA_DIR": "/srv/mnemo"}, func(c *Config) (any, any) { return c.DataDir, filepath.Clean("/srv/mnemo") }},
		{"a bundle's unfilled placeholder is no value", nil, env{"MNEMO_DATA_DIR": "${user_config.data_dir}", "MNEMO_LLM_BASE_URL": "${user_config.llm_base_url}"}, func(c *Config) (any, any) {
			return c.DataDir + "|" + c.LLM.BaseURL, defaultDirForTest("/home/maya") + "|"
		}},
		{"data dir tilde", []string{"--data-dir", "~/mem"}, nil, func(c *Config) (any, any) { return c.DataDir, filepath.Join("/home/maya", "mem") }},
		{"trusted proxies from env", nil, env{"MNEMO_TRUSTED_PROXIES": " 10.0.0.5 , fd00::/8,"}, func(c *Config) (any, any) { return strings.Join(c.HTTP.TrustedProxies, "|"), "10.0.0.5|fd00::/8" }},
		{"trusted proxies as a JSON array", []string{"--config", writeFile(t, `{"trusted_proxies": ["10.0.0.5", "10.1.0.0/16"]}`)}, nil, func(c *Config) (any, any) { return strings.Join(c.HTTP.TrustedProxies, "|"), "10.0.0.5|10.1.0.0/16" }},
		{"origin recorded", []string{"--max-facts", "9"}, nil, func(c *Config) (any, any) { return c.origin["max_facts"], "flag --max-facts" }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var stderr bytes.Buffer
			cfg, err := loadConfig(tt.args, baseEnv(tt.env).get, &stderr)
			if err != nil {
				t.Fatalf("loadConfig() error = %v (stderr %q)", err, stderr.String())
			}
			if got, want := tt.check(cfg); got != want {
				t.Errorf("got %v, want %v", got, want)
			}
		})
	}
}

// defaultDirForTest is the default data dir of this platform for home.
func defaultDirForTest(home string) string {
	d, _ := defaultDataDir(runtime.GOOS, func(string) string { return "" }, home)
	return d
}

func TestConfigErrors(t *testing.T) {
	bad := writeFile(t, `{"debounce_secs": 5}`)
	badType := writeFile(t, `{"max_facts": "many"}`)
	badRange := writeFile(t, `{"max_injection_tokens": 50}`)
	notJSON := writeFile(t, `debounce_seconds = 5`)
	tests := []struct {
		name string
		args []string
		env  env
		want []string // substrings of stderr
	}{
		{"flag out of range", []string{"--debounce-seconds", "0"}, nil, []string{"debounce_seconds", "flag --debounce-seconds", "out of range"}},
		{"env out of range", nil, env{"MNEMO_MAX_INJECTION_TOKENS": "9000"}, []string{"max_injection_tokens", "environment variable MNEMO_MAX_INJECTION_TOKENS", "out of range [100, 8000]"}},
		{"file out of range", []string{"--config", badRange}, nil, []string{"max_injection_tokens", "config file " + badRange, "out of range"}},
		{"not a number", nil, env{"MNEMO_MAX_FACTS": "lots"}, []string{"max_facts", "MNEMO_MAX_FACTS", "not a whole number"}},
		{"float out of range", []string{"--similarity-weight", "1.5"}, nil, []string{"similarity_weight", "flag --similarity-weight"}},
		{"NaN", []string{"--confidence-weight", "NaN"}, nil, []string{"confidence_weight", "not a number"}},
		{"bad duration", nil, env{"MNEMO_SHUTDOWN_GRACE": "10"}, []string{"shutdown_grace", "MNEMO_SHUTDOWN_GRACE", "not a duration"}},
		{"duration out of range", []string{"--llm-timeout", "0s"}, nil, []string{"llm_timeout", "flag --llm-timeout", "out of range"}},
		{"bad log level", []string{"--log-level", "loud"}, nil, []string{"log_level", "flag --log-level"}},
		{"bad encoding", nil, env{"MNEMO_TOKEN_ENCODING": "p50k"}, []string{"token_encoding", "MNEMO_TOKEN_ENCODING"}},
		{"bad user id", []string{"--user-id", "../etc"}, nil, []string{"user_id", "flag --user-id"}},
		{"bad url", nil, env{"OPENAI_BASE_URL": "localhost:11434"}, []string{"llm_base_url", "environment variable OPENAI_BASE_URL"}},
		{"unknown key", []string{"--config", bad}, nil, []string{"config file " + bad, `unknown setting "debounce_secs"`, `did you mean "debounce_seconds"`}},
		{"wrong JSON type", []string{"--config", badType}, nil, []string{"max_facts", "config file", "must be a JSON number"}},
		{"not JSON", []string{"--config", notJSON}, nil, []string{"config file " + notJSON, "JSON object"}},
		{"missing file", []string{"--config", "/nonexistent/mnemo.json"}, nil, []string{"config file /nonexistent/mnemo.json", "flag --config"}},
		{"missing file env", nil, env{"MNEMO_CONFIG": "/nonexistent/x.json"}, []string{"environment variable MNEMO_CONFIG"}},
		{"unknown flag", []string{"--debounce", "3"}, nil, []string{"-debounce", "mnemo help"}},
		{"api key is not a flag", []string{"--llm-api-key", "sk-x"}, nil, []string{"-llm-api-key"}},
		{"stray argument", []string{"serve", "now"}, nil, []string{`unexpected argument "now"`}},
		{"unknown command", []string{"sever"}, nil, []string{`unknown command "sever"`}},
		{"no home", nil, env{"HOME": ""}, []string{"MNEMO_DATA_DIR"}},
		{"bad trusted proxy", nil, env{"MNEMO_TRUSTED_PROXIES": "10.0.0.1, proxy.example.com"}, []string{"trusted_proxies", "MNEMO_TRUSTED_PROXIES", `"proxy.example.com" is not an address or CIDR range`}},
		{"bad trusted proxy range", []string{"--trusted-proxies", "10.0.0.0/33"}, nil, []string{"trusted_proxies", "flag --trusted-proxies", `"10.0.0.0/33"`}},
		{"trusted proxies not strings", []string{"--config", writeFile(t, `{"trusted_proxies": [10]}`)}, nil, []string{"trusted_proxies", "JSON array of strings"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			e := baseEnv(tt.env)
			code := Run(t.Context(), tt.args, e.get, strings.NewReader(""), &stdout, &stderr)
			if code != exitUsage {
				t.Errorf("run() = %d, want %d; stderr %q", code, exitUsage, stderr.String())
			}
			for _, w := range tt.want {
				if !strings.Contains(stderr.String(), w) {
					t.Errorf("stderr = %q, want it to mention %q", stderr.String(), w)
				}
			}
			if stdout.Len() != 0 {
				t.Errorf("stdout = %q, want nothing", stdout.String())
			}
		})
	}
}

func TestSecretNeverPrinted(t *testing.T) {
	const key = "sk-very-secret-123"
	file := writeFile(t, `{"llm_api_key": 4242424242}`)
	var stdout, stderr bytes.Buffer
	e := baseEnv(env{"MNEMO_LLM_API_KEY": key, "MNEMO_CONFIG": file})
	code := Run(t.Context(), []string{"--max-facts", "0"}, e.get, strings.NewReader(""), &stdout, &stderr)
	if code != exitUsage {
		t.Fatalf("run() = %d, want %d", code, exitUsage)
	}
	for _, args := range [][]string{{"help"}, {"--help"}, {"version"}} {
		Run(t.Context(), args, e.get, strings.NewReader(""), &stdout, &stderr)
	}
	if out := stdout.String() + stderr.String(); strings.Contains(out, key) || strings.Contains(out, "4242424242") {
		t.Errorf("output leaks the API key: %q", out)
	}
}

func TestHelpListsEverySetting(t *testing.T) {
	// demo's own help lists the settings too: they are what it takes.
	for _, args := range [][]string{{"help", "all"}, {"serve", "--help"}, {"help", "serve"}, {"demo", "-help"}} {
		var stdout, stderr bytes.Buffer
		if code := Run(t.Context(), args, baseEnv(nil).get, strings.NewReader(""), &stdout, &stderr); code != exitOK {
			t.Fatalf("run(%q) = %d, want 0; stderr %q", args, code, stderr.String())
		}
		help := stdout.String()
		flat := strings.Join(strings.Fields(help), " ") // help wraps long lines
		for _, s := range settings {
			if !strings.Contains(help, "\n  "+s.name+"\n") {
				t.Errorf("run(%q) help has no entry for setting %s", args, s.name)
			}
			want := []string{"env " + s.envName(), "default: " + s.defaultText(), s.doc}
			if !s.secret {
				want = append(want, "--"+s.flagName())
			}
			if s.rng != "" {
				want = append(want, "range: "+s.rng)
			}
			for _, w := range want {
				if !strings.Contains(flat, strings.Join(strings.Fields(w), " ")) {
					t.Errorf("run(%q) help does not mention %q for setting %s", args, w, s.name)
				}
			}
		}
		want := []string{"--config", "MNEMO_CONFIG", "OPENAI_API_KEY", "OPENAI_BASE_URL", "mnemo demo", "mnemo version"}
		if args[0] == "demo" {
			want = []string{"--config", "MNEMO_CONFIG", "OPENAI_API_KEY", "OPENAI_BASE_URL", "mnemo demo"}
		}
		for _, w := range want {
			if !strings.Contains(help, w) {
				t.Errorf("help does not mention %q", w)
			}
		}
	}
}

// TestSettingsCoverMemoryConfig keeps the table complete as memory.Config
// grows: every field needs a setting named after it.
func TestSettingsCoverMemoryConfig(t *testing.T) {
	typ := reflect.TypeFor[memory.Config]()
	for i := range typ.NumField() {
		name := snake(typ.Field(i).Name)
		if lookupSetting(name) == nil {
			t.Errorf("memory.Config.%s has no setting %q in the settings table", typ.Field(i).Name, name)
		}
	}
	for _, s := range []string{"data_dir", "log_level", "llm_base_url", "llm_api_key", "llm_model", "llm_timeout"} {
		if lookupSetting(s) == nil {
			t.Errorf("setting %q is missing", s)
		}
	}
}

// snake converts a Go field name to its setting name: UserID → user_id,
// MaxMetaDataBytes → max_meta_data_bytes.
func snake(name string) string {
	var b strings.Builder
	r := []rune(name)
	for i, c := range r {
		if unicode.IsUpper(c) && i > 0 && (unicode.IsLower(r[i-1]) || i+1 < len(r) && unicode.IsLower(r[i+1])) {
			b.WriteByte('_')
		}
		b.WriteRune(unicode.ToLower(c))
	}
	return b.String()
}

// TestSettingRangesAgreeWithValidate checks that both ends of every
// documented range pass memory.Config.Validate.
func TestSettingRangesAgreeWithValidate(t *testing.T) {
	for _, s := range settings {
		if !s.numeric && s.kind != "DURATION" {
			continue
		}
		lo, hi, ok := strings.Cut(s.rng, "-")
		if !ok {
			t.Fatalf("setting %s: range %q is not lo-hi", s.name, s.rng)
		}
		for _, v := range []string{lo, hi} {
			cfg := defaultConfig()
			if err := s.set(cfg, v); err != nil {
				t.Errorf("setting %s: set(%s) error = %v", s.name, v, err)
			}
			if err := cfg.Memory.Validate(); err != nil {
				t.Errorf("setting %s = %s (documented bound) fails Validate: %v", s.name, v, err)
			}
		}
	}
}

func TestDefaultDataDir(t *testing.T) {
	tests := []struct {
		goos string
		env  env
		home string
		want string
	}{
		{"linux", nil, "/home/m", filepath.Join("/home/m", ".local", "share", "mnemo")},
		{"linux", env{"XDG_DATA_HOME": "/data"}, "/home/m", filepath.Join("/data", "mnemo")},
		{"linux", env{"XDG_DATA_HOME": "relative"}, "/home/m", filepath.Join("/home/m", ".local", "share", "mnemo")},
		{"freebsd", env{"XDG_DATA_HOME": "/data"}, "/home/m", filepath.Join("/data", "mnemo")},
		{"darwin", env{"XDG_DATA_HOME": "/data"}, "/Users/m", filepath.Join("/Users/m", "Library", "Application Support", "mnemo")},
		{"windows", env{"LOCALAPPDATA": `C:\Users\m\AppData\Local`}, `C:\Users\m`, filepath.Join(`C:\Users\m\AppData\Local`, "mnemo")},
		{"windows", nil, `C:\Users\m`, filepath.Join(`C:\Users\m`, "AppData", "Local", "mnemo")},
	}
	for _, tt := range tests {
		got, err := defaultDataDir(tt.goos, tt.env.get, tt.home)
		if err != nil || got != tt.want {
			t.Errorf("defaultDataDir(%s, %v) = %q, %v; want %q", tt.goos, tt.env, got, err, tt.want)
		}
	}
	if _, err := defaultDataDir("linux", env{}.get, ""); err == nil {
		t.Error("defaultDataDir without a home: want an error")
	}
}

// TestSettingsTable checks docs/configuration.md lists every setting as
// settingsMarkdown renders it.
func TestSettingsTable(t *testing.T) {
	const begin, end = "<!-- settings:begin (generated by go test -run TestSettingsTable -update) -->\n", "<!-- settings:end -->"
	data, err := os.ReadFile("../docs/configuration.md")
	if err != nil {
		t.Fatal(err)
	}
	readme := string(data)
	i, j := strings.Index(readme, begin), strings.Index(readme, end)
	if i < 0 || j < i {
		t.Fatalf("docs/configuration.md lacks the settings markers %q ... %q", begin, end)
	}
	want := settingsMarkdown()
	if got := readme[i+len(begin) : j]; got != want {
		if *updateGolden {
			readme = readme[:i+len(begin)] + want + readme[j:]
			if err := os.WriteFile("../docs/configuration.md", []byte(readme), 0o644); err != nil {
				t.Fatal(err)
			}
			return
		}
		t.Errorf("docs/configuration.md settings table is stale; run go test ./cli -run TestSettingsTable -update")
	}
	for _, s := range settings {
		if !strings.Contains(readme, "| `"+s.name+"` |") {
			t.Errorf("docs/configuration.md does not list setting %s", s.name)
		}
	}
}

// TestURLCredentialsNeverPrinted checks that credentials in endpoint URLs
// (a password, a user name used as a token, a secret query parameter) and
// a short key appear in no output: doctor, the serve start-up log and the
// error of an invalid URL.
func TestURLCredentialsNeverPrinted(t *testing.T) {
	secrets := []string{"PASSWD1", "QUERYKEY2", "TOKEN3", "k4y"}
	endpoint := doctorEndpoint(t, 200)
	withCreds := strings.Replace(endpoint.URL, "://", "://maya:PASSWD1@", 1) + "?api-key=QUERYKEY2"
	dir := t.TempDir()
	runs := []struct {
		args []string
		env  env
	}{
		{[]string{"doctor"}, env{"MNEMO_DATA_DIR": dir, "MNEMO_LLM_BASE_URL": withCreds, "MNEMO_LLM_API_KEY": "k4y",
			"MNEMO_EMBEDDING_MODEL": "m", "MNEMO_EMBEDDING_BASE_URL": strings.Replace(endpoint.URL, "://", "://TOKEN3@", 1)}},
		{[]string{"--llm-base-url", "http://maya:PASSWD1@bad host/?api-key=QUERYKEY2"}, env{"MNEMO_DATA_DIR": dir}},
		{[]string{"doctor", "--llm-base-url", "ftp://maya:PASSWD1@h/?token=QUERYKEY2"}, env{"MNEMO_DATA_DIR": dir}},
	}
	for _, r := range runs {
		code, out, errOut := runEnv(t, r.env, r.args...)
		for _, s := range secrets {
			if strings.Contains(out+errOut, s) {
				t.Errorf("%q (exit %d) prints %q:\n%s%s", r.args, code, s, out, errOut)
			}
		}
	}
	// The serve start-up log names the endpoint, masked.
	cfg := defaultConfig()
	cfg.LLM.BaseURL = withCreds
	if got := llmState(cfg); strings.Contains(got, "PASSWD1") || strings.Contains(got, "QUERYKEY2") || !strings.Contains(got, "xxxxx") {
		t.Errorf("llmState() = %q, want the credentials masked", got)
	}
}
