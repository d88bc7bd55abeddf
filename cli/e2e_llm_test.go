package cli

import (
	"fmt"
	"regexp"
	"runtime"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/mnemo-mcp/mnemo/memory/openai/openaitest"
)

var codewordRE = regexp.MustCompile(`codeword-[a-z]+`)

// codewordModel is a fake model's chat function: it turns every codeword
// in the conversation block of the update prompt into a fact, written by
// fact(word, call) where call counts the chat completions from 1, and
// answers after delay() when delay is set. The facts carry their own
// text, so the test reads from the recorded requests what the model was
// asked about.
func codewordModel(t *testing.T, fact func(word string, call int64) string, delay func() time.Duration) func(openaitest.ChatRequest) openaitest.Reply {
	var calls atomic.Int64
	return func(r openaitest.ChatRequest) openaitest.Reply {
		n := calls.Add(1)
		prompt := r.Prompt()
		facts := []any{}
		for _, w := range promptCodewords(prompt) {
			facts = append(facts, map[string]any{"content": fact(w, n), "category": "context", "confidence": 0.95})
		}
		content := openaitest.MustJSON(t, map[string]any{"user": map[string]any{}, "history": map[string]any{}, "newFacts": facts, "factsToRemove": []any{}})
		rep := openaitest.Chat(t, content, openaitest.Usage{PromptTokens: len(prompt) / 4, CompletionTokens: 20})
		if delay != nil {
			rep.Delay = delay()
		}
		return rep
	}
}

// promptCodewords returns the codewords in the conversation block of a
// prompt, in order.
func promptCodewords(prompt string) []string {
	return codewordRE.FindAllString(conversationBlock(prompt), -1)
}

// newCodewordLLM is the fake model of TestE2ECrashResume: each codeword
// becomes the fact "The user's project is called <codeword>".
func newCodewordLLM(t *testing.T) *openaitest.Server {
	llm := openaitest.NewServer(t)
	llm.ChatFunc = codewordModel(t, func(w string, _ int64) string { return "The user's project is called " + w }, nil)
	return llm
}

// codewordsSeen counts, for each codeword, the update prompts that carried
// it, and returns them with the number of update calls. The daily
// consolidation pass (its prompt holds <fact_groups>) is left out: it
// sends facts already stored, not turns.
func codewordsSeen(llm *openaitest.Server) (calls int, seen map[string]int) {
	seen = map[string]int{}
	for _, r := range llm.ChatRequests() {
		if isConsolidationPrompt(r.Prompt()) {
			continue
		}
		calls++
		for _, w := range promptCodewords(r.Prompt()) {
			seen[w]++
		}
	}
	return calls, seen
}

// isConsolidationPrompt reports whether prompt is the consolidation
// pass's.
func isConsolidationPrompt(prompt string) bool { return strings.Contains(prompt, "<fact_groups>") }

// TestE2ECrashResume kills the real binary with SIGKILL while turns are
// pending, restarts it, and checks that every pending turn is processed
// exactly once and that the API key never shows up in the output.
func TestE2ECrashResume(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("end-to-end test")
	}
	if runtime.GOOS == "windows" {
		t.Skip("no SIGKILL on Windows")
	}
	const canary = "sk-canary-e2e-7f3a9c"
	ctx := t.Context()
	dir := t.TempDir()
	llm := newCodewordLLM(t)
	env := []string{"MNEMO_LLM_BASE_URL=" + llm.URL, "MNEMO_LLM_API_KEY=" + canary, "MNEMO_LLM_MODEL=fake"}

	// 1. Store turns with a long debounce, so they are pending, then kill -9.
	srv := startServer(t, dir, append(env, "MNEMO_DEBOUNCE_SECONDS=300")...)
	srv.initialize(ctx)
	words := []string{"codeword-alder", "codeword-birch", "codeword-cedar", "codeword-dogwood", "codeword-elm"}
	for i, w := range words {
		var added addResult
		err := srv.tool(ctx, "add_memory", map[string]any{
			"user_input":     fmt.Sprintf("My project is %s.", w),
			"agent_response": "Noted.",
			"thread_id":      fmt.Sprintf("thread-%d", i%2),
		}, &added)
		if err != nil || len(added.TurnIDs) != 1 {
			t.Fatalf("add_memory = %+v, %v", added, err)
		}
	}
	if err := srv.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	srv.wait()
	if calls, _ := codewordsSeen(llm); calls != 0 {
		t.Fatalf("the model was called %d times before the kill, want 0 (debounce 300s)", calls)
	}
	logs := srv.stderr.String()

	// 2. Restart with a short debounce: the pending turns are resumed.
	srv = startServer(t, dir, append(env, "MNEMO_DEBOUNCE_SECONDS=1")...)
	srv.initialize(ctx)
	var prof struct {
		Facts   []struct{ Content string } `json:"facts"`
		Pending struct {
			Turns int `json:"turns"`
		} `json:"pending"`
	}
	for {
		if err := srv.tool(ctx, "get_user_profile", map[string]any{}, &prof); err != nil {
			t.Fatal(err)
		}
		if prof.Pending.Turns == 0 {
			break
		}
		select { // the test's time-out is the only bound
		case <-ctx.Done():
			t.Fatalf("after restart %d turns still pending when the test ended", prof.Pending.Turns)
		case <-time.After(100 * time.Millisecond): // polling interval
		}
	}
	if prof.Pending.Turns != 0 {
		t.Fatalf("after restart %d turns still pending", prof.Pending.Turns)
	}
	if code := srv.stop(); code != 0 {
		t.Errorf("exit code = %d, want 0", code)
	}
	logs += srv.stderr.String()

	// 3. Another restart: nothing left to do, nothing processed twice.
	srv = startServer(t, dir, append(env, "MNEMO_DEBOUNCE_SECONDS=1")...)
	srv.initialize(ctx)
	var flush struct {
		TurnsProcessed int `json:"turns_processed"`
	}
	if err := srv.tool(ctx, "flush_memory", map[string]any{}, &flush); err != nil || flush.TurnsProcessed != 0 {
		t.Errorf("flush after recovery = %+v, %v; want nothing to process", flush, err)
	}
	if code := srv.stop(); code != 0 {
		t.Errorf("exit code = %d, want 0", code)
	}
	logs += srv.stderr.String()

	calls, seen := codewordsSeen(llm)
	for _, w := range words {
		if seen[w] != 1 {
			t.Errorf("the model saw %s %d times, want exactly once", w, seen[w])
		}
		n := 0
		for _, f := range prof.Facts {
			if strings.Contains(f.Content, w) {
				n++
			}
		}
		if n != 1 {
			t.Errorf("memory holds %d facts about %s, want 1", n, w)
		}
	}
	if calls != 2 {
		t.Errorf("update calls = %d, want 2 (one per thread)", calls)
	}
	passes := 0
	for _, r := range llm.ChatRequests() {
		if isConsolidationPrompt(r.Prompt()) {
			passes++
		}
	}
	if passes > 1 {
		t.Errorf("%d consolidation passes, want at most one a day", passes)
	}
	if strings.Contains(logs, canary) {
		t.Errorf("the API key appears in the server's stderr")
	}
	for _, r := range llm.Requests() {
		if r.Auth != "Bearer "+canary {
			t.Errorf("Authorization = %q, want the configured key", r.Auth)
		}
	}
}
