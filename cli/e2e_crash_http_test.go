package cli

import (
	"context"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
)

// TestE2ECrashHTTPBurst kills mnemo serve --http with SIGKILL during a
// burst of concurrent adds from several clients of one user (adds that
// wait on one another share a flush: group commit) and of a second user,
// several times: every add that was acknowledged must be in its user's
// turn log after the crash, once.
func TestE2ECrashHTTPBurst(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("end-to-end crash test")
	}
	if runtime.GOOS == "windows" {
		t.Skip("no SIGKILL on Windows")
	}
	dir := filepath.Join(t.TempDir(), "data")
	users := []string{"ana", "bo"}
	tokens := map[string]string{}
	for _, u := range users {
		out, err := mnemoCmd(t, dir, nil, "token", "add", "--user", u).Output()
		if err != nil {
			t.Fatal(err)
		}
		tokens[u] = strings.TrimSpace(string(out))
	}
	env := []string{"MNEMO_HTTP_RATE=100000", "MNEMO_HTTP_BURST=100000"}
	acks := map[string]*ackLog{}
	for _, u := range users {
		acks[u] = &ackLog{acked: map[string]bool{}, next: len(u) * 1_000_000}
	}
	const cycles = 6
	for range cycles {
		srv := startHTTP(t, dir, env)
		ctx, cancel := context.WithCancel(t.Context())
		var wg sync.WaitGroup
		for ci := range 8 {
			u := users[0]
			if ci == 7 {
				u = users[1]
			}
			c := mcpClient(t, srv.url, map[string]string{"Authorization": "Bearer " + tokens[u]})
			wg.Go(func() {
				for ctx.Err() == nil {
					w := acks[u].take()
					var req mcp.CallToolRequest
					req.Params.Name = "add_memory"
					req.Params.Arguments = map[string]any{"user_input": "Project " + w + " starts today.", "agent_response": "Noted " + w + ".",
						"thread_id": fmt.Sprintf("client-%d", ci)}
					res, err := c.CallTool(ctx, req)
					if err != nil || res.IsError {
						return // killed mid-call: not acknowledged
					}
					acks[u].ack(w)
				}
			})
		}
		time.Sleep(time.Duration(200+rand.IntN(600)) * time.Millisecond)
		if err := srv.cmd.Process.Signal(syscall.SIGKILL); err != nil {
			t.Fatal(err)
		}
		<-srv.done
		srv.cmd.Wait()
		cancel()
		wg.Wait()
	}
	for _, u := range users {
		stored := storedCodewords(t, filepath.Join(dir, "users", u, "turns.jsonl"))
		a := acks[u]
		a.mu.Lock()
		for w := range a.acked {
			if stored[w] != 2 { // user_input and agent_response both name it
				t.Errorf("%s: acknowledged %s is in the turn log %d times, want once", u, w, stored[w]/2)
			}
		}
		n := len(a.acked)
		a.mu.Unlock()
		t.Logf("%s: %d kills, %d acknowledged adds, %d stored", u, cycles, n, len(stored))
		if n < cycles {
			t.Errorf("%s: only %d adds acknowledged over %d cycles; the burst did not exercise the server", u, n, cycles)
		}
	}
	checkDataDir(t, dir, "")
}
