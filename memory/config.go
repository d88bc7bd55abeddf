package memory

import (
	"fmt"
	"time"
)

// Config holds the tunables of memory/engine and the leaf packages it
// drives. The command line (cli) fills it from flags, environment and the
// config file; Validate checks the ranges.
type Config struct {
	// UserID is the user whose memory is used when a call names none.
	UserID string
	// DebounceSeconds is how long a thread must be quiet before its pending
	// turns are sent to the updater.
	DebounceSeconds int
	// MaxFacts bounds the facts kept in a memory document.
	MaxFacts int
	// FactConfidenceThreshold is the lowest confidence a new fact needs.
	FactConfidenceThreshold float64
	// MaxInjectionTokens is the default token budget of the injection text.
	MaxInjectionTokens int
	// MaxContextTurns is how many recent turns of the thread join the query
	// when facts are ranked.
	MaxContextTurns int
	// SimilarityWeight and ConfidenceWeight mix relevance and confidence
	// in the fact score.
	SimilarityWeight float64
	ConfidenceWeight float64
	// ShortTermCapacity is how many recent exchanges per thread are
	// returned as recent context.
	ShortTermCapacity int
	// ConversationIdleGap bounds "this conversation" when a retrieval
	// names no thread: the latest exchanges of the default thread count
	// as the current conversation only while each follows the one before,
	// and the last precedes now, by at most this gap.
	ConversationIdleGap time.Duration
	// MidTermCapacity bounds the number of mid-term topic sessions.
	MidTermCapacity int
	// LongTermKnowledgeCapacity bounds user and assistant knowledge lists.
	LongTermKnowledgeCapacity int
	// RetrievalQueueCapacity is the default number of pages retrieved.
	RetrievalQueueCapacity int
	// MidTermHeatThreshold is the heat at which a session is analysed.
	MidTermHeatThreshold float64
	// MidTermSimilarityThreshold is the similarity (semantic plus keyword
	// Jaccard, so up to 2) a page needs to join an existing session.
	MidTermSimilarityThreshold float64
	// MidTermHeatAlpha, MidTermHeatBeta and MidTermHeatGamma weigh visits,
	// interactions and recency in a session's heat; recency decays as
	// exp(−Δt/MidTermHeatTau).
	MidTermHeatAlpha float64
	MidTermHeatBeta  float64
	MidTermHeatGamma float64
	MidTermHeatTau   time.Duration
	// MaxRemoveShare bounds the share of facts one update may remove, a
	// guard against "forget everything" injected into a conversation.
	MaxRemoveShare float64
	// UpdateConcurrency bounds how many scopes are updated in parallel.
	UpdateConcurrency int
	// FlushTimeout bounds how long flush_memory waits for updates.
	FlushTimeout time.Duration
	// ScopeCacheMB bounds, in MiB, the estimated size of the scope states
	// (turns, indexes, sessions, vectors) the engine keeps in memory; the
	// least recently used are dropped beyond it and read again from the
	// store on their next use.
	ScopeCacheMB int
	// EmbeddingFusionWeight is the vector ranking's share when it is fused
	// with the lexical ranking (0 ranks by words only, 0.5 weighs both
	// alike); it matters only with an Embedder.
	EmbeddingFusionWeight float64
	// EmbeddingQueryPrefix and EmbeddingPassagePrefix are prepended to a
	// query and to a stored exchange before they are embedded, for models
	// trained with them (e5: "query: " and "passage: ").
	EmbeddingQueryPrefix   string
	EmbeddingPassagePrefix string
	// Limits on what one call may carry.
	MaxMessageBytes  int
	MaxMessages      int
	MaxMetaDataBytes int
	MaxQueryBytes    int
	// RedactSecrets replaces API keys, tokens, private keys and passwords
	// by "[redacted: KIND]" before anything is written (redact_secrets).
	RedactSecrets bool
	// DailyTokenBudget bounds the model tokens (prompt plus completion)
	// spent per scope and day (UTC) on extraction; once spent, updates are
	// deferred to the next day and turns stay pending. 0 means unlimited
	// (daily_token_budget).
	DailyTokenBudget int
	// FactStaleAfter is how long a fact may go unconfirmed before its
	// confidence starts to decay (fact_stale_after); see Maintain. 0 means
	// DefaultFactStaleAfter.
	FactStaleAfter time.Duration
}

// Bounds of Config.ScopeCacheMB. The estimate follows the live heap of
// the states (BenchmarkManyUsers); resident memory is about 1.4 times it
// (garbage not yet collected) plus some 30 MB (runtime, token encoding),
// so the default keeps a server with many users under about 300 MB.
const (
	DefaultScopeCacheMB = 150
	MinScopeCacheMB     = 1
	MaxScopeCacheMB     = 1 << 20
)

// DefaultFactStaleAfter is the default of fact_stale_after.
const DefaultFactStaleAfter = 180 * 24 * time.Hour

// MaxFlushTimeout bounds flush_timeout under the request time-out of
// common MCP clients (60 s in the official SDKs): a flush answers before
// the client gives up, and unfinished updates go on in the background.
const MaxFlushTimeout = 50 * time.Second

// DefaultEmbeddingFusionWeight is the default share of the vector ranking
// in the fusion, measured on the LoCoMo development split (see the
// docs/retrieval.md, vector retrieval).
const DefaultEmbeddingFusionWeight = 0.25

// MaxEmbeddingPrefixBytes bounds embedding_query_prefix and
// embedding_passage_prefix.
const MaxEmbeddingPrefixBytes = 256

// DefaultConfig returns the documented defaults (DESIGN §4).
func DefaultConfig() Config {
	return Config{
		UserID:                     DefaultUserID,
		DebounceSeconds:            30,
		MaxFacts:                   100,
		FactConfidenceThreshold:    0.7,
		MaxInjectionTokens:         2000,
		MaxContextTurns:            3,
		SimilarityWeight:           0.6,
		ConfidenceWeight:           0.4,
		ShortTermCapacity:          10,
		ConversationIdleGap:        30 * time.Minute,
		MidTermCapacity:            2000,
		LongTermKnowledgeCapacity:  100,
		RetrievalQueueCapacity:     12,
		MidTermHeatThreshold:       5.0,
		MidTermSimilarityThreshold: 0.6,
		MidTermHeatAlpha:           1,
		MidTermHeatBeta:            1,
		MidTermHeatGamma:           1,
		MidTermHeatTau:             24 * time.Hour,
		MaxRemoveShare:             0.25,
		UpdateConcurrency:          2,
		FlushTimeout:               20 * time.Second,
		ScopeCacheMB:               DefaultScopeCacheMB,
		EmbeddingFusionWeight:      DefaultEmbeddingFusionWeight,
		MaxMessageBytes:            64 << 10,
		MaxMessages:                200,
		MaxMetaDataBytes:           16 << 10,
		MaxQueryBytes:              8 << 10,
		RedactSecrets:              true,
		FactStaleAfter:             DefaultFactStaleAfter,
	}
}

// Validate checks every setting against its documented range and names the
// first one that is out of range.
func (c Config) Validate() error {
	if err := ValidateID("user_id", c.UserID); err != nil {
		return fmt.Errorf("setting user_id: %w", err)
	}
	ints := []struct {
		name     string
		v        int
		min, max int
	}{
		{"debounce_seconds", c.DebounceSeconds, 1, 300},
		{"max_facts", c.MaxFacts, 1, 10000},
		{"max_injection_tokens", c.MaxInjectionTokens, MinRetrieveTokens, MaxRetrieveTokens},
		{"max_context_turns", c.MaxContextTurns, 0, 50},
		{"short_term_capacity", c.ShortTermCapacity, 1, 1000},
		{"mid_term_capacity", c.MidTermCapacity, 1, 1000000},
		{"long_term_knowledge_capacity", c.LongTermKnowledgeCapacity, 1, 100000},
		{"retrieval_queue_capacity", c.RetrievalQueueCapacity, MinRetrieveResults, MaxRetrieveResults},
		{"max_message_bytes", c.MaxMessageBytes, 1 << 10, 16 << 20},
		{"max_messages", c.MaxMessages, 1, 10000},
		{"update_concurrency", c.UpdateConcurrency, 1, 32},
		{"scope_cache_mb", c.ScopeCacheMB, MinScopeCacheMB, MaxScopeCacheMB},
		{"max_meta_data_bytes", c.MaxMetaDataBytes, 2, 1 << 20},
		{"max_query_bytes", c.MaxQueryBytes, 16, 1 << 20},
		{"daily_token_budget", c.DailyTokenBudget, 0, 1 << 30},
	}
	for _, s := range ints {
		if s.v < s.min || s.v > s.max {
			return fmt.Errorf("setting %s = %d is out of range [%d, %d]", s.name, s.v, s.min, s.max)
		}
	}
	floats := []struct {
		name     string
		v        float64
		min, max float64
	}{
		{"fact_confidence_threshold", c.FactConfidenceThreshold, 0, 1},
		{"similarity_weight", c.SimilarityWeight, 0, 1},
		{"confidence_weight", c.ConfidenceWeight, 0, 1},
		{"mid_term_heat_threshold", c.MidTermHeatThreshold, 0.1, 1000},
		{"max_remove_share", c.MaxRemoveShare, 0, 1},
		{"mid_term_similarity_threshold", c.MidTermSimilarityThreshold, 0, 2},
		{"mid_term_heat_alpha", c.MidTermHeatAlpha, 0, 100},
		{"mid_term_heat_beta", c.MidTermHeatBeta, 0, 100},
		{"mid_term_heat_gamma", c.MidTermHeatGamma, 0, 100},
		{"embedding_fusion_weight", c.EmbeddingFusionWeight, 0, 1},
	}
	for _, s := range floats {
		if !(s.v >= s.min && s.v <= s.max) { // also rejects NaN
			return fmt.Errorf("setting %s = %g is out of range [%g, %g]", s.name, s.v, s.min, s.max)
		}
	}
	if c.MidTermHeatTau < time.Minute || c.MidTermHeatTau > 365*24*time.Hour {
		return fmt.Errorf("setting mid_term_heat_tau = %s is out of range [1m, 8760h]", c.MidTermHeatTau)
	}
	if c.ConversationIdleGap < time.Minute || c.ConversationIdleGap > 30*24*time.Hour {
		return fmt.Errorf("setting conversation_idle_gap = %s is out of range [1m, 720h]", c.ConversationIdleGap)
	}
	for _, p := range []struct{ name, v string }{{"embedding_query_prefix", c.EmbeddingQueryPrefix}, {"embedding_passage_prefix", c.EmbeddingPassagePrefix}} {
		if len(p.v) > MaxEmbeddingPrefixBytes {
			return fmt.Errorf("setting %s is %d bytes long, more than %d", p.name, len(p.v), MaxEmbeddingPrefixBytes)
		}
	}
	if c.FactStaleAfter != 0 && (c.FactStaleAfter < 24*time.Hour || c.FactStaleAfter > 10*365*24*time.Hour) {
		return fmt.Errorf("setting fact_stale_after = %s is out of range [24h, 87600h]", c.FactStaleAfter)
	}
	if c.FlushTimeout < time.Second || c.FlushTimeout > MaxFlushTimeout {
		return fmt.Errorf("setting flush_timeout = %s is out of range [1s, %s]", c.FlushTimeout, MaxFlushTimeout)
	}
	return nil
}
