package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/mcp"

	"github.com/mnemo-mcp/mnemo/memory/openai/openaitest"
	"github.com/mnemo-mcp/mnemo/memory/postgres/pgtest"
)

// updateCall is one update prompt the fake model answered: the scope its
// conversation belongs to, which instance asked (by its API key) and
// when, on a logical clock ticked at every start and end.
type updateCall struct {
	scope      string
	instance   string
	start, end int64
	words      []string
}

// loadLLM is the fake model of the load test: it answers every prompt as
// codewordModel does and records each update call's interval, holding it
// open for latency so that a second updater of the same scope, if one
// ran, would show up inside it.
type loadLLM struct {
	*openaitest.Server
	clock   atomic.Int64
	mu      sync.Mutex
	updates []updateCall
	mixed   []string // update prompts whose conversation mixes scopes
}

// newLoadLLM starts the fake model. The scope of a codeword is the letter
// after "codeword-" (see loadWord).
func newLoadLLM(t *testing.T, latency time.Duration) *loadLLM {
	l := &loadLLM{Server: openaitest.NewServer(t)}
	answer := codewordModel(t, func(w string, _ int64) string { return "The user's project is called " + w }, nil)
	l.Func = func(r openaitest.Request) openaitest.Reply {
		if r.Path != openaitest.ChatPath {
			t.Errorf("request to %s, want only chat completions", r.Path)
			return openaitest.Reply{Status: 404}
		}
		prompt := r.Chat.Prompt()
		words := promptCodewords(prompt)
		if !strings.Contains(prompt, "Below are the user's current memory and a new conversation") || len(words) == 0 {
			return answer(r.Chat)
		}
		call := updateCall{scope: words[0][len("codeword-"):][:1], instance: r.Auth, words: words}
		for _, w := range words {
			if w[len("codeword-"):][:1] != call.scope {
				l.mu.Lock()
				l.mixed = append(l.mixed, strings.Join(words, " "))
				l.mu.Unlock()
				break
			}
		}
		call.start = l.clock.Add(1)
		time.Sleep(latency) // the model thinking; not a timing assertion
		call.end = l.clock.Add(1)
		l.mu.Lock()
		l.updates = append(l.updates, call)
		l.mu.Unlock()
		return answer(r.Chat)
	}
	return l
}

// calls returns the update calls answered so far.
func (l *loadLLM) calls() []updateCall {
	l.mu.Lock()
	defer l.mu.Unlock()
	return slices.Clone(l.updates)
}

// overlaps returns, for each scope, the pairs of update calls whose
// intervals intersect.
func overlaps(calls []updateCall) []string {
	byScope := map[string][]updateCall{}
	for _, c := range calls {
		byScope[c.scope] = append(byScope[c.scope], c)
	}
	var out []string
	for scope, cs := range byScope {
		slices.SortFunc(cs, func(a, b updateCall) int { return int(a.start - b.start) })
		for i := 1; i < len(cs); i++ {
			if cs[i].start < cs[i-1].end {
				out = append(out, fmt.Sprintf("scope %s: [%d,%d] by %s and [%d,%d] by %s", scope,
					cs[i-1].start, cs[i-1].end, cs[i-1].instance, cs[i].start, cs[i].end, cs[i].instance))
			}
		}
	}
	return out
}

func TestOverlaps(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		calls []updateCall
		want  int
	}{
		{"disjoint", []updateCall{{scope: "a", start: 1, end: 2}, {scope: "a", start: 3, end: 4}}, 0},
		{"other scope", []updateCall{{scope: "a", start: 1, end: 4}, {scope: "b", start: 2, end: 3}}, 0},
		{"nested", []updateCall{{scope: "a", start: 1, end: 4}, {scope: "a", start: 2, end: 3}}, 1},
		{"crossing, out of order", []updateCall{{scope: "a", start: 3, end: 5}, {scope: "a", start: 1, end: 4}}, 1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := overlaps(tc.calls); len(got) != tc.want {
				t.Errorf("overlaps() = %v, want %d", got, tc.want)
			}
		})
	}
}

// loadWord is the codeword of add i through instance inst for user: the
// user's initial (the scope), the instance and i in letters.
func loadWord(user, inst string, i int) string {
	return "codeword-" + user[:1] + inst + letters(i)
}

// callJSON calls a tool and decodes its structured result into out; a
// tool error is an error.
func callJSON(ctx context.Context, c *client.Client, name string, args map[string]any, out any) error {
	var req mcp.CallToolRequest
	req.Params.Name = name
	req.Params.Arguments = args
	res, err := c.CallTool(ctx, req)
	if err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	if res.IsError {
		return fmt.Errorf("%s: tool error %s", name, resultText(res))
	}
	b, err := json.Marshal(res.StructuredContent)
	if err != nil {
		return err
	}
	return json.Unmarshal(b, out)
}

// percentile returns the p-th percentile of sorted durations.
func percentile(sorted []time.Duration, p float64) time.Duration {
	if len(sorted) == 0 {
		return 0
	}
	return sorted[min(len(sorted)-1, int(p*float64(len(sorted))))]
}

// TestE2EHTTPLoadPostgres runs two mnemo serve --http processes on one
// PostgreSQL database with the same tokens and drives 1,000 concurrent
// add_memory calls through each (250 under -race) (four users, four threads each, shared
// by both instances), with saves and updates of facts, while the
// debounced updates run on both. After a flush through both: every
// acknowledged turn is stored once with dense Seqs, every turn reached
// the model exactly once in a prompt of its own scope, every saved fact
// holds its last update, and no two update calls of one scope overlapped.
func TestE2EHTTPLoadPostgres(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("end-to-end load test")
	}
	mnemoBinary(t)
	dbURL := pgtest.NewDatabase(t)
	llm := newLoadLLM(t, 20*time.Millisecond)
	ctx := t.Context()

	users := []string{"alice", "bob", "carol", "dave"}
	const threads = 4 // per user, on both instances
	// add_memory calls through each instance; a race-detector build is
	// about ten times slower, so it gets a quarter of the load to stay
	// within go test -race's time.
	perInstance := 1000
	if raceEnabled() {
		perInstance = 250
	}
	dirA, dirB := t.TempDir(), t.TempDir()
	env := func(key string) []string {
		return []string{"MNEMO_STORAGE=" + dbURL, "MNEMO_LLM_BASE_URL=" + llm.URL, "MNEMO_LLM_API_KEY=" + key,
			"MNEMO_LLM_MODEL=fake", "MNEMO_DEBOUNCE_SECONDS=1", "MNEMO_MAX_FACTS=10000",
			"MNEMO_HTTP_RATE=100000", "MNEMO_HTTP_BURST=100000"}
	}
	// The tokens live in the database: added once, every instance on it
	// honours them.
	tokens := map[string]string{}
	for _, u := range users {
		out, err := mnemoCmd(t, dirA, []string{"MNEMO_STORAGE=" + dbURL}, "token", "add", "--user", u).Output()
		if err != nil {
			t.Fatalf("mnemo token add --user %s: %v", u, err)
		}
		tokens[u] = strings.TrimSpace(string(out))
	}
	instances := []struct {
		name string // one letter, in the codewords
		key  string // the API key it sends the model
		proc *httpProc
	}{
		{name: "x", key: "key-x"}, {name: "y", key: "key-y"},
	}
	instances[0].proc = startHTTP(t, dirA, env(instances[0].key))
	instances[1].proc = startHTTP(t, dirB, env(instances[1].key))
	// clients[i][u] is a client of instance i authenticated as users[u].
	newClient := func(i, u int) *client.Client {
		return mcpClient(t, instances[i].proc.url, map[string]string{"Authorization": "Bearer " + tokens[users[u]]})
	}

	type ackedTurn struct{ user, id, word string }
	type savedFact struct{ user, id, content string }
	var (
		mu        sync.Mutex
		acked     []ackedTurn
		facts     []savedFact
		latencies = make([][]time.Duration, len(instances))
		elapsed   = make([]time.Duration, len(instances))
		failures  atomic.Int64
	)
	fail := func(format string, args ...any) {
		if failures.Add(1) <= 10 {
			t.Errorf(format, args...)
		}
	}
	// saveAndUpdate saves a fact through one instance and corrects it
	// twice, through the other instance and back.
	saveAndUpdate := func(mine, other *client.Client, user, label string) {
		var saved struct {
			Fact struct {
				ID string `json:"id"`
			} `json:"fact"`
		}
		content := "The user keeps a notebook labelled " + label + ", edition 0."
		if err := callJSON(ctx, mine, "save_memory", map[string]any{"content": content, "category": "preference"}, &saved); err != nil {
			fail("%s: %v", user, err)
			return
		}
		for n, c := range []*client.Client{other, mine} {
			content = fmt.Sprintf("The user keeps a notebook labelled %s, edition %d.", label, n+1)
			var upd json.RawMessage
			if err := callJSON(ctx, c, "update_memory", map[string]any{"id": saved.Fact.ID, "content": content}, &upd); err != nil {
				fail("%s: %v", user, err)
				return
			}
		}
		mu.Lock()
		facts = append(facts, savedFact{user, saved.Fact.ID, content})
		mu.Unlock()
	}

	workers := len(users) * threads
	var wg sync.WaitGroup
	for i, inst := range instances {
		var instWG sync.WaitGroup
		start := time.Now()
		for w := range workers {
			u := w % len(users)
			user, thread := users[u], fmt.Sprintf("t%d", w/len(users))
			mine, other := newClient(i, u), newClient(1-i, u)
			instWG.Go(func() {
				var lat []time.Duration
				for k, n := 0, w; n < perInstance; k, n = k+1, n+workers {
					word := loadWord(user, inst.name, n)
					var res addResult
					began := time.Now()
					err := callJSON(ctx, mine, "add_memory", map[string]any{"thread_id": thread,
						"user_input":     fmt.Sprintf("turn %d through %s: my project is %s", n, inst.name, word),
						"agent_response": "noted"}, &res)
					lat = append(lat, time.Since(began))
					if err != nil || len(res.TurnIDs) != 1 {
						fail("instance %s, %s: add_memory = %v, %v", inst.name, user, res.TurnIDs, err)
						continue
					}
					mu.Lock()
					acked = append(acked, ackedTurn{user, res.TurnIDs[0], word})
					mu.Unlock()
					if k%10 == 0 {
						saveAndUpdate(mine, other, user, fmt.Sprintf("%s-%s-%d", inst.name, user, n))
					}
				}
				mu.Lock()
				latencies[i] = append(latencies[i], lat...)
				mu.Unlock()
			})
		}
		wg.Go(func() {
			instWG.Wait()
			elapsed[i] = time.Since(start)
		})
	}
	wg.Wait()
	if failures.Load() > 0 {
		t.Fatalf("%d calls failed", failures.Load())
	}
	for i, inst := range instances {
		lat := latencies[i]
		slices.Sort(lat)
		t.Logf("instance %s: %d add_memory in %v (with saves and updates) = %.0f adds/s; latency p50 %v, p95 %v, max %v",
			inst.name, len(lat), elapsed[i].Round(time.Millisecond), float64(len(lat))/elapsed[i].Seconds(),
			percentile(lat, 0.50).Round(time.Microsecond), percentile(lat, 0.95).Round(time.Microsecond), lat[len(lat)-1].Round(time.Microsecond))
	}

	// flush flushes one user through both instances until nothing is
	// pending on either.
	type flushResult struct {
		Pending struct {
			Turns int `json:"turns"`
		} `json:"pending"`
		Running []string `json:"running"`
	}
	flush := func(u int) {
		cs := []*client.Client{newClient(0, u), newClient(1, u)}
		waitFor(t, users[u]+"'s pending turns processed", func() bool {
			for _, c := range cs {
				var res flushResult
				if err := callJSON(ctx, c, "flush_memory", map[string]any{}, &res); err != nil {
					t.Fatal(err)
				}
				if res.Pending.Turns > 0 || len(res.Running) > 0 {
					return false
				}
			}
			return true
		})
	}
	flushStart := time.Now()
	for u := range users {
		flush(u)
	}
	t.Logf("flush through both instances: %v", time.Since(flushStart).Round(time.Millisecond))
	// One more turn per user through each instance, flushed through the
	// same instance at once, so that both instances have run updates of
	// every scope whatever the load's lock contests gave. The other
	// instance, told of the turn, may still update it first (its debounce
	// ends while the flush waits for the lock); then another turn is sent,
	// a few times at most.
	updatedBy := func(user, key string) bool {
		for _, c := range llm.calls() {
			if c.scope == user[:1] && strings.TrimPrefix(c.instance, "Bearer ") == key {
				return true
			}
		}
		return false
	}
	extra := 0
	for i, inst := range instances {
		for u, user := range users {
			c := newClient(i, u)
			for attempt := 0; attempt < 5 && (attempt == 0 || !updatedBy(user, inst.key)); attempt++ {
				word := loadWord(user, inst.name, perInstance+attempt)
				var res addResult
				if err := callJSON(ctx, c, "add_memory", map[string]any{"thread_id": "last",
					"user_input": "last turn: my project is " + word, "agent_response": "noted"}, &res); err != nil || len(res.TurnIDs) != 1 {
					t.Fatalf("add_memory = %v, %v", res.TurnIDs, err)
				}
				acked = append(acked, ackedTurn{user, res.TurnIDs[0], word})
				extra++
				var fr flushResult
				if err := callJSON(ctx, c, "flush_memory", map[string]any{}, &fr); err != nil {
					t.Fatal(err)
				}
			}
		}
	}
	for u := range users {
		flush(u)
	}

	// Every acknowledged turn stored exactly once, Seqs dense per scope,
	// nothing stored that was not acknowledged.
	want := map[string]map[string]string{} // user → turn id → codeword
	for _, a := range acked {
		if want[a.user] == nil {
			want[a.user] = map[string]string{}
		}
		want[a.user][a.id] = a.word
	}
	if want := len(instances)*perInstance + extra; len(acked) != want {
		t.Errorf("%d turns acknowledged, want %d", len(acked), want)
	}
	var stored []string // codewords of the stored turns
	for _, user := range users {
		turns := dbTurns(t, dbURL, user)
		seen := map[string]int{}
		for i, tr := range turns {
			if tr.seq != int64(i+1) {
				t.Fatalf("%s: turn %d has seq %d: the sequence is not dense", user, i, tr.seq)
			}
			seen[tr.id]++
			w := codewordRE.FindString(tr.body)
			if want[user][tr.id] != w {
				t.Errorf("%s: stored turn %s (%s) was not acknowledged as such", user, tr.id, w)
			}
			stored = append(stored, w)
		}
		for id := range want[user] {
			if seen[id] != 1 {
				t.Errorf("%s: acknowledged turn %s stored %d times, want 1", user, id, seen[id])
			}
		}
	}

	// Every stored turn sent to the updater exactly once, in a prompt of
	// its own scope; no two update calls of one scope at once.
	calls := llm.calls()
	updated := map[string]int{}
	byInstance := map[string]int{}
	byScope := map[string]int{} // "scope key" → update calls
	for _, c := range calls {
		byInstance[c.instance]++
		byScope[c.scope+" "+strings.TrimPrefix(c.instance, "Bearer ")]++
		for _, w := range c.words {
			updated[w]++
		}
	}
	var wrong []string
	for _, w := range stored {
		if updated[w] != 1 {
			wrong = append(wrong, fmt.Sprintf("%s %d times", w, updated[w]))
		}
	}
	if len(wrong) > 0 {
		t.Errorf("%d of %d stored turns were not sent to the updater exactly once: %s", len(wrong), len(stored), strings.Join(wrong[:min(len(wrong), 5)], ", "))
	}
	if len(llm.mixed) > 0 {
		t.Errorf("%d update prompts mix scopes, e.g. %s", len(llm.mixed), llm.mixed[0])
	}
	if o := overlaps(calls); len(o) > 0 {
		t.Errorf("%d times two update calls of one scope ran at once: %s", len(o), strings.Join(o[:min(len(o), 5)], "; "))
	}
	// Without updates of one scope by both instances the check above
	// proves little.
	for _, user := range users {
		for _, inst := range instances {
			if byScope[user[:1]+" "+inst.key] == 0 {
				t.Errorf("instance %s made no update call for %s; want both instances updating every scope", inst.name, user)
			}
		}
	}
	t.Logf("%d update calls (by instance: %v)", len(calls), byInstance)

	// Every saved fact present with its last update, on both instances.
	for u, user := range users {
		for i := range instances {
			var prof struct {
				Facts     []struct{ ID, Content string } `json:"facts"`
				Knowledge []struct{ ID, Content string } `json:"knowledge"`
			}
			if err := callJSON(ctx, newClient(i, u), "get_user_profile", map[string]any{}, &prof); err != nil {
				t.Fatal(err)
			}
			have := map[string]string{}
			for _, f := range append(prof.Facts, prof.Knowledge...) {
				have[f.ID] = f.Content
			}
			for _, f := range facts {
				if f.user == user && have[f.id] != f.content {
					t.Errorf("instance %s, %s: fact %s = %q, want its last update %q", instances[i].name, user, f.id, have[f.id], f.content)
				}
			}
		}
	}
	t.Logf("%d facts saved and updated twice", len(facts))

	for _, inst := range instances {
		if code := inst.proc.stop(t); code != 0 {
			t.Errorf("instance %s exit code %d", inst.name, code)
		}
	}
}
