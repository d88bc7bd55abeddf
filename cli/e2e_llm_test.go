package cli

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"regexp"
	"runtime"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// fakeOpenAI is an OpenAI-compatible chat endpoint on loopback that turns
// every codeword in the conversation block of the update prompt into a
// fact, and records which codewords it was asked about.
type fakeOpenAI struct {
	*httptest.Server
	mu    sync.Mutex
	seen  map[string]int // codeword → how many prompts carried it
	calls int
	// updates counts, per codeword, the update prompts (not the tiers'
	// summaries) that carried it; batches lists the codewords of each.
	updates map[string]int
	batches [][]string
	auth    []string
}

var codewordRE = regexp.MustCompile(`codeword-[a-z]+`)

func newFakeOpenAI(t *testing.T) *fakeOpenAI {
	f := &fakeOpenAI{seen: map[string]int{}, updates: map[string]int{}}
	f.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		prompt, ok := lastPrompt(w, r)
		if !ok {
			return
		}
		// The conversation block is the last <conversation> … </conversation>.
		conv := prompt[strings.LastIndex(prompt, "<conversation>")+1:]
		conv, _, _ = strings.Cut(conv, "</conversation>")
		words := codewordRE.FindAllString(conv, -1)
		f.mu.Lock()
		f.calls++
		f.auth = append(f.auth, r.Header.Get("Authorization"))
		var facts []string
		if len(words) > 0 && strings.Contains(prompt, "Below are the user's current memory and a new conversation") {
			f.batches = append(f.batches, words)
			for _, w := range words {
				f.updates[w]++
			}
		}
		for _, w := range words {
			f.seen[w]++
			facts = append(facts, fmt.Sprintf(`{"content":"The user's project is called %s","category":"context","confidence":0.95}`, w))
		}
		f.mu.Unlock()
		content := `{"user":{},"history":{},"newFacts":[` + strings.Join(facts, ",") + `],"factsToRemove":[]}`
		body, _ := json.Marshal(map[string]any{
			"id": "chatcmpl-1", "object": "chat.completion", "model": "fake",
			"choices": []any{map[string]any{"index": 0, "finish_reason": "stop",
				"message": map[string]any{"role": "assistant", "content": content}}},
			"usage": map[string]any{"prompt_tokens": len(prompt) / 4, "completion_tokens": 20},
		})
		w.Header().Set("Content-Type", "application/json")
		w.Write(body)
	}))
	t.Cleanup(f.Close)
	return f
}

// lastPrompt reads an OpenAI chat completion request and returns the
// content of its last message; a request it cannot read gets a 400 and
// false.
func lastPrompt(w http.ResponseWriter, r *http.Request) (string, bool) {
	var req struct {
		Messages []struct{ Content string } `json:"messages"`
	}
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil || len(req.Messages) == 0 {
		http.Error(w, "bad request", http.StatusBadRequest)
		return "", false
	}
	return req.Messages[len(req.Messages)-1].Content, true
}

func (f *fakeOpenAI) snapshot() (calls int, seen map[string]int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	seen = make(map[string]int, len(f.seen))
	for k, v := range f.seen {
		seen[k] = v
	}
	return f.calls, seen
}

// TestE2ECrashResume kills the real binary with SIGKILL while turns are
// pending, restarts it, and checks that every pending turn is processed
// exactly once and that the API key never shows up in the output.
func TestE2ECrashResume(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end test")
	}
	if runtime.GOOS == "windows" {
		t.Skip("no SIGKILL on Windows")
	}
	const canary = "sk-canary-e2e-7f3a9c"
	ctx := t.Context()
	dir := t.TempDir()
	llm := newFakeOpenAI(t)
	env := []string{"MNEMO_LLM_BASE_URL=" + llm.URL + "/v1", "MNEMO_LLM_API_KEY=" + canary, "MNEMO_LLM_MODEL=fake"}

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
	if calls, _ := llm.snapshot(); calls != 0 {
		t.Fatalf("the model was called %d times before the kill, want 0 (debounce 300s)", calls)
	}
	logs := srv.stderr.String()

	// 2. Restart with a short debounce: the pending turns are resumed.
	srv = startServer(t, dir, append(env, "MNEMO_DEBOUNCE_SECONDS=1")...)
	srv.initialize(ctx)
	deadline := time.Now().Add(60 * time.Second)
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
		if prof.Pending.Turns == 0 || time.Now().After(deadline) {
			break
		}
		time.Sleep(100 * time.Millisecond)
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

	calls, seen := llm.snapshot()
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
		t.Errorf("model calls = %d, want 2 (one per thread)", calls)
	}
	if strings.Contains(logs, canary) {
		t.Errorf("the API key appears in the server's stderr")
	}
	for _, a := range llm.auth {
		if a != "Bearer "+canary {
			t.Errorf("Authorization = %q, want the configured key", a)
		}
	}
}
