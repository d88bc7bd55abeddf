package engine

import (
	"fmt"
	"slices"
	"sync"

	"github.com/mnemo-mcp/mnemo/memory"
)

// usageLedger holds the counts not yet saved, by scope key and day.
type usageLedger struct {
	mu      sync.Mutex
	pending map[string][]memory.UsageDay
}

// record adds delta to scope's unsaved counts for its day.
func (l *usageLedger) record(scope memory.Scope, delta memory.UsageDay) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.pending == nil {
		l.pending = make(map[string][]memory.UsageDay)
	}
	l.pending[scope.Key()] = memory.MergeUsage(l.pending[scope.Key()], []memory.UsageDay{delta})
}

// peek returns a copy of scope's unsaved counts.
func (l *usageLedger) peek(scope memory.Scope) []memory.UsageDay {
	l.mu.Lock()
	defer l.mu.Unlock()
	return slices.Clone(l.pending[scope.Key()])
}

// commit removes saved from scope's unsaved counts, after a save that
// wrote them into the document.
func (l *usageLedger) commit(scope memory.Scope, saved []memory.UsageDay) {
	l.mu.Lock()
	defer l.mu.Unlock()
	list := l.pending[scope.Key()]
	for _, d := range saved {
		if i := slices.IndexFunc(list, func(u memory.UsageDay) bool { return u.Day == d.Day }); i >= 0 {
			list[i].Sub(d)
		}
	}
	list = slices.DeleteFunc(list, func(u memory.UsageDay) bool { return u.Zero() })
	if len(list) == 0 {
		delete(l.pending, scope.Key())
		return
	}
	l.pending[scope.Key()] = list
}

// recordLLM counts one model call for scope: its tokens, or a failure.
func (s *Service) recordLLM(scope memory.Scope, c memory.Completion, err error) {
	s.stats.addCall(c.PromptTokens, c.CompletionTokens)
	u := memory.UsageDay{Day: memory.UsageDayOf(s.now()), LLMCalls: 1, PromptTokens: c.PromptTokens, CompletionTokens: c.CompletionTokens}
	if err != nil {
		u.LLMFailures = 1
	}
	s.usage.record(scope, u)
}

// recordEmbedding counts one embeddings call for scope over texts.
func (s *Service) recordEmbedding(scope memory.Scope, texts []string, err error) {
	u := memory.UsageDay{Day: memory.UsageDayOf(s.now()), EmbeddingCalls: 1}
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
func (s *Service) saveUsage(scope memory.Scope, d *memory.Document) []memory.UsageDay {
	delta := s.usage.peek(scope)
	d.Usage = memory.MergeUsage(d.Usage, delta)
	return delta
}

// usageOf returns the saved and unsaved usage of d's scope.
func (s *Service) usageOf(scope memory.Scope, d *memory.Document) memory.ScopeUsage {
	return memory.UsageOf(memory.MergeUsage(slices.Clone(d.Usage), s.usage.peek(scope)), s.cfg.DailyTokenBudget, s.now())
}

// checkBudget returns an error wrapping ErrBudgetSpent when scope has
// used its daily token budget, counting one deferral.
func (s *Service) checkBudget(scope memory.Scope, d *memory.Document) error {
	if s.cfg.DailyTokenBudget <= 0 {
		return nil
	}
	u := s.usageOf(scope, d)
	if u.Deferred == "" {
		return nil
	}
	s.usage.record(scope, memory.UsageDay{Day: u.Today.Day, Deferred: 1})
	return fmt.Errorf("%w: %s", memory.ErrBudgetSpent, u.Deferred)
}
