package memory

import (
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"
)

// Cost, visible: every model and embedding call is counted for the scope
// it was made for, by day, in the scope's document (Document.Usage), so
// that get_user_profile, mnemo show --usage and mnemo doctor can show it
// and a daily token budget can defer extraction.
//
// Counts are gathered in memory (usageLedger) as calls are made and
// written into the document with the next save of that scope (an update,
// a maintenance pass), so a call never costs a save of its own. What a
// crash loses is the counts since the last save, never turns.

// UsageDays is how many days of usage a document keeps.
const UsageDays = 30

// UsageDay is the model and embedding usage of one scope on one day (UTC).
type UsageDay struct {
	// Day is the date, "2006-01-02" (UTC).
	Day              string `json:"day"`
	LLMCalls         int    `json:"llm_calls,omitempty"`
	PromptTokens     int    `json:"prompt_tokens,omitempty"`
	CompletionTokens int    `json:"completion_tokens,omitempty"`
	LLMFailures      int    `json:"llm_failures,omitempty"`
	EmbeddingCalls   int    `json:"embedding_calls,omitempty"`
	// EmbeddingTokens are the tokens of the texts embedded, counted
	// locally (the embeddings API reports none the port passes on).
	EmbeddingTokens   int `json:"embedding_tokens,omitempty"`
	EmbeddingFailures int `json:"embedding_failures,omitempty"`
	// Deferred counts the updates put off because the daily token budget
	// was spent.
	Deferred int `json:"deferred,omitempty"`
}

// Tokens is the model tokens of the day: prompt plus completion.
func (u UsageDay) Tokens() int { return u.PromptTokens + u.CompletionTokens }

func (u *UsageDay) add(o UsageDay) {
	u.LLMCalls += o.LLMCalls
	u.PromptTokens += o.PromptTokens
	u.CompletionTokens += o.CompletionTokens
	u.LLMFailures += o.LLMFailures
	u.EmbeddingCalls += o.EmbeddingCalls
	u.EmbeddingTokens += o.EmbeddingTokens
	u.EmbeddingFailures += o.EmbeddingFailures
	u.Deferred += o.Deferred
}

func (u *UsageDay) sub(o UsageDay) {
	o.LLMCalls, o.PromptTokens, o.CompletionTokens, o.LLMFailures = -o.LLMCalls, -o.PromptTokens, -o.CompletionTokens, -o.LLMFailures
	o.EmbeddingCalls, o.EmbeddingTokens, o.EmbeddingFailures, o.Deferred = -o.EmbeddingCalls, -o.EmbeddingTokens, -o.EmbeddingFailures, -o.Deferred
	u.add(o)
}

func (u UsageDay) zero() bool { u.Day = ""; return u == UsageDay{} }

// usageDay is the day key of t.
func usageDay(t time.Time) string { return t.UTC().Format(time.DateOnly) }

// mergeUsage adds delta (by day) into list, keeps the newest UsageDays
// days, oldest first, and returns it.
func mergeUsage(list []UsageDay, delta []UsageDay) []UsageDay {
	for _, d := range delta {
		i := slices.IndexFunc(list, func(u UsageDay) bool { return u.Day == d.Day })
		if i < 0 {
			list = append(list, UsageDay{Day: d.Day})
			i = len(list) - 1
		}
		list[i].add(d)
	}
	slices.SortFunc(list, func(a, b UsageDay) int {
		switch {
		case a.Day < b.Day:
			return -1
		case a.Day > b.Day:
			return 1
		}
		return 0
	})
	if n := len(list) - UsageDays; n > 0 {
		list = append(list[:0:0], list[n:]...)
	}
	return list
}

// usageLedger holds the counts not yet saved, by scope key and day.
type usageLedger struct {
	mu      sync.Mutex
	pending map[string][]UsageDay
}

// record adds delta to scope's unsaved counts for its day.
func (l *usageLedger) record(scope Scope, delta UsageDay) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.pending == nil {
		l.pending = make(map[string][]UsageDay)
	}
	l.pending[scope.Key()] = mergeUsage(l.pending[scope.Key()], []UsageDay{delta})
}

// peek returns a copy of scope's unsaved counts.
func (l *usageLedger) peek(scope Scope) []UsageDay {
	l.mu.Lock()
	defer l.mu.Unlock()
	return slices.Clone(l.pending[scope.Key()])
}

// commit removes saved from scope's unsaved counts, after a save that
// wrote them into the document.
func (l *usageLedger) commit(scope Scope, saved []UsageDay) {
	l.mu.Lock()
	defer l.mu.Unlock()
	list := l.pending[scope.Key()]
	for _, d := range saved {
		if i := slices.IndexFunc(list, func(u UsageDay) bool { return u.Day == d.Day }); i >= 0 {
			list[i].sub(d)
		}
	}
	list = slices.DeleteFunc(list, func(u UsageDay) bool { return u.zero() })
	if len(list) == 0 {
		delete(l.pending, scope.Key())
		return
	}
	l.pending[scope.Key()] = list
}

// recordLLM counts one model call for scope: its tokens, or a failure.
func (s *Service) recordLLM(scope Scope, c Completion, err error) {
	s.stats.addCall(c.PromptTokens, c.CompletionTokens)
	u := UsageDay{Day: usageDay(s.now()), LLMCalls: 1, PromptTokens: c.PromptTokens, CompletionTokens: c.CompletionTokens}
	if err != nil {
		u.LLMFailures = 1
	}
	s.usage.record(scope, u)
}

// recordEmbedding counts one embeddings call for scope over texts.
func (s *Service) recordEmbedding(scope Scope, texts []string, err error) {
	u := UsageDay{Day: usageDay(s.now()), EmbeddingCalls: 1}
	for _, t := range texts {
		u.EmbeddingTokens += s.tokens.Count(t)
	}
	if err != nil {
		u.EmbeddingFailures = 1
	}
	s.usage.record(scope, u)
}

// saveUsage writes scope's unsaved counts into d (inside an
// UpdateDocument) and returns what it wrote, for usageSaved.
func (s *Service) saveUsage(scope Scope, d *Document) []UsageDay {
	delta := s.usage.peek(scope)
	d.Usage = mergeUsage(d.Usage, delta)
	return delta
}

// ScopeUsage is a scope's usage as reports show it: the newest days and
// today's budget.
type ScopeUsage struct {
	// Days are the counted days, oldest first, at most UsageDays.
	Days []UsageDay `json:"days"`
	// Today is today's row (UTC), zero counts when nothing was used.
	Today UsageDay `json:"today"`
	// DailyTokenBudget is the configured budget of model tokens per scope
	// and day; 0 means unlimited.
	DailyTokenBudget int `json:"daily_token_budget"`
	// Deferred, when set, says that extraction is put off until the
	// budget renews.
	Deferred string `json:"deferred,omitempty"`
}

// usageOf returns the saved and unsaved usage of d's scope.
func (s *Service) usageOf(scope Scope, d *Document) ScopeUsage {
	return UsageOf(mergeUsage(slices.Clone(d.Usage), s.usage.peek(scope)), s.cfg.DailyTokenBudget, s.now())
}

// UsageOf is the usage of days (a Document's Usage) as reports show it at
// now, with a daily token budget of budget (0: unlimited): the command
// line reads it from a saved document, without a running service.
func UsageOf(days []UsageDay, budget int, now time.Time) ScopeUsage {
	today := usageDay(now)
	u := ScopeUsage{Days: slices.Clone(days), Today: UsageDay{Day: today}, DailyTokenBudget: budget}
	if i := slices.IndexFunc(days, func(x UsageDay) bool { return x.Day == today }); i >= 0 {
		u.Today = days[i]
	}
	if budget > 0 && u.Today.Tokens() >= budget {
		u.Deferred = budgetMessage(budget, u.Today.Tokens())
	}
	if u.Days == nil {
		u.Days = []UsageDay{}
	}
	return u
}

func budgetMessage(budget, used int) string {
	return fmt.Sprintf("the daily token budget of this scope is spent (%d of %d tokens used today, UTC): extraction is deferred until tomorrow; turns stay stored, searchable and pending, nothing is lost (daily_token_budget)", used, budget)
}

// ErrBudgetSpent means the scope's daily token budget is used up: the
// update is deferred, its turns stay pending.
var ErrBudgetSpent = errors.New("daily token budget spent")

// checkBudget returns an error wrapping ErrBudgetSpent when scope has
// used its daily token budget, counting one deferral.
func (s *Service) checkBudget(scope Scope, d *Document) error {
	if s.cfg.DailyTokenBudget <= 0 {
		return nil
	}
	u := s.usageOf(scope, d)
	if u.Deferred == "" {
		return nil
	}
	s.usage.record(scope, UsageDay{Day: u.Today.Day, Deferred: 1})
	return fmt.Errorf("%w: %s", ErrBudgetSpent, u.Deferred)
}
