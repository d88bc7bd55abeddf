package engine_test

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/mnemo-mcp/mnemo/memory"
	"github.com/mnemo-mcp/mnemo/memory/engine"
	"github.com/mnemo-mcp/mnemo/memory/files"
	"github.com/mnemo-mcp/mnemo/memory/openai"
	"github.com/mnemo-mcp/mnemo/memory/openai/openaitest"
	"github.com/mnemo-mcp/mnemo/memory/tiktoken"
)

// BenchmarkAddWhileLLMSlow measures add_memory while background updates
// wait on a model that takes 2 s per reply, against the same adds with no
// model. The debounce is 1 s and the benchmark moves to a new thread every
// 50 adds, so threads keep falling quiet and queueing updates; the scope's
// 1000 stored turns are a backlog the updater works through meanwhile.
// Compare with BenchmarkAdd/stored=1000; p50 and p99 come from per-add
// samples.
func BenchmarkAddWhileLLMSlow(b *testing.B) {
	for _, slow := range []bool{false, true} {
		name := "llm=none"
		if slow {
			name = "llm=slow2s"
		}
		b.Run(name, func(b *testing.B) {
			cfg := memory.DefaultConfig()
			cfg.DebounceSeconds = 1
			opts := []engine.Option{engine.WithLogger(slog.New(slog.DiscardHandler))}
			var fake *openaitest.Server
			if slow {
				fake = openaitest.NewServer(b)
				reply := chatOK(b, validReply)
				reply.Delay = 2 * time.Second
				fake.Repeat(reply)
				client, err := openai.New(openai.Config{BaseURL: fake.URL, APIKey: canaryKey, Model: "test-model",
					Timeout: 30 * time.Second, MaxRetries: -1})
				if err != nil {
					b.Fatal(err)
				}
				opts = append(opts, engine.WithLLM(client))
			}
			store, err := files.Open(b.TempDir())
			if err != nil {
				b.Fatal(err)
			}
			b.Cleanup(func() { store.Close() })
			counter, err := tiktoken.New("cl100k_base")
			if err != nil {
				b.Fatal(err)
			}
			svc, err := engine.NewService(cfg, store, counter, opts...)
			if err != nil {
				b.Fatal(err)
			}
			b.Cleanup(func() { closeNow(svc) })
			fill(b, svc, 1000)
			if slow {
				// The backlog's first update is now waiting on the model.
				select {
				case <-fake.First():
				case <-b.Context().Done():
					b.Fatal("no background update started")
				}
			}

			r := rand.New(rand.NewPCG(1, 1))
			req := memory.AddRequest{UserInput: benchText(r, 25), AgentResponse: benchText(r, 35)}
			samples := make([]time.Duration, 0, 1<<16)
			i := 0
			for b.Loop() {
				req.ThreadID = fmt.Sprintf("bench%d", i/50)
				i++
				start := time.Now()
				if _, err := svc.Add(context.Background(), req); err != nil {
					b.Fatal(err)
				}
				samples = append(samples, time.Since(start))
			}
			b.StopTimer()
			slices.Sort(samples)
			b.ReportMetric(float64(percentile(samples, 50)), "p50-ns")
			b.ReportMetric(float64(percentile(samples, 99)), "p99-ns")
			if slow {
				b.ReportMetric(float64(len(fake.ChatRequests())), "llm-requests")
			}
		})
	}
}

// percentile returns the p-th percentile of sorted samples.
func percentile(sorted []time.Duration, p int) time.Duration {
	if len(sorted) == 0 {
		return 0
	}
	return sorted[min(len(sorted)-1, len(sorted)*p/100)]
}

// llmCallsOut makes TestLLMCallsPer100Turns write its counts as JSON, for
// BenchmarkLLMCallsPer100Turns.
var llmCallsOut = flag.String("llmcalls.out", "", "file to which TestLLMCallsPer100Turns writes its counts as JSON")

// arrivalPatterns are the turn arrival times of the LLM call benchmark:
// 100 turns of one thread.
var arrivalPatterns = []struct {
	name      string
	at        func(i int) time.Duration // arrival of turn i after the start
	wantCalls int                       // with the default 30 s debounce
}{
	// Five bursts of 20 turns 250 ms apart (all within 5 s), 2 min apart.
	{"bursty", func(i int) time.Duration {
		return time.Duration(i/20)*2*time.Minute + time.Duration(i%20)*250*time.Millisecond
	}, 5},
	// One turn a minute for 100 minutes.
	{"spread", func(i int) time.Duration { return time.Duration(i) * time.Minute }, 100},
}

// llmCallCount is what one simulated arrival pattern cost.
type llmCallCount struct {
	// Calls are the memory updater's calls, which the debounce bounds.
	Calls        int `json:"calls"`
	PromptTokens int `json:"prompt_tokens"`
	// TierCalls are the mid-term session summaries and long-term session
	// analyses, counted apart (their prompt tokens are in PromptTokens).
	TierCalls int `json:"tier_calls"`
}

// TestLLMCallsPer100Turns feeds 100 turns to the queue in fake time and
// counts the model calls the debounce lets through: one per burst, and one
// per turn when turns are further apart than the debounce.
func TestLLMCallsPer100Turns(t *testing.T) {
	counter, err := tiktoken.New("cl100k_base")
	if err != nil {
		t.Fatal(err)
	}
	results := map[string]llmCallCount{}
	for _, tt := range arrivalPatterns {
		t.Run(tt.name, func(t *testing.T) {
			var got llmCallCount
			synctest.Test(t, func(t *testing.T) { got = simulateArrivals(t, counter, tt.at) })
			if got.Calls != tt.wantCalls {
				t.Errorf("%s: %d LLM calls for 100 turns, want %d", tt.name, got.Calls, tt.wantCalls)
			}
			results[tt.name] = got
			t.Logf("%s: %d update calls + %d tier calls, %d prompt tokens per 100 turns", tt.name, got.Calls, got.TierCalls, got.PromptTokens)
		})
	}
	if *llmCallsOut != "" {
		if err := os.WriteFile(*llmCallsOut, []byte(mustMarshal(t, results)), 0o600); err != nil {
			t.Fatal(err)
		}
	}
}

// simulateArrivals adds 100 turns to one thread at the given times, lets
// the last debounce expire, and returns the model usage. It runs in a
// synctest bubble, with a model that answers at once.
func simulateArrivals(t *testing.T, counter memory.TokenCounter, at func(i int) time.Duration) llmCallCount {
	var mu sync.Mutex
	calls, tierCalls := 0, 0
	llm := funcLLM{complete: func(_ context.Context, req memory.CompletionRequest) (memory.Completion, error) {
		mu.Lock()
		calls++
		n := calls
		tier := strings.Contains(req.Prompt, "<current_profile>") || strings.Contains(req.Prompt, "mid-term memory of an AI assistant")
		if tier {
			tierCalls++
		}
		mu.Unlock()
		reply := fmt.Sprintf(`{"newFacts":[{"content":"Fact learned in update %d","category":"context","confidence":0.9}],"factsToRemove":[]}`, n)
		if tier {
			reply = fmt.Sprintf(`{"summary":"Topic %d","keywords":["topic"],"userKnowledge":[],"assistantKnowledge":[]}`, n)
		}
		return memory.Completion{Text: reply, PromptTokens: len(req.Prompt) / 4, CompletionTokens: len(reply) / 4}, nil
	}}
	store, err := files.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	cfg := memory.DefaultConfig()
	svc, err := engine.NewService(cfg, store, counter, engine.WithLLM(llm), engine.WithLogger(slog.New(slog.DiscardHandler)))
	if err != nil {
		t.Fatal(err)
	}
	defer closeNow(svc)

	r := rand.New(rand.NewPCG(3, 3))
	start := time.Now()
	for i := range 100 {
		time.Sleep(time.Until(start.Add(at(i))))
		req := memory.AddRequest{ThreadID: "t", UserInput: fmt.Sprintf("%s (turn %d)", benchText(r, 25), i), AgentResponse: benchText(r, 35)}
		if _, err := svc.Add(t.Context(), req); err != nil {
			t.Fatal(err)
		}
	}
	time.Sleep(time.Duration(cfg.DebounceSeconds+1) * time.Second)
	synctest.Wait()

	prof, err := svc.Profile(t.Context(), memory.ProfileRequest{})
	if err != nil {
		t.Fatal(err)
	}
	if prof.Pending.Turns != 0 {
		t.Errorf("%d turns still pending after the last debounce", prof.Pending.Turns)
	}
	usage := svc.LLMUsage()
	mu.Lock()
	defer mu.Unlock()
	if usage.Calls != calls {
		t.Errorf("LLMUsage().Calls = %d, the model saw %d", usage.Calls, calls)
	}
	return llmCallCount{Calls: usage.Calls - tierCalls, PromptTokens: usage.PromptTokens, TierCalls: tierCalls}
}

// BenchmarkLLMCallsPer100Turns reports how many model calls and prompt
// tokens 100 turns cost, bursty versus spread out, with the default 30 s
// debounce. The arrivals span up to 100 minutes, so they run in fake time;
// a synctest bubble needs a *testing.T, so each iteration runs
// TestLLMCallsPer100Turns in a child test process and reads its counts.
// ns/op is the wall time of one such child.
func BenchmarkLLMCallsPer100Turns(b *testing.B) {
	for _, tt := range arrivalPatterns {
		b.Run(tt.name, func(b *testing.B) {
			out := filepath.Join(b.TempDir(), "counts.json")
			var got map[string]llmCallCount
			for b.Loop() {
				cmd := exec.CommandContext(b.Context(), os.Args[0],
					"-test.run=^TestLLMCallsPer100Turns$/^"+tt.name+"$", "-test.count=1", "-llmcalls.out="+out)
				if msg, err := cmd.CombinedOutput(); err != nil {
					b.Fatalf("simulation failed: %v\n%s", err, msg)
				}
				data, err := os.ReadFile(out)
				if err != nil {
					b.Fatal(err)
				}
				if err := json.Unmarshal(data, &got); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(got[tt.name].Calls), "llm_calls/100turns")
			b.ReportMetric(float64(got[tt.name].TierCalls), "tier_llm_calls/100turns")
			b.ReportMetric(float64(got[tt.name].PromptTokens), "prompt_tokens/100turns")
		})
	}
}
