package cli

import (
	"context"
	"crypto/sha256"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"net/http"
	"net/http/cookiejar"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/mnemo-mcp/mnemo/memory/openai/openaitest"
)

// dirDigest is every file under dir with a hash of its bytes and its mode.
func dirDigest(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, path)
		if d.IsDir() {
			out[rel+"/"] = info.Mode().String()
			return nil
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		out[rel] = fmt.Sprintf("%s %x", info.Mode(), sha256.Sum256(data))
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// Looking is read-only: no page of the viewer — a preview and a search
// among them, which rank as retrieve_memory does — changes a byte of the
// data directory or calls the language model, even where the same
// retrieval through the tools would count visits on hot topic sessions
// and start their analysis.
func TestUILookingChangesNothing(t *testing.T) {
	dir := t.TempDir()
	llm := openaitest.NewServer(t)
	llm.ChatFunc = func(openaitest.ChatRequest) openaitest.Reply {
		return openaitest.Chat(t, `{"user":{},"history":{},"newFacts":[],"factsToRemove":[]}`, openaitest.Usage{PromptTokens: 50, CompletionTokens: 10})
	}
	models := []string{"MNEMO_LLM_BASE_URL=" + llm.URL, "MNEMO_LLM_API_KEY=sk-test", "MNEMO_LLM_MODEL=fake",
		"MNEMO_SHORT_TERM_CAPACITY=1", "MNEMO_MID_TERM_HEAT_THRESHOLD=0.1"}
	srv := startServer(t, dir, models...)
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	srv.initialize(ctx)
	for i := range 6 {
		var res addResult
		if err := srv.tool(ctx, "add_memory", map[string]any{"user_id": "ana", "thread_id": "passage",
			"user_input":     fmt.Sprintf("Day %d of the passage to the Azores: should we reef before the squall line?", i+1),
			"agent_response": "Reef early: a second reef before dusk keeps the night watch easy."}, &res); err != nil {
			t.Fatal(err)
		}
	}
	var flushed map[string]any
	if err := srv.tool(ctx, "flush_memory", map[string]any{"user_id": "ana"}, &flushed); err != nil {
		t.Fatal(err)
	}
	if code := srv.stop(); code != 0 {
		t.Fatalf("mnemo serve exited %d", code)
	}
	calls := len(llm.Requests())
	before := dirDigest(t, dir)

	e := env{"MNEMO_DATA_DIR": dir, "HOME": t.TempDir()}
	for _, kv := range models {
		k, v, _ := strings.Cut(kv, "=")
		e[k] = v
	}
	v := startViewerEnv(t, e, "--user", "ana")
	jar, _ := cookiejar.New(nil)
	client := &http.Client{Jar: jar}
	get := func(path string) string {
		t.Helper()
		resp, err := client.Get(path)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("GET %s = %d:\n%s", path, resp.StatusCode, body)
		}
		return string(body)
	}
	get(v.url) // the printed link logs in
	preview := get(v.base + "/preview?user=ana&q=reef+before+the+squall")
	if !strings.Contains(preview, "1 session") || !strings.Contains(preview, "Reef early") {
		t.Fatalf("the preview found no topic session to visit; the test would prove nothing:\n%s", preview)
	}
	for _, page := range []string{"/exchanges?user=ana&q=reef+squall", "/exchanges?user=ana&q=reef&offset=20", "/", "/facts?user=ana",
		"/exchanges?user=ana", "/sessions?user=ana", "/history?user=ana", "/status?user=ana", "/data?user=ana", "/rev?user=ana"} {
		get(v.base + page)
	}
	if code := v.stop(); code != 0 {
		t.Fatalf("mnemo ui exited %d", code)
	}
	after := dirDigest(t, dir)
	if !maps.Equal(before, after) {
		for _, k := range slices.Sorted(maps.Keys(after)) {
			if before[k] != after[k] {
				t.Errorf("%s changed: %q → %q", k, before[k], after[k])
			}
		}
		for k := range before {
			if _, ok := after[k]; !ok {
				t.Errorf("%s was deleted", k)
			}
		}
	}
	if n := len(llm.Requests()); n != calls {
		t.Errorf("looking made %d language model calls, want none", n-calls)
	}
}
