package cli

import (
	"net"
	"os"
	"strings"
	"testing"
)

// TestE2EVectorsWithARealModel runs the binary against a real embedding
// model: Universal Sentence Encoder Lite behind the OpenAI-compatible
// wrapper in .ci/use-lite (.ci/use-lite.sh starts it and sets
// MNEMO_TEST_EMBEDDING_URL). A question that shares no word with its
// answer is answered through the vectors; then, with the endpoint gone,
// retrieval goes on by words and the warning names the embedding setting.
func TestE2EVectorsWithARealModel(t *testing.T) {
	t.Parallel()
	url := os.Getenv("MNEMO_TEST_EMBEDDING_URL")
	if url == "" {
		t.Skip("MNEMO_TEST_EMBEDDING_URL is not set: run .ci/use-lite.sh for the real-model check")
	}
	ctx := t.Context()
	dir := t.TempDir()
	exchanges := [][2]string{
		{"We adopted a golden retriever puppy last week.", "Congratulations! What is the dog called?"},
		{"My car needs new brakes before the trip.", "Book the garage early."},
		{"I drink matcha every morning instead of coffee.", "A calm start to the day."},
		{"The quarterly report is due on Friday.", "I'll remind you on Thursday."},
		{"I deploy the harbourmaster service to Fly.io every Friday.", "Noted: Friday deploys."},
	}
	env := []string{"MNEMO_EMBEDDING_MODEL=use-lite", "MNEMO_EMBEDDING_BASE_URL=" + url}
	srv := startServer(t, dir, env...)
	srv.initialize(ctx)
	var ids []string
	for _, ex := range exchanges {
		var added addResult
		if err := srv.tool(ctx, "add_memory", map[string]any{"user_input": ex[0], "agent_response": ex[1]}, &added); err != nil || len(added.TurnIDs) != 1 {
			t.Fatalf("add_memory = %+v, %v", added, err)
		}
		ids = append(ids, added.TurnIDs[0])
	}
	var flush struct {
		Backlog int    `json:"embedding_backlog"`
		Reason  string `json:"reason"`
	}
	if err := srv.tool(ctx, "flush_memory", map[string]any{}, &flush); err != nil || flush.Backlog != 0 {
		t.Fatalf("flush_memory = %+v, %v; want every exchange embedded", flush, err)
	}
	var got retrieveResult
	if err := srv.tool(ctx, "retrieve_memory", map[string]any{"query": "Do I have any pets?"}, &got); err != nil {
		t.Fatal(err)
	}
	if len(got.Pages) == 0 || got.Pages[0].ID != ids[0] {
		t.Errorf("retrieve_memory(pets) pages = %+v, want the puppy first (found by meaning)", got.Pages)
	}
	if code := srv.stop(); code != 0 {
		t.Fatalf("exit code = %d, want 0", code)
	}

	// The endpoint is gone: a port nothing listens on.
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	gone := "http://" + l.Addr().String() + "/v1"
	l.Close()
	srv = startServer(t, dir, "MNEMO_EMBEDDING_MODEL=use-lite", "MNEMO_EMBEDDING_BASE_URL="+gone)
	srv.initialize(ctx)
	for range 3 {
		checkRetrieve(ctx, t, srv, "harbourmaster deploys", ids[4])
	}
	if code := srv.stop(); code != 0 {
		t.Fatalf("exit code = %d, want 0", code)
	}
	logs := srv.stderr.String()
	if !strings.Contains(logs, "MNEMO_EMBEDDING_BASE_URL") || strings.Contains(logs, "MNEMO_LLM_BASE_URL") {
		t.Errorf("warnings with the embeddings endpoint down should name MNEMO_EMBEDDING_BASE_URL, not the LLM's; got:\n%s", logs)
	}
	if n := strings.Count(logs, "the embeddings endpoint is not answering"); n != 1 {
		t.Errorf("the endpoint-down warning was logged %d times, want once (the breaker stays open)", n)
	}
}
