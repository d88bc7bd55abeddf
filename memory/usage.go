package memory

import (
	"errors"
	"fmt"
	"slices"
	"time"
)

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

func (u *UsageDay) Sub(o UsageDay) {
	o.LLMCalls, o.PromptTokens, o.CompletionTokens, o.LLMFailures = -o.LLMCalls, -o.PromptTokens, -o.CompletionTokens, -o.LLMFailures
	o.EmbeddingCalls, o.EmbeddingTokens, o.EmbeddingFailures, o.Deferred = -o.EmbeddingCalls, -o.EmbeddingTokens, -o.EmbeddingFailures, -o.Deferred
	u.add(o)
}

func (u UsageDay) Zero() bool { u.Day = ""; return u == UsageDay{} }

// usageDay is the day key of t.
func UsageDayOf(t time.Time) string { return t.UTC().Format(time.DateOnly) }

// MergeUsage adds delta (by day) into list, keeps the newest UsageDays
// days, oldest first, and returns it.
func MergeUsage(list []UsageDay, delta []UsageDay) []UsageDay {
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

// UsageOf is the usage of days (a Document's Usage) as reports show it at
// now, with a daily token budget of budget (0: unlimited): the command
// line reads it from a saved document, without a running service.
func UsageOf(days []UsageDay, budget int, now time.Time) ScopeUsage {
	today := UsageDayOf(now)
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
