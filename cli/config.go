package cli

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/mnemo-mcp/mnemo/memory"
	"github.com/mnemo-mcp/mnemo/server"
)

// Config is everything mnemo reads at startup: the memory pipeline's
// settings plus what only main needs.
type Config struct {
	Memory  memory.Config
	DataDir string
	// Storage is the PostgreSQL URL of the storage setting; empty means
	// the data directory's file store.
	Storage  string
	LogLevel slog.Level
	// TokenEncoding names the tiktoken encoding that counts injection
	// tokens (the counter memory is given).
	TokenEncoding string
	// MemoryVersions is how many earlier memory documents the store keeps
	// per scope for rollback.
	MemoryVersions int
	// ShutdownGrace bounds the time spent finishing pending work on exit.
	ShutdownGrace time.Duration
	LLM           LLMConfig
	// Embedding is the optional embeddings endpoint of vector retrieval.
	Embedding EmbeddingConfig
	// HTTP is what serve --http reads (package server).
	HTTP server.HTTPConfig

	// dataDirGiven is data_dir as it was given, before ~ and a relative
	// path were resolved; empty for the default. doctor checks it.
	dataDirGiven string

	// origin maps the name of every setting that was given explicitly to
	// where it came from ("flag --data-dir", ...); defaults are absent.
	origin map[string]string
}

// LLMConfig is the OpenAI-compatible endpoint of the memory updater.
type LLMConfig struct {
	BaseURL string
	APIKey  string
	Model   string
	Timeout time.Duration
}

// Configured reports whether an endpoint was given: a base URL (local
// servers need no key) or an API key (for the default OpenAI URL).
func (c LLMConfig) Configured() bool { return c.BaseURL != "" || c.APIKey != "" }

// EmbeddingConfig is the OpenAI-compatible embeddings endpoint; an empty
// base URL or key means the LLM endpoint's.
type EmbeddingConfig struct {
	BaseURL    string
	APIKey     string
	Model      string
	Dimensions int
}

// Configured reports whether vector retrieval is on: a model was named.
func (c EmbeddingConfig) Configured() bool { return c.Model != "" }

// defaultConfig returns the defaults of every setting except data_dir,
// which depends on the machine and is resolved last.
func defaultConfig() *Config {
	return &Config{
		Memory:         memory.DefaultConfig(),
		LogLevel:       slog.LevelInfo,
		TokenEncoding:  "cl100k_base",
		MemoryVersions: 5,
		ShutdownGrace:  10 * time.Second,
		LLM:            LLMConfig{Model: "gpt-4o-mini", Timeout: 60 * time.Second},
		HTTP:           server.DefaultHTTPConfig(),
		origin:         map[string]string{},
	}
}

// errNoDataDir is the error of a command that needs a data directory when
// none is configured and there is no home directory to put the default in.
var errNoDataDir = errors.New("no data directory: there is no home directory (HOME) for the default; set --data-dir or MNEMO_DATA_DIR")

// errUsage marks a command-line error the flag package already reported.
var errUsage = errors.New("usage error")

// loadConfig builds the configuration from, in increasing precedence,
// defaults, the JSON config file (--config or MNEMO_CONFIG), the environment
// (read only through getenv) and the settings flags in args (as the
// command's parse left them: --name=value). Every error names the setting and
// where its value came from.
func loadConfig(args []string, getenv func(string) string, stderr io.Writer) (*Config, error) {
	fs := flag.NewFlagSet("mnemo", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() { fmt.Fprintln(fs.Output(), "Run 'mnemo help' to see every flag and setting.") }
	configPath := fs.String("config", "", "JSON config file")
	flagValues := map[string]string{}
	for _, s := range settings {
		if s.secret {
			continue
		}
		fs.Func(s.flagName(), s.doc, func(v string) error { flagValues[s.name] = v; return nil })
	}
	if err := fs.Parse(args); err != nil {
		return nil, errUsage
	}
	if fs.NArg() > 0 {
		return nil, fmt.Errorf("unexpected argument %q; settings are given as flags like --data-dir DIR (run 'mnemo help')", fs.Arg(0))
	}

	cfg := defaultConfig()
	path, from := *configPath, "flag --config"
	if path == "" {
		path, from = getenv("MNEMO_CONFIG"), "environment variable MNEMO_CONFIG"
	}
	if path != "" {
		if err := cfg.applyFile(path, from); err != nil {
			return nil, err
		}
	}
	for i := range settings {
		s := &settings[i]
		for _, env := range append([]string{s.envName()}, s.envFallbacks...) {
			if v := getenv(env); v != "" && !unfilledPlaceholder(v) {
				if err := cfg.apply(s, v, "environment variable "+env); err != nil {
					return nil, err
				}
				break
			}
		}
	}
	for i := range settings {
		s := &settings[i]
		if v, ok := flagValues[s.name]; ok {
			if err := cfg.apply(s, v, "flag --"+s.flagName()); err != nil {
				return nil, err
			}
		}
	}
	if err := cfg.resolveDataDir(runtime.GOOS, getenv); err != nil {
		return nil, err
	}
	if err := cfg.Memory.Validate(); err != nil {
		return nil, fmt.Errorf("invalid configuration: %w", err)
	}
	return cfg, nil
}

// apply parses raw into setting s and records where it came from.
func (c *Config) apply(s *setting, raw, from string) error {
	if err := s.set(c, raw); err != nil {
		return fmt.Errorf("setting %s from %s: %w", s.name, from, err)
	}
	c.origin[s.name] = from
	return nil
}

// applyFile reads the JSON config file: one object whose keys are setting
// names. Unknown keys are errors, so a typo is never silently ignored.
func (c *Config) applyFile(path, from string) error {
	data, err := os.ReadFile(path)
	if err != nil {
		return fmt.Errorf("config file %s (from %s): %w", path, from, err)
	}
	var values map[string]json.RawMessage
	if err := json.Unmarshal(data, &values); err != nil {
		return fmt.Errorf("config file %s: must be one JSON object like {\"debounce_seconds\": 10}: %w", path, err)
	}
	where := "config file " + path
	for _, key := range slices.Sorted(maps.Keys(values)) {
		raw := values[key]
		s := lookupSetting(key)
		if s == nil {
			return fmt.Errorf("%s: unknown setting %q%s (run 'mnemo help' for the list)", where, key, suggest(key))
		}
		v, err := fileValue(s, raw)
		if err != nil {
			return fmt.Errorf("setting %s from %s: %w", s.name, where, err)
		}
		if err := c.apply(s, v, where); err != nil {
			return err
		}
	}
	return nil
}

// fileValue turns a JSON value into the text form the setting parses:
// numbers for numeric settings, strings for the rest.
func fileValue(s *setting, raw json.RawMessage) (string, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return "", err
	}
	switch x := v.(type) {
	case json.Number:
		if s.numeric {
			return x.String(), nil
		}
	case string:
		if !s.numeric {
			return x, nil
		}
	case bool:
		if s.boolean {
			return strconv.FormatBool(x), nil
		}
	case []any:
		if s.list {
			return listValue(x, raw)
		}
	}
	if s.numeric {
		return "", fmt.Errorf("must be a JSON number, got %s", raw)
	}
	if s.secret {
		return "", errors.New("must be a JSON string")
	}
	if s.list {
		return "", fmt.Errorf("must be a JSON array of strings or one comma-separated string, got %s", raw)
	}
	return "", fmt.Errorf("must be a JSON string, got %s", raw)
}

// listValue is a JSON array of strings as the comma-separated text a list
// setting parses.
func listValue(items []any, raw json.RawMessage) (string, error) {
	out := make([]string, 0, len(items))
	for _, it := range items {
		v, ok := it.(string)
		if !ok || strings.Contains(v, ",") {
			return "", fmt.Errorf("must be a JSON array of strings without commas, like [\"10.0.0.5\", \"10.1.0.0/16\"], got %s", raw)
		}
		out = append(out, v)
	}
	return strings.Join(out, ","), nil
}

// suggest proposes the setting a mistyped key probably meant: the one
// within a few edits of it.
func suggest(key string) string {
	norm := strings.TrimPrefix(strings.ToLower(strings.ReplaceAll(key, "-", "_")), "mnemo_")
	best, bestDist := "", 4
	for _, s := range settings {
		if d := editDistance(norm, s.name); d < bestDist {
			best, bestDist = s.name, d
		}
	}
	if best == "" {
		return ""
	}
	return fmt.Sprintf("; did you mean %q?", best)
}

// editDistance is the Levenshtein distance between a and b.
func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur := make([]int, len(b)+1)
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev = cur
	}
	return prev[len(b)]
}

// resolveDataDir fills in the platform default when data_dir was not
// given, expands a leading ~ and makes the path absolute. Without a data_dir
// and a home directory it leaves DataDir empty.
func (c *Config) resolveDataDir(goos string, getenv func(string) string) error {
	home := getenv("HOME")
	if goos == "windows" {
		home = getenv("USERPROFILE")
	}
	dir := c.DataDir
	c.dataDirGiven = dir
	if dir == "" {
		d, err := defaultDataDir(goos, getenv, home)
		if err != nil {
			return nil // no default here; the commands that need one say so
		}
		dir = d
	}
	if dir == "~" || strings.HasPrefix(dir, "~/") || strings.HasPrefix(dir, `~\`) {
		if home == "" {
			return fmt.Errorf("setting data_dir from %s: cannot expand ~ because HOME is not set", c.origin["data_dir"])
		}
		dir = filepath.Join(home, dir[1:])
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return fmt.Errorf("setting data_dir: %w", err)
	}
	c.DataDir = abs
	return nil
}

// defaultDataDir is the per-user data directory of the platform.
func defaultDataDir(goos string, getenv func(string) string, home string) (string, error) {
	if goos == "windows" {
		if d := getenv("LOCALAPPDATA"); d != "" {
			return filepath.Join(d, "mnemo"), nil
		}
	}
	if goos != "windows" && goos != "darwin" {
		if d := getenv("XDG_DATA_HOME"); filepath.IsAbs(d) {
			return filepath.Join(d, "mnemo"), nil
		}
	}
	if home == "" {
		return "", errNoDataDir
	}
	switch goos {
	case "windows":
		return filepath.Join(home, "AppData", "Local", "mnemo"), nil
	case "darwin":
		return filepath.Join(home, "Library", "Application Support", "mnemo"), nil
	}
	return filepath.Join(home, ".local", "share", "mnemo"), nil
}

// unexpandedVar finds a variable reference in a path — ${name}, $name or
// %name% — that whoever passed it did not expand: hosts expand variables
// in a server's env differently (VS Code expands ${workspaceFolder},
// others pass the text as written), and mnemo never expands them itself.
var unexpandedVar = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`\$\{[^}]*\}|\$[A-Za-z_][A-Za-z0-9_]*|%[A-Za-z_][A-Za-z0-9_()]*%`)
})

// dataDirProblem says what is wrong with data_dir as it was given — a
// relative path (resolved against whatever directory the host started
// mnemo in) or an unexpanded variable — and how to fix it; "" when
// nothing is.
func (c *Config) dataDirProblem() (problem, fix string) {
	given := c.dataDirGiven
	if given == "" {
		return "", ""
	}
	from := c.origin["data_dir"]
	if v := unexpandedVar().FindString(given); v != "" {
		return fmt.Sprintf("data_dir %q (from %s) holds %s, which nobody expanded: the host that started mnemo passed it as written, so memory goes to %s", given, from, v, c.DataDir),
			fmt.Sprintf("write the absolute path instead of %s in the host's configuration ('mnemo setup HOST --project' writes it for you), then move what was stored in %s if you want to keep it", v, c.DataDir)
	}
	if given != "~" && !strings.HasPrefix(given, "~/") && !strings.HasPrefix(given, `~\`) && !filepath.IsAbs(given) {
		return fmt.Sprintf("data_dir %q (from %s) is a relative path: it resolves against the directory mnemo was started in (now %s), which a host chooses and may change", given, from, c.DataDir),
			fmt.Sprintf("set data_dir to an absolute path, e.g. --data-dir %s", c.DataDir)
	}
	return "", ""
}

// unfilledPlaceholder reports whether an environment variable's value is
// a host's placeholder left as written ("${user_config.data_dir}"): an
// MCP Bundle's entry names each setting the person may leave empty that
// way, and a host that does not fill an empty one passes it through.
// Such a value means the setting was not given, not a folder or a URL
// by that name.
func unfilledPlaceholder(v string) bool {
	return strings.HasPrefix(v, "${") && strings.HasSuffix(v, "}") && !strings.ContainsAny(v[2:len(v)-1], "${} ")
}
