package engine_test

import (
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mnemo-mcp/mnemo/memory"
	"github.com/mnemo-mcp/mnemo/memory/engine"
	"github.com/mnemo-mcp/mnemo/memory/files"
	"github.com/mnemo-mcp/mnemo/memory/openai"
	"github.com/mnemo-mcp/mnemo/memory/openai/openaitest"
	"github.com/mnemo-mcp/mnemo/memory/tiktoken"
	"github.com/mnemo-mcp/mnemo/memory/update"
)

// These tests run the consolidation pass with the model through the
// production stack (file store, OpenAI adapter, scripted fake endpoint)
// with a clock the test moves.

type consolClock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *consolClock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.now }
func (c *consolClock) advance(d time.Duration) {
	c.mu.Lock()
	c.now = c.now.Add(d)
	c.mu.Unlock()
}

type consolStack struct {
	svc   *engine.Service
	store *files.Store
	fake  *openaitest.Server
	clock *consolClock
}

func newConsolStack(t *testing.T, budget int) *consolStack {
	t.Helper()
	c := &consolStack{fake: openaitest.NewServer(t), clock: &consolClock{now: time.Date(2026, 3, 2, 9, 0, 0, 0, time.UTC)}}
	store, err := files.Open(t.TempDir())
	if err != nil {
		t.Fatalf("files.Open() = %v", err)
	}
	t.Cleanup(func() { store.Close() })
	c.store = store
	counter, err := tiktoken.New("cl100k_base")
	if err != nil {
		t.Fatal(err)
	}
	client, err := openai.New(openai.Config{BaseURL: c.fake.URL, APIKey: "sk-test", Model: "test-model", Timeout: 5 * time.Second,
		MaxRetries: 0, BaseBackoff: time.Millisecond, MaxBackoff: time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	cfg := memory.DefaultConfig()
	cfg.DebounceSeconds = 300
	cfg.DailyTokenBudget = budget
	n := 0
	svc, err := engine.NewService(cfg, store, counter, engine.WithLLM(client), engine.WithLogger(slog.New(slog.DiscardHandler)),
		engine.WithClock(c.clock.Now), engine.WithFactIDs(func() string { n++; return fmt.Sprintf("fact_%08d", n) }))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { closeNow(svc) })
	c.svc = svc
	return c
}

// updateReply is an update reply adding facts.
func updateReply(t *testing.T, facts ...update.NewFact) openaitest.Reply {
	t.Helper()
	nf := make([]map[string]any, len(facts))
	for i, f := range facts {
		nf[i] = map[string]any{"content": f.Content, "category": f.Category, "confidence": f.Confidence}
	}
	body := mustMarshal(t, map[string]any{"user": map[string]any{}, "history": map[string]any{}, "newFacts": nf, "factsToRemove": []string{}})
	return openaitest.Chat(t, body, openaitest.Usage{PromptTokens: 1000, CompletionTokens: 100})
}

func consolReply(t *testing.T, content string) openaitest.Reply {
	t.Helper()
	return openaitest.Chat(t, content, openaitest.Usage{PromptTokens: 300, CompletionTokens: 40})
}

// say stores one exchange and flushes it.
func (c *consolStack) say(t *testing.T, thread string) *memory.FlushResult {
	t.Helper()
	if _, err := c.svc.Add(t.Context(), memory.AddRequest{ThreadID: thread, UserInput: "news from " + thread, AgentResponse: "noted",
		Timestamp: c.clock.Now().Format(time.RFC3339)}); err != nil {
		t.Fatalf("Add() = %v", err)
	}
	res, err := c.svc.Flush(t.Context(), memory.FlushRequest{ThreadID: thread})
	if err != nil {
		t.Fatalf("Flush() = %v", err)
	}
	return res
}

func (c *consolStack) doc(t *testing.T) *memory.Document {
	t.Helper()
	d, err := c.store.LoadDocument(t.Context(), memory.Scope{UserID: memory.DefaultUserID})
	if err != nil {
		t.Fatal(err)
	}
	return d
}

func (c *consolStack) chatPrompts() []string {
	var out []string
	for _, r := range c.fake.ChatRequests() {
		out = append(out, r.Prompt())
	}
	return out
}

var similarFacts = []update.NewFact{
	{Content: "Uses Go for backend services", Category: memory.CategoryPreference, Confidence: 0.8},
	{Content: "Writes backend services in Go every day", Category: memory.CategoryContext, Confidence: 0.9},
	{Content: "Never panic in Go backend services; return errors", Category: memory.CategoryCorrection, Confidence: 0.95},
	{Content: "Lives in Lisbon", Category: memory.CategoryContext, Confidence: 0.9},
}

func contents(fs []memory.Fact) []string {
	out := make([]string, len(fs))
	for i, f := range fs {
		out[i] = f.Content
	}
	slices.Sort(out)
	return out
}

// TestConsolidationPassMerges: after an update, the similar facts the
// rule left apart are sent once; the merge the model asks for keeps the
// highest confidence, the earliest creation and every source, retires the
// other fact with a merged event, keeps the previous version, and is
// counted in usage. A merge that reaches a correction is refused.
func TestConsolidationPassMerges(t *testing.T) {
	c := newConsolStack(t, 0)
	c.fake.PushChat(updateReply(t, similarFacts[0]))
	c.say(t, "t1")
	c.clock.advance(time.Hour)
	c.fake.PushChat(updateReply(t, similarFacts[1:]...),
		consolReply(t, `Sure. {"merges":[{"factIds":["fact_00000001","fact_00000002"],"content":"Writes backend services in Go"},`+
			`{"factIds":["fact_00000002","fact_00000003"],"content":"x"}]}`))
	res := c.say(t, "t2")
	if len(res.FactsAdded) != 3 {
		t.Fatalf("update = %+v, want three facts added", res)
	}
	prompts := c.chatPrompts()
	if len(prompts) != 3 {
		t.Fatalf("%d chat calls, want 3 (two updates, one consolidation)", len(prompts))
	}
	p := prompts[2][strings.Index(prompts[2], "<fact_groups>"):strings.Index(prompts[2], "</fact_groups>")]
	if !strings.Contains(p, "fact_00000001") || !strings.Contains(p, "fact_00000002") || strings.Contains(p, "Lisbon") || strings.Contains(p, "Never panic") {
		t.Errorf("consolidation prompt groups the wrong facts:\n%s", p)
	}
	d := c.doc(t)
	want := []string{"Lives in Lisbon", "Never panic in Go backend services; return errors", "Writes backend services in Go"}
	if got := contents(d.Facts); !slices.Equal(got, want) {
		t.Fatalf("facts = %q, want %q", got, want)
	}
	i := slices.IndexFunc(d.Facts, func(f memory.Fact) bool { return f.Content == want[2] })
	f := d.Facts[i]
	first := time.Date(2026, 3, 2, 9, 0, 0, 0, time.UTC)
	if f.ID != "fact_00000002" || f.Confidence != 0.9 || !f.CreatedAt.Equal(first) || !slices.Equal(f.AllSources(), []string{"t2", "t1"}) {
		t.Errorf("merged fact = %+v, want fact_00000002 at 0.9, created %s, sources t2 and t1", f, first)
	}
	if len(d.RetiredFacts) != 1 || d.RetiredFacts[0].ID != "fact_00000001" {
		t.Errorf("retired = %+v, want fact_00000001", d.RetiredFacts)
	}
	var merged []memory.FactEvent
	for _, e := range d.FactEvents {
		if e.Event == memory.FactMerged {
			merged = append(merged, e)
		}
	}
	if len(merged) != 1 || merged[0].FactID != "fact_00000001" || merged[0].Into != "fact_00000002" || merged[0].Source != memory.SourceConsolidation {
		t.Errorf("merged events = %+v", merged)
	}
	if !d.LLMConsolidatedAt.Equal(c.clock.Now()) {
		t.Errorf("LLMConsolidatedAt = %s, want %s", d.LLMConsolidatedAt, c.clock.Now())
	}
	if d.Usage[len(d.Usage)-1].LLMCalls != 3 || d.Usage[len(d.Usage)-1].PromptTokens != 2300 {
		t.Errorf("usage = %+v, want 3 calls and 2300 prompt tokens", d.Usage)
	}
	versions, err := c.store.ListVersions(t.Context(), memory.Scope{UserID: memory.DefaultUserID})
	if err != nil {
		t.Fatal(err)
	}
	if len(versions) < 2 {
		t.Errorf("%d versions kept, want the one before the pass too", len(versions))
	}
	if _, err := c.svc.RestoreFact(t.Context(), memory.RestoreFactRequest{ID: "fact_00000001"}); err != nil {
		t.Errorf("RestoreFact(merged) = %v", err)
	}

	// The same day: no second pass, even with a new similar fact.
	c.fake.PushChat(updateReply(t, update.NewFact{Content: "Deploys Go backend services on Fly", Category: memory.CategoryContext, Confidence: 0.9}))
	c.say(t, "t3")
	if n := len(c.chatPrompts()); n != 4 {
		t.Errorf("%d chat calls after a second update the same day, want 4 (no second pass)", n)
	}
	// The next day: a pass again.
	c.clock.advance(24 * time.Hour)
	c.fake.PushChat(updateReply(t, update.NewFact{Content: "Tests Go backend services with fakes", Category: memory.CategoryBehavior, Confidence: 0.9}),
		consolReply(t, `{"merges":[]}`))
	c.say(t, "t4")
	if n := len(c.chatPrompts()); n != 6 {
		t.Errorf("%d chat calls the next day, want 6 (update and pass)", n)
	}
}

// TestConsolidationPassBadReplies: a malformed, truncated or failed reply
// changes no fact and never fails the update; an unusable reply counts as
// the day's pass, a failed call does not.
func TestConsolidationPassBadReplies(t *testing.T) {
	tests := []struct {
		name     string
		reply    openaitest.Reply
		markedOK bool
	}{
		{"prose", consolReply(t, "I think they are the same."), true},
		{"truncated", consolReply(t, `{"merges":[{"factIds":["fact_00000001","fact_00000002"],"content":"Writes`), true},
		{"not a list", consolReply(t, `{"merges":"all of them"}`), true},
		{"unknown ids", consolReply(t, `{"merges":[{"factIds":["fact_00000001","fact_99"],"content":"Writes Go"}]}`), true},
		{"server error", openaitest.Error(t, 500, "server_error", "", "", "boom"), false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := newConsolStack(t, 0)
			c.fake.PushChat(updateReply(t, similarFacts[:2]...))
			c.fake.Repeat(tt.reply) // a failed call may be retried
			res := c.say(t, "t1")
			if len(res.FactsAdded) != 2 || res.Pending.Turns != 0 {
				t.Fatalf("update = %+v, want it done despite the pass", res)
			}
			d := c.doc(t)
			if got := contents(d.Facts); !slices.Equal(got, []string{similarFacts[0].Content, similarFacts[1].Content}) || len(d.RetiredFacts) != 0 {
				t.Errorf("facts = %q, retired %d; want both unchanged", got, len(d.RetiredFacts))
			}
			if marked := !d.LLMConsolidatedAt.IsZero(); marked != tt.markedOK {
				t.Errorf("pass marked done = %v, want %v", marked, tt.markedOK)
			}
			prof, err := c.svc.Profile(t.Context(), memory.ProfileRequest{})
			if err != nil {
				t.Fatal(err)
			}
			if prof.Usage.Today.LLMCalls != 2 || (prof.Usage.Today.LLMFailures == 1) == tt.markedOK {
				t.Errorf("usage today = %+v, want 2 calls, a failure only for the failed call", prof.Usage.Today)
			}
		})
	}
}

// TestConsolidationPassBudget: with the daily budget spent by the update,
// the pass is not asked for.
func TestConsolidationPassBudget(t *testing.T) {
	c := newConsolStack(t, 500)
	c.fake.PushChat(updateReply(t, similarFacts[:2]...), consolReply(t, `{"merges":[]}`))
	c.say(t, "t1")
	if n := len(c.chatPrompts()); n != 1 {
		t.Errorf("%d chat calls, want 1: the budget is spent", n)
	}
	if d := c.doc(t); !d.LLMConsolidatedAt.IsZero() || len(d.Facts) != 2 {
		t.Errorf("doc after a deferred pass: consolidated at %s, %d facts", d.LLMConsolidatedAt, len(d.Facts))
	}
}
