package cli

import (
	"errors"
	"fmt"
	"log/slog"
	"math"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/mnemo-mcp/mnemo/memory"
	"github.com/mnemo-mcp/mnemo/memory/postgres"
	"github.com/mnemo-mcp/mnemo/memory/redact"
	"github.com/mnemo-mcp/mnemo/server/httpauth"
)

// setting is one row of the settings table. Its name is the JSON key of the
// config file; the flag (--debounce-seconds) and the environment variable
// (MNEMO_DEBOUNCE_SECONDS) are derived from it.
type setting struct {
	name   string
	group  string
	kind   string // value shape shown in help: N, X, DURATION, DIR, URL, ... or the allowed values
	doc    string
	rng    string // documented range; empty when any value of the kind is fine
	defDoc string // default shown in help when it depends on the machine
	// envFallbacks are read when the MNEMO_ variable is unset.
	envFallbacks []string
	// secret values are never printed and have no flag (a command line is
	// visible to every user of the machine).
	secret bool
	// mask, when set, is how the value is shown (a URL with its password
	// masked).
	mask    func(string) string
	numeric bool // the config file must give a JSON number, else a string
	boolean bool // the config file may give true or false
	list    bool // the config file may give a JSON array of strings
	set     func(c *Config, raw string) error
	get     func(c *Config) string
}

func (s *setting) flagName() string { return strings.ReplaceAll(s.name, "_", "-") }
func (s *setting) envName() string  { return "MNEMO_" + strings.ToUpper(s.name) }

// Setting groups, in help order.
const (
	groupStorage = "Storage and identity"
	groupMemory  = "Memory pipeline"
	groupLimits  = "Limits per call"
	groupLLM     = "LLM updater (an OpenAI-compatible endpoint; set llm_base_url or llm_api_key to enable extraction)"
	groupEmbed   = "Vector retrieval (an OpenAI-compatible embeddings endpoint; set embedding_model to enable; without it ranking is lexical)"
	groupProcess = "Process"
	groupHTTP    = "HTTP server (mnemo serve --http; see docs/team.md)"
)

// settings is the one table behind flags, environment, config file, help
// and the README. Ranges match memory.Config.Validate (a test checks it).
var settings = []setting{
	withDefaultDoc(textSetting(groupStorage, "data_dir", "DIR", func(c *Config) *string { return &c.DataDir }, nil,
		"Directory that holds all memory (users/<user>/[agents/<agent>/]turns.jsonl and memory.json). Use an absolute path; a leading ~/ is expanded."),
		"$XDG_DATA_HOME/mnemo or ~/.local/share/mnemo (Linux), ~/Library/Application Support/mnemo (macOS), %LocalAppData%\\mnemo (Windows)"),
	maskedSetting(textSetting(groupStorage, "storage", "URL", func(c *Config) *string { return &c.Storage }, checkStorage,
		"Where memory is kept: empty for the data directory, or a PostgreSQL 15+ URL (postgres://user:password@host:5432/db?sslmode=…) for one memory shared by several mnemo instances. The password is never printed; prefer MNEMO_STORAGE or the config file to a flag."),
		postgres.MaskURL),
	textSetting(groupStorage, "user_id", "ID", func(c *Config) *string { return &c.Memory.UserID }, checkID("user_id"),
		"User whose memory is used when a tool call names none: letters, digits, '.', '_', '-' (1-128)."),
	intSetting(groupStorage, "memory_versions", func(c *Config) *int { return &c.MemoryVersions }, 0, 100,
		"Earlier versions of each memory.json kept in versions/ so that a bad update can be undone with 'mnemo rollback'; 0 keeps none."),

	intSetting(groupMemory, "debounce_seconds", func(c *Config) *int { return &c.Memory.DebounceSeconds }, 1, 300,
		"Seconds a conversation must be quiet before its new turns go to the memory updater."),
	intSetting(groupMemory, "max_facts", func(c *Config) *int { return &c.Memory.MaxFacts }, 1, 10000,
		"Most facts kept per memory; over it the least confident go."),
	floatSetting(groupMemory, "fact_confidence_threshold", func(c *Config) *float64 { return &c.Memory.FactConfidenceThreshold }, 0, 1,
		"Lowest confidence a newly extracted fact needs to be kept."),
	intSetting(groupMemory, "max_injection_tokens", func(c *Config) *int { return &c.Memory.MaxInjectionTokens }, memory.MinRetrieveTokens, memory.MaxRetrieveTokens,
		"Default token budget of the <memory> injection text retrieve_memory builds."),
	intSetting(groupMemory, "max_context_turns", func(c *Config) *int { return &c.Memory.MaxContextTurns }, 0, 50,
		"Recent turns of the thread that join the query when facts are ranked."),
	floatSetting(groupMemory, "similarity_weight", func(c *Config) *float64 { return &c.Memory.SimilarityWeight }, 0, 1,
		"Weight of relevance to the query in a fact's score."),
	floatSetting(groupMemory, "confidence_weight", func(c *Config) *float64 { return &c.Memory.ConfidenceWeight }, 0, 1,
		"Weight of the fact's confidence in its score."),
	intSetting(groupMemory, "short_term_capacity", func(c *Config) *int { return &c.Memory.ShortTermCapacity }, 1, 1000,
		"Recent exchanges per thread returned as short-term context."),
	durationSetting(groupMemory, "conversation_idle_gap", func(c *Config) *time.Duration { return &c.Memory.ConversationIdleGap }, time.Minute, 30*24*time.Hour,
		"When retrieve_memory names no thread_id, the latest exchanges count as this conversation only while none is more than this apart from the next (or from now)."),
	intSetting(groupMemory, "mid_term_capacity", func(c *Config) *int { return &c.Memory.MidTermCapacity }, 1, 1000000,
		"Most mid-term topic sessions kept; over it the least used are evicted."),
	intSetting(groupMemory, "long_term_knowledge_capacity", func(c *Config) *int { return &c.Memory.LongTermKnowledgeCapacity }, 1, 100000,
		"Most entries in the user and assistant knowledge lists."),
	intSetting(groupMemory, "retrieval_queue_capacity", func(c *Config) *int { return &c.Memory.RetrievalQueueCapacity }, memory.MinRetrieveResults, memory.MaxRetrieveResults,
		"Past exchanges retrieve_memory returns when the call gives no max_results."),
	floatSetting(groupMemory, "max_remove_share", func(c *Config) *float64 { return &c.Memory.MaxRemoveShare }, 0, 1,
		"Largest share of the facts one update may remove, a guard against a conversation that says \"forget everything\"."),
	floatSetting(groupMemory, "mid_term_heat_threshold", func(c *Config) *float64 { return &c.Memory.MidTermHeatThreshold }, 0.1, 1000,
		"Heat at which a mid-term session is analysed into long-term memory."),
	floatSetting(groupMemory, "mid_term_similarity_threshold", func(c *Config) *float64 { return &c.Memory.MidTermSimilarityThreshold }, 0, 2,
		"Similarity (semantic plus keyword overlap, 0 to 2) an exchange leaving short-term memory needs to join an existing mid-term session; below it a new session starts."),
	floatSetting(groupMemory, "mid_term_heat_alpha", func(c *Config) *float64 { return &c.Memory.MidTermHeatAlpha }, 0, 100,
		"Weight of retrieval visits in a mid-term session's heat."),
	floatSetting(groupMemory, "mid_term_heat_beta", func(c *Config) *float64 { return &c.Memory.MidTermHeatBeta }, 0, 100,
		"Weight of the exchanges in a mid-term session's heat."),
	floatSetting(groupMemory, "mid_term_heat_gamma", func(c *Config) *float64 { return &c.Memory.MidTermHeatGamma }, 0, 100,
		"Weight of recency, exp(-time since last visit / mid_term_heat_tau), in a mid-term session's heat."),
	durationSetting(groupMemory, "mid_term_heat_tau", func(c *Config) *time.Duration { return &c.Memory.MidTermHeatTau }, time.Minute, 365*24*time.Hour,
		"Time constant of the recency decay in a mid-term session's heat."),
	durationSetting(groupMemory, "fact_stale_after", func(c *Config) *time.Duration { return &c.Memory.FactStaleAfter }, 24*time.Hour, 10*365*24*time.Hour,
		"How long a fact may go unconfirmed before its confidence decays (halving every half of this); below 0.3 it is retired, restorable."),
	boolSetting(groupMemory, "redact_secrets", func(c *Config) *bool { return &c.Memory.RedactSecrets },
		"Replace secrets by [redacted: KIND] before anything is stored: API keys of the common providers (OpenAI, Anthropic, Google, Stripe, GitHub, GitLab, Slack, Hugging Face, npm), AWS and Azure credentials, bearer tokens, JWTs, private key blocks, passwords in URLs and in password assignments. Applies to turns, saved and updated facts, what the LLM writes and imports."),
	enumSetting(groupMemory, "token_encoding", func(c *Config) *string { return &c.TokenEncoding }, []string{"cl100k_base", "o200k_base"},
		"tiktoken encoding used to count injection tokens."),

	intSetting(groupLimits, "max_message_bytes", func(c *Config) *int { return &c.Memory.MaxMessageBytes }, 1<<10, 16<<20,
		"Largest message (or user_input / agent_response) add_memory accepts, in bytes."),
	intSetting(groupLimits, "max_messages", func(c *Config) *int { return &c.Memory.MaxMessages }, 1, 10000,
		"Most messages one add_memory call may carry."),
	intSetting(groupLimits, "max_meta_data_bytes", func(c *Config) *int { return &c.Memory.MaxMetaDataBytes }, 2, 1<<20,
		"Largest meta_data object stored with a turn, in bytes."),
	intSetting(groupLimits, "max_query_bytes", func(c *Config) *int { return &c.Memory.MaxQueryBytes }, 16, 1<<20,
		"Longest retrieve_memory query, in bytes."),

	withFallback(textSetting(groupLLM, "llm_base_url", "URL", func(c *Config) *string { return &c.LLM.BaseURL }, checkURL,
		"Base URL of the OpenAI-compatible API, e.g. http://localhost:11434/v1. Empty means https://api.openai.com/v1."), "OPENAI_BASE_URL"),
	secretSetting(withFallback(textSetting(groupLLM, "llm_api_key", "KEY", func(c *Config) *string { return &c.LLM.APIKey }, nil,
		"API key of the endpoint. Environment or config file only, never a flag; never printed or logged."), "OPENAI_API_KEY")),
	textSetting(groupLLM, "llm_model", "NAME", func(c *Config) *string { return &c.LLM.Model }, checkNonEmpty,
		"Model that updates memory."),
	intSetting(groupMemory, "scope_cache_mb", func(c *Config) *int { return &c.Memory.ScopeCacheMB }, memory.MinScopeCacheMB, memory.MaxScopeCacheMB,
		"Memory (MiB, estimated) for the users' and agents' loaded memories; beyond it the least recently used are dropped and read again from storage when next used."),
	intSetting(groupLLM, "update_concurrency", func(c *Config) *int { return &c.Memory.UpdateConcurrency }, 1, 32,
		"Most memories (user/agent scopes) updated in parallel; one scope is never updated twice at once."),
	durationSetting(groupLLM, "flush_timeout", func(c *Config) *time.Duration { return &c.Memory.FlushTimeout }, time.Second, memory.MaxFlushTimeout,
		"Longest time flush_memory waits for pending updates before it answers with what finished and what is still running (it goes on in the background); kept under the clients' request time-outs (60s in the official SDKs)."),
	intSetting(groupLLM, "daily_token_budget", func(c *Config) *int { return &c.Memory.DailyTokenBudget }, 0, 1<<30,
		"Model tokens (prompt plus completion) one memory may spend per day (UTC); once spent, extraction waits until the next day and turns stay pending. 0 means unlimited."),
	durationSetting(groupLLM, "llm_timeout", func(c *Config) *time.Duration { return &c.LLM.Timeout }, time.Second, 10*time.Minute,
		"Timeout of one request to the endpoint."),

	textSetting(groupEmbed, "embedding_model", "NAME", func(c *Config) *string { return &c.Embedding.Model }, nil,
		"Embedding model, e.g. text-embedding-3-small or nomic-embed-text. Set, stored exchanges are embedded in the background and fused with the lexical ranking; changing it re-embeds them."),
	textSetting(groupEmbed, "embedding_base_url", "URL", func(c *Config) *string { return &c.Embedding.BaseURL }, checkURL,
		"Base URL of the embeddings API. Empty means llm_base_url's value."),
	secretSetting(textSetting(groupEmbed, "embedding_api_key", "KEY", func(c *Config) *string { return &c.Embedding.APIKey }, nil,
		"API key of the embeddings endpoint. Empty means llm_api_key's value. Environment or config file only; never printed or logged.")),
	intSetting(groupEmbed, "embedding_dimensions", func(c *Config) *int { return &c.Embedding.Dimensions }, 0, 65536,
		"Vector length asked of the model (text-embedding-3 and later); 0 keeps the model's own."),
	floatSetting(groupEmbed, "embedding_fusion_weight", func(c *Config) *float64 { return &c.Memory.EmbeddingFusionWeight }, 0, 1,
		"Share of the vector ranking when it is fused with the lexical one: 0 ranks by words only, 0.5 weighs both alike. The default was measured on LoCoMo (see Vector retrieval)."),
	prefixSetting("embedding_query_prefix", func(c *Config) *string { return &c.Memory.EmbeddingQueryPrefix },
		"Text put before a query when it is embedded, for models trained with one (e5: \"query: \"; bge: \"Represent this sentence for searching relevant passages: \"). Kept exactly, spaces included."),
	prefixSetting("embedding_passage_prefix", func(c *Config) *string { return &c.Memory.EmbeddingPassagePrefix },
		"Text put before a stored exchange when it is embedded (e5: \"passage: \"). Kept exactly, spaces included; changing it re-embeds the stored exchanges."),

	textSetting(groupHTTP, "http_public_url", "URL", func(c *Config) *string { return &c.HTTP.PublicURL }, checkResourceURL,
		"URL clients reach the MCP endpoint by, e.g. https://memory.example.com/mcp behind a proxy: the OAuth resource (token audience) and an allowed Host and Origin. Empty means http(s)://ADDR/mcp of the listen address."),
	listSetting(groupHTTP, "http_allowed_hosts", "HOSTS", func(c *Config) *[]string { return &c.HTTP.AllowedHosts }, nil,
		"More host names (or origins like https://app.example.com) requests may name in Host or Origin, comma-separated; the listen address and http_public_url are always allowed."),
	textSetting(groupHTTP, "tls_cert_file", "FILE", func(c *Config) *string { return &c.HTTP.TLSCertFile }, nil,
		"PEM certificate chain; with tls_key_file, serve --http speaks HTTPS."),
	textSetting(groupHTTP, "tls_key_file", "FILE", func(c *Config) *string { return &c.HTTP.TLSKeyFile }, nil,
		"PEM private key of tls_cert_file."),
	textSetting(groupHTTP, "oauth_issuer", "URL", func(c *Config) *string { return &c.HTTP.OAuthIssuer }, checkURL,
		"OAuth 2.1 authorization server whose JWT access tokens are accepted (matched exactly against iss; https unless on loopback). Empty: only tokens made with 'mnemo token add'."),
	textSetting(groupHTTP, "oauth_jwks_url", "URL", func(c *Config) *string { return &c.HTTP.OAuthJWKSURL }, checkURL,
		"Where the issuer's signing keys are. Empty: discovered from the issuer's metadata."),
	textSetting(groupHTTP, "oauth_scope", "SCOPE", func(c *Config) *string { return &c.HTTP.OAuthScope }, nil,
		"Scope an access token must grant (403 insufficient_scope without it); empty requires none."),
	textSetting(groupHTTP, "oauth_user_claim", "CLAIM", func(c *Config) *string { return &c.HTTP.OAuthUserClaim }, checkNonEmpty,
		"Access-token claim that names the user whose memory is used."),
	textSetting(groupHTTP, "oauth_agent_claim", "CLAIM", func(c *Config) *string { return &c.HTTP.OAuthAgentClaim }, nil,
		"Access-token claim that, when present, confines the token to one agent's memory; empty: none."),
	int64Setting(groupHTTP, "http_max_body_bytes", func(c *Config) *int64 { return &c.HTTP.MaxBodyBytes }, 1<<10, 256<<20,
		"Largest request body accepted (413 above it)."),
	durationSetting(groupHTTP, "http_read_timeout", func(c *Config) *time.Duration { return &c.HTTP.ReadTimeout }, time.Second, 10*time.Minute,
		"Longest time a request's body may take to arrive, on /mcp and /ui alike (its header has at most 10s more); past it the connection is closed."),
	listSetting(groupHTTP, "trusted_proxies", "ADDRS", func(c *Config) *[]string { return &c.HTTP.TrustedProxies }, checkTrustedProxies,
		"Addresses or CIDR ranges (comma-separated, e.g. 10.0.0.5,10.1.0.0/16) of the balancers in front of serve --http. Only for a request whose connecting address is one of them, the client is taken from X-Forwarded-For (the right-most address that is not a listed proxy) or Forwarded: for=, and the viewer's login limits count by that client; from any other address those headers are ignored. Empty: every request's client is its connecting address."),
	floatSetting(groupHTTP, "http_rate", func(c *Config) *float64 { return &c.HTTP.Rate }, 0.01, 100000,
		"Requests per second each token may make, sustained (429 with Retry-After above it)."),
	intSetting(groupHTTP, "http_burst", func(c *Config) *int { return &c.HTTP.Burst }, 1, 100000,
		"Requests each token may make at once before http_rate applies."),

	logLevelSetting(),
	durationSetting(groupProcess, "shutdown_grace", func(c *Config) *time.Duration { return &c.ShutdownGrace }, 0, 10*time.Minute,
		"Longest time spent finishing pending work after stdin closes or a signal arrives."),
}

func lookupSetting(name string) *setting {
	for i := range settings {
		if settings[i].name == name {
			return &settings[i]
		}
	}
	return nil
}

// Setting constructors. Each setter parses, checks the range and assigns.

func intSetting(group, name string, field func(*Config) *int, lo, hi int, doc string) setting {
	return setting{name: name, group: group, kind: "N", doc: doc, numeric: true, rng: fmt.Sprintf("%d-%d", lo, hi),
		set: func(c *Config, raw string) error {
			v, err := strconv.Atoi(strings.TrimSpace(raw))
			if err != nil {
				return fmt.Errorf("%q is not a whole number", raw)
			}
			if v < lo || v > hi {
				return fmt.Errorf("%d is out of range [%d, %d]", v, lo, hi)
			}
			*field(c) = v
			return nil
		},
		get: func(c *Config) string { return strconv.Itoa(*field(c)) },
	}
}

func int64Setting(group, name string, field func(*Config) *int64, lo, hi int64, doc string) setting {
	return setting{name: name, group: group, kind: "N", doc: doc, numeric: true, rng: fmt.Sprintf("%d-%d", lo, hi),
		set: func(c *Config, raw string) error {
			v, err := strconv.ParseInt(strings.TrimSpace(raw), 10, 64)
			if err != nil {
				return fmt.Errorf("%q is not a whole number", raw)
			}
			if v < lo || v > hi {
				return fmt.Errorf("%d is out of range [%d, %d]", v, lo, hi)
			}
			*field(c) = v
			return nil
		},
		get: func(c *Config) string { return strconv.FormatInt(*field(c), 10) },
	}
}

// listSetting is a comma-separated list (in the config file also a JSON
// array of strings); empty items are dropped. check, when set, refuses a
// list, which then changes nothing.
func listSetting(group, name, kind string, field func(*Config) *[]string, check func([]string) error, doc string) setting {
	return setting{name: name, group: group, kind: kind, doc: doc, list: true,
		set: func(c *Config, raw string) error {
			var out []string
			for item := range strings.SplitSeq(raw, ",") {
				if item = strings.TrimSpace(item); item != "" {
					out = append(out, item)
				}
			}
			if check != nil {
				if err := check(out); err != nil {
					return err
				}
			}
			*field(c) = out
			return nil
		},
		get: func(c *Config) string { return strings.Join(*field(c), ",") },
	}
}

func floatSetting(group, name string, field func(*Config) *float64, lo, hi float64, doc string) setting {
	return setting{name: name, group: group, kind: "X", doc: doc, numeric: true, rng: fmt.Sprintf("%g-%g", lo, hi),
		set: func(c *Config, raw string) error {
			v, err := strconv.ParseFloat(strings.TrimSpace(raw), 64)
			if err != nil || math.IsNaN(v) {
				return fmt.Errorf("%q is not a number", raw)
			}
			if v < lo || v > hi {
				return fmt.Errorf("%g is out of range [%g, %g]", v, lo, hi)
			}
			*field(c) = v
			return nil
		},
		get: func(c *Config) string { return strconv.FormatFloat(*field(c), 'g', -1, 64) },
	}
}

func durationSetting(group, name string, field func(*Config) *time.Duration, lo, hi time.Duration, doc string) setting {
	return setting{name: name, group: group, kind: "DURATION", doc: doc, rng: fmt.Sprintf("%s-%s", fmtDuration(lo), fmtDuration(hi)),
		set: func(c *Config, raw string) error {
			v, err := time.ParseDuration(strings.TrimSpace(raw))
			if err != nil {
				return fmt.Errorf("%q is not a duration; write it like 90s, 2m or 1m30s", raw)
			}
			if v < lo || v > hi {
				return fmt.Errorf("%s is out of range [%s, %s]", v, fmtDuration(lo), fmtDuration(hi))
			}
			*field(c) = v
			return nil
		},
		get: func(c *Config) string { return fmtDuration(*field(c)) },
	}
}

// fmtDuration prints 10m and 1h rather than Go's 10m0s and 1h0m0s.
func fmtDuration(d time.Duration) string {
	s := d.String()
	if t, ok := strings.CutSuffix(s, "m0s"); ok {
		s = t + "m"
	}
	if t, ok := strings.CutSuffix(s, "h0m"); ok {
		s = t + "h"
	}
	return s
}

func textSetting(group, name, kind string, field func(*Config) *string, check func(string) error, doc string) setting {
	return setting{name: name, group: group, kind: kind, doc: doc,
		set: func(c *Config, raw string) error {
			v := strings.TrimSpace(raw)
			if check != nil {
				if err := check(v); err != nil {
					return err
				}
			}
			*field(c) = v
			return nil
		},
		get: func(c *Config) string { return *field(c) },
	}
}

// prefixSetting is a text kept verbatim: a model's prefix ends in a space.
func prefixSetting(name string, field func(*Config) *string, doc string) setting {
	return setting{name: name, group: groupEmbed, kind: "TEXT", doc: doc, rng: fmt.Sprintf("0-%d bytes", memory.MaxEmbeddingPrefixBytes),
		set: func(c *Config, raw string) error {
			if len(raw) > memory.MaxEmbeddingPrefixBytes {
				return fmt.Errorf("%d bytes is longer than %d", len(raw), memory.MaxEmbeddingPrefixBytes)
			}
			*field(c) = raw
			return nil
		},
		get: func(c *Config) string { return *field(c) },
	}
}

func enumSetting(group, name string, field func(*Config) *string, values []string, doc string) setting {
	s := textSetting(group, name, strings.Join(values, "|"), field, func(v string) error {
		for _, ok := range values {
			if v == ok {
				return nil
			}
		}
		return fmt.Errorf("%q is not one of %s", v, strings.Join(values, ", "))
	}, doc)
	s.rng = strings.Join(values, ", ")
	return s
}

func boolSetting(group, name string, field func(*Config) *bool, doc string) setting {
	return setting{name: name, group: group, kind: "true|false", doc: doc, rng: "true, false", boolean: true,
		set: func(c *Config, raw string) error {
			v, err := strconv.ParseBool(strings.TrimSpace(raw))
			if err != nil {
				return fmt.Errorf("%q is not true or false", raw)
			}
			*field(c) = v
			return nil
		},
		get: func(c *Config) string { return strconv.FormatBool(*field(c)) },
	}
}

func logLevelSetting() setting {
	levels := map[string]slog.Level{"debug": slog.LevelDebug, "info": slog.LevelInfo, "warn": slog.LevelWarn, "error": slog.LevelError}
	return setting{name: "log_level", group: groupProcess, kind: "debug|info|warn|error", rng: "debug, info, warn, error",
		doc: "Least severe log record written to stderr (stdout carries only MCP messages).",
		set: func(c *Config, raw string) error {
			l, ok := levels[strings.ToLower(strings.TrimSpace(raw))]
			if !ok {
				return fmt.Errorf("%q is not one of debug, info, warn, error", raw)
			}
			c.LogLevel = l
			return nil
		},
		get: func(c *Config) string { return strings.ToLower(c.LogLevel.String()) },
	}
}

func withFallback(s setting, envs ...string) setting {
	s.envFallbacks = envs
	return s
}

func withDefaultDoc(s setting, doc string) setting {
	s.defDoc = doc
	return s
}

func maskedSetting(s setting, mask func(string) string) setting {
	s.mask = mask
	return s
}

// shown is the value of s in c as it may be printed.
func (s *setting) shown(c *Config) string {
	v := s.get(c)
	switch {
	case s.secret:
		return "(set, not shown)"
	case s.mask != nil:
		return s.mask(v)
	}
	return v
}

func secretSetting(s setting) setting {
	s.secret = true
	return s
}

func checkID(field string) func(string) error {
	return func(v string) error { return memory.ValidateID(field, v) }
}

func checkTrustedProxies(v []string) error {
	_, err := httpauth.ParseTrustedProxies(v)
	return err
}

func checkNonEmpty(v string) error {
	if v == "" {
		return errors.New("must not be empty")
	}
	return nil
}

// checkStorage accepts an empty storage (the data directory) or a
// PostgreSQL URL.
func checkStorage(v string) error {
	if v == "" || strings.HasPrefix(v, "postgres://") || strings.HasPrefix(v, "postgresql://") {
		return nil
	}
	return fmt.Errorf("%q is not a PostgreSQL URL like postgres://user:password@host:5432/mnemo; leave it empty for the data directory", redact.URL(v))
}

func checkURL(v string) error {
	if v == "" {
		return nil
	}
	u, err := url.Parse(v)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return fmt.Errorf("%q is not an http(s) URL like https://api.openai.com/v1", redact.URL(v))
	}
	return nil
}

// checkResourceURL accepts an absolute http(s) URL without a query or
// fragment, or nothing.
func checkResourceURL(v string) error {
	if v == "" {
		return nil
	}
	if err := checkURL(v); err != nil {
		return err
	}
	if u, _ := url.Parse(v); u.RawQuery != "" || u.Fragment != "" || u.User != nil {
		return fmt.Errorf("%q: want a URL without credentials, query or fragment", redact.URL(v))
	}
	return nil
}

// defaultText is the default of s as help shows it.
func (s *setting) defaultText() string {
	if s.defDoc != "" {
		return s.defDoc
	}
	if v := s.get(defaultConfig()); v != "" {
		return v
	}
	return "(empty)"
}

// envText lists the environment variables of s in the order they are read.
func (s *setting) envText() string {
	return strings.Join(append([]string{s.envName()}, s.envFallbacks...), ", then ")
}

// flagText is the flag of s with its value shape, or "(none)".
func (s *setting) flagText() string {
	if s.secret {
		return "(none)"
	}
	return "--" + s.flagName() + " " + s.kind
}

// settingsMarkdown is the configuration table of docs/configuration.md.
func settingsMarkdown() string {
	cell := strings.NewReplacer("|", `\|`, "<", "&lt;", ">", "&gt;").Replace
	var b strings.Builder
	b.WriteString("| Setting (config file key) | Flag | Environment | Default | Range | Description |\n")
	b.WriteString("|---|---|---|---|---|---|\n")
	for i := range settings {
		s := &settings[i]
		flagName := "—"
		if !s.secret {
			flagName = "`--" + s.flagName() + "`"
		}
		envs := "`" + strings.Join(append([]string{s.envName()}, s.envFallbacks...), "`, `") + "`"
		rng := s.rng
		if rng == "" {
			rng = "—"
		}
		fmt.Fprintf(&b, "| `%s` | %s | %s | %s | %s | %s |\n", s.name, flagName, envs, cell(s.defaultText()), cell(rng), cell(s.doc))
	}
	return b.String()
}
