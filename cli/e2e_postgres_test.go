package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/mnemo-mcp/mnemo/internal/testutil"
	"github.com/mnemo-mcp/mnemo/memory/postgres/pgtest"
)

// End-to-end tests of the storage setting: mnemo processes on one
// PostgreSQL database. They skip under -short and without PostgreSQL (and
// fail without it under CI=true).

// letters spells n in base 26 with a-z, for codewords (the fake model
// finds codeword-[a-z]+).
func letters(n int) string {
	s := ""
	for {
		s = string(rune('a'+n%26)) + s
		n /= 26
		if n == 0 {
			return s
		}
	}
}

// waitFor polls cond until it holds. The test's own time-out (go test
// -timeout) is the only bound: a loaded machine makes the wait longer,
// never a failure.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	for !cond() {
		select {
		case <-t.Context().Done():
			t.Fatalf("%s: not reached before the test ended", what)
		case <-tick.C:
		}
	}
}

// storedTurn is a row of mnemo_turns.
type storedTurn struct {
	seq    int64
	id     string
	thread string
	body   string // the stored bytes: JSON, or the compact form, which holds the text as it is
}

// dbTurns reads a user's turn log straight from the database.
func dbTurns(t *testing.T, url, user string) []storedTurn {
	t.Helper()
	conn, err := pgx.Connect(t.Context(), url)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.Background())
	rows, err := conn.Query(t.Context(), `SELECT t.seq, t.turn_id, t.thread_id, t.body
		FROM mnemo_turns t JOIN mnemo_scopes s ON s.id = t.scope_id
		WHERE s.user_id = $1 AND s.agent_name = '' ORDER BY t.seq`, user)
	if err != nil {
		t.Fatal(err)
	}
	var out []storedTurn
	for rows.Next() {
		var (
			r    storedTurn
			body []byte
		)
		if err := rows.Scan(&r.seq, &r.id, &r.thread, &body); err != nil {
			t.Fatal(err)
		}
		r.body = string(body)
		out = append(out, r)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// profileOf calls get_user_profile.
func profileOf(t *testing.T, srv *mnemoProc, user string) (facts []string, pending int) {
	t.Helper()
	var p struct {
		Facts []struct {
			Content string `json:"content"`
		} `json:"facts"`
		Pending struct {
			Turns int `json:"turns"`
		} `json:"pending"`
	}
	if err := srv.tool(t.Context(), "get_user_profile", map[string]any{"user_id": user}, &p); err != nil {
		t.Fatal(err)
	}
	for _, f := range p.Facts {
		facts = append(facts, f.Content)
	}
	return facts, p.Pending.Turns
}

// TestPostgresTwoInstances runs two mnemo processes on one database:
// 2 × 1,000 concurrent add_memory calls, saves and forgets, one process
// SIGKILLed half way. Every acknowledged turn is stored once with dense
// Seqs, every stored turn reaches the model exactly once — but for the
// batch the killed process had sent when it died, which may be sent again
// by the process that takes up its work (the answer was never saved, and
// there is no knowing whether the model gave one) — no saved fact is
// lost, and a burst of turns received by both processes inside the
// debounce window costs one model call (flush_memory on one of them runs
// it, so that no timer decides, however loaded the machine).
func TestPostgresTwoInstances(t *testing.T) {
	t.Parallel()
	mnemoBinary(t)
	url := pgtest.NewDatabase(t)
	llm := newCodewordLLM(t)
	// updateCalls returns the update prompts (not the tiers' session
	// prompts) so far: the model named by the process that sent each (each
	// process names its own) and the codewords in it.
	type updateCall struct {
		model string
		words []string
	}
	updateCalls := func() []updateCall {
		var out []updateCall
		for _, r := range llm.ChatRequests() {
			if p := r.Prompt(); strings.Contains(p, "Below are the user's current memory and a new conversation") {
				if w := promptCodewords(p); len(w) > 0 {
					out = append(out, updateCall{r.Model, w})
				}
			}
		}
		return out
	}
	updatePrompts := func() [][]string {
		var out [][]string
		for _, c := range updateCalls() {
			out = append(out, c.words)
		}
		return out
	}
	env := []string{"MNEMO_STORAGE=" + url, "MNEMO_LLM_BASE_URL=" + llm.URL, "MNEMO_LLM_API_KEY=test-key",
		"MNEMO_LLM_MODEL=fake", "MNEMO_DEBOUNCE_SECONDS=2", "MNEMO_MAX_FACTS=10000", "MNEMO_LOG_LEVEL=info"}
	ctx := t.Context()
	a := startServer(t, t.TempDir(), env...)
	b := startServer(t, t.TempDir(), append(env[:len(env):len(env)], "MNEMO_LLM_MODEL=fake-killed")...)
	a.initialize(ctx)
	b.initialize(ctx)

	const perInstance = 1000
	const user = "team"
	var (
		mu       sync.Mutex
		acked    = map[string]bool{} // turn ids
		saved    = map[string]bool{} // fact contents
		forgot   = map[string]bool{}
		unsure   = map[string]bool{} // forgotten on the killed instance, reply lost
		ackedB   atomic.Int64
		killOnce sync.Once
	)
	add := func(srv *mnemoProc, who string, i int) error {
		var res addResult
		err := srv.tool(ctx, "add_memory", map[string]any{
			"user_id": user, "thread_id": fmt.Sprintf("t%d", i%10),
			"user_input":     fmt.Sprintf("turn %s%d: my project is codeword-%s", who, i, letters(i)+who),
			"agent_response": "noted",
		}, &res)
		if err != nil {
			return err
		}
		mu.Lock()
		for _, id := range res.TurnIDs {
			acked[id] = true
		}
		mu.Unlock()
		return nil
	}
	save := func(srv *mnemoProc, content string) {
		var res struct {
			Fact struct {
				ID string `json:"id"`
			} `json:"fact"`
		}
		if err := srv.tool(ctx, "save_memory", map[string]any{"user_id": user, "content": content}, &res); err != nil {
			return // b may be gone
		}
		mu.Lock()
		saved[content] = true
		mu.Unlock()
		if strings.HasSuffix(content, "0") {
			var out json.RawMessage
			err := srv.tool(ctx, "forget_memory", map[string]any{"user_id": user, "fact_ids": []string{res.Fact.ID}}, &out)
			mu.Lock()
			if err == nil {
				forgot[content] = true
			} else {
				// Killed while forgetting: the forget may have been
				// committed before the reply was lost.
				unsure[content] = true
			}
			mu.Unlock()
		}
	}

	var wg sync.WaitGroup
	var failedA atomic.Int64
	for w := range 8 {
		wg.Go(func() {
			for i := w; i < perInstance; i += 8 {
				if err := add(a, "a", i); err != nil {
					failedA.Add(1)
					t.Errorf("instance a: %v", err)
				}
				if i%50 == 0 {
					save(a, fmt.Sprintf("Likes fruit number a%d", i))
				}
			}
		})
		wg.Go(func() {
			for i := w; i < perInstance; i += 8 {
				if err := add(b, "b", i); err != nil {
					return // killed
				}
				if ackedB.Add(1) == perInstance/2 {
					killOnce.Do(func() { b.cmd.Process.Kill() })
				}
				if i%50 == 0 {
					save(b, fmt.Sprintf("Likes fruit number b%d", i))
				}
			}
		})
	}
	wg.Wait()
	b.wait()
	if failedA.Load() > 0 {
		t.Fatalf("%d add_memory calls failed on the instance that was not killed", failedA.Load())
	}

	// b restarted: with a, it takes up what the killed b left pending.
	b2 := startServer(t, t.TempDir(), env...)
	b2.initialize(ctx)
	waitFor(t, "pending turns processed", func() bool {
		_, pending := profileOf(t, a, user)
		return pending == 0
	})

	// A burst on a quiet thread, received by both processes. Both are
	// restarted with the longest debounce window, so that no timer fires
	// while the ten calls go out however slow the machine is; flush_memory
	// on one of them then runs the update, once both have seen all ten.
	for name, srv := range map[string]*mnemoProc{"a": a, "b2": b2} {
		if code := srv.stop(); code != 0 {
			t.Errorf("instance %s exit code %d", name, code)
		}
	}
	burstEnv := append(env[:len(env):len(env)], "MNEMO_DEBOUNCE_SECONDS=300")
	a2 := startServer(t, t.TempDir(), burstEnv...)
	b3 := startServer(t, t.TempDir(), burstEnv...)
	a2.initialize(ctx)
	b3.initialize(ctx)
	batchesBefore := len(updatePrompts())
	for i := range 5 {
		for _, p := range []struct {
			srv *mnemoProc
			who string
		}{{a2, "x"}, {b3, "y"}} {
			var res addResult
			if err := p.srv.tool(ctx, "add_memory", map[string]any{"user_id": user, "thread_id": "burst",
				"user_input": fmt.Sprintf("burst codeword-burst%s%s", p.who, letters(i)), "agent_response": "ok"}, &res); err != nil {
				t.Fatal(err)
			}
			mu.Lock()
			acked[res.TurnIDs[0]] = true
			mu.Unlock()
		}
	}
	waitFor(t, "burst seen by both instances", func() bool {
		_, pa := profileOf(t, a2, user)
		_, pb := profileOf(t, b3, user)
		return pa == 10 && pb == 10
	})
	var flushed json.RawMessage
	if err := a2.tool(ctx, "flush_memory", map[string]any{"user_id": user, "thread_id": "burst"}, &flushed); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "burst processed", func() bool {
		_, pa := profileOf(t, a2, user)
		_, pb := profileOf(t, b3, user)
		return pa == 0 && pb == 0
	})

	// Every acknowledged turn stored once, Seqs dense.
	turns := dbTurns(t, url, user)
	ids := map[string]int{}
	for i, tr := range turns {
		if tr.seq != int64(i+1) {
			t.Fatalf("turn %d has seq %d: the sequence is not dense", i, tr.seq)
		}
		ids[tr.id]++
	}
	for id := range acked {
		if ids[id] != 1 {
			t.Errorf("acknowledged turn %s stored %d times, want 1", id, ids[id])
		}
	}
	if len(acked) < perInstance+perInstance/2 {
		t.Errorf("%d turns acknowledged, want at least %d", len(acked), perInstance+perInstance/2)
	}
	// Every stored turn sent to the model exactly once, but for the last
	// batch the killed process sent, which may have been sent once more.
	updates := map[string]int{}
	inFlight := map[string]bool{}
	for _, c := range updateCalls() {
		for _, w := range c.words {
			updates[w]++
		}
		if c.model == "fake-killed" {
			clear(inFlight)
			for _, w := range c.words {
				inFlight[w] = true
			}
		}
	}
	cw := regexp.MustCompile(`codeword-[a-z]+`)
	resent := 0
	for _, tr := range turns {
		w := cw.FindString(tr.body)
		switch n := updates[w]; {
		case n == 1:
		case n == 2 && inFlight[w]:
			resent++
		default:
			t.Errorf("turn %s (%s) was sent to the updater %d times, want 1 (in the killed process's last batch: %v)", tr.id, w, n, inFlight[w])
		}
	}
	if resent > 0 {
		t.Logf("%d turns of the batch the killed process had sent were sent again by the process that took up its work", resent)
	}
	// The burst: one model call.
	burstCalls := 0
	for _, b := range updatePrompts()[batchesBefore:] {
		if strings.HasPrefix(b[0], "codeword-burst") {
			burstCalls++
		}
	}
	if burstCalls != 1 {
		t.Errorf("the burst of 10 turns on two instances cost %d model calls, want 1", burstCalls)
	}
	// No saved fact lost, forgotten ones gone; both instances agree.
	for _, srv := range []*mnemoProc{a2, b3} {
		facts, _ := profileOf(t, srv, user)
		have := map[string]bool{}
		for _, f := range facts {
			have[f] = true
		}
		for c := range saved {
			if have[c] == forgot[c] && !unsure[c] {
				t.Errorf("fact %q: present %v, forgotten %v", c, have[c], forgot[c])
			}
		}
	}
	if code := a2.stop(); code != 0 {
		t.Errorf("instance a2 exit code %d", code)
	}
	if code := b3.stop(); code != 0 {
		t.Errorf("instance b3 exit code %d", code)
	}
}

// TestPostgresRestart restarts PostgreSQL under a serving mnemo: calls
// during the outage get a "storage unavailable" tool error and store
// nothing, and calls succeed again afterwards without restarting mnemo.
func TestPostgresRestart(t *testing.T) {
	mnemoBinary(t)
	pgtest.Shared(t) // skips, or fails under CI, without PostgreSQL
	// A private server: the shared one may be an external one the tests
	// must not stop.
	t.Setenv(pgtest.EnvURL, "")
	srv, err := pgtest.Start(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Stop() })
	url := srv.NewDatabase(t)
	ctx := t.Context()
	m := startServer(t, t.TempDir(), "MNEMO_STORAGE="+url)
	m.initialize(ctx)
	addOne := func(text string) (*mcpToolResult, error) {
		return m.rawTool(ctx, "add_memory", map[string]any{"user_input": text, "agent_response": "ok"})
	}
	if res, err := addOne("before the restart"); err != nil || res.IsError {
		t.Fatalf("add before the restart = %+v, %v", res, err)
	}
	if err := srv.Down(ctx); err != nil {
		t.Fatal(err)
	}
	res, err := addOne("during the outage")
	if err != nil {
		t.Fatal(err)
	}
	if !res.IsError || !strings.HasPrefix(res.text(), "storage unavailable") || !strings.Contains(res.text(), "try again") {
		t.Errorf("add during the outage = %q (isError %v), want a storage unavailable error", res.text(), res.IsError)
	}
	if err := srv.Up(ctx); err != nil {
		t.Fatal(err)
	}
	if res, err := addOne("after the restart"); err != nil || res.IsError {
		t.Fatalf("add after the restart = %q, %v; want it stored", res.text(), err)
	}
	var got retrieveResult
	if err := m.tool(ctx, "retrieve_memory", map[string]any{"query": "restart outage"}, &got); err != nil {
		t.Fatal(err)
	}
	if got.StoredTurns != 2 {
		t.Errorf("stored turns = %d, want 2 (nothing half-written during the outage)", got.StoredTurns)
	}
	for _, p := range got.Pages {
		if strings.Contains(p.User, "outage") {
			t.Errorf("the turn refused during the outage was stored: %+v", p)
		}
	}
	if code := m.stop(); code != 0 {
		t.Errorf("exit code %d", code)
	}
}

// mcpToolResult is a tool result, error or not.
type mcpToolResult struct {
	IsError bool `json:"isError"`
	Content []struct {
		Text string `json:"text"`
	} `json:"content"`
}

func (r *mcpToolResult) text() string {
	if r == nil || len(r.Content) == 0 {
		return ""
	}
	return r.Content[0].Text
}

// rawTool calls a tool and returns its result, error results included.
func (s *mnemoProc) rawTool(ctx context.Context, name string, args map[string]any) (*mcpToolResult, error) {
	raw, err := s.call(ctx, "tools/call", map[string]any{"name": name, "arguments": args})
	if err != nil {
		return nil, err
	}
	var res mcpToolResult
	return &res, json.Unmarshal(raw, &res)
}

// TestPostgresBadStorage starts mnemo on storage it cannot use: the
// start-up error names the setting and never shows the password.
func TestPostgresBadStorage(t *testing.T) {
	t.Parallel()
	bin := mnemoBinary(t)
	srv := pgtest.Shared(t)
	if !srv.Owned() {
		t.Skip("needs a server started by pgtest (its pg_hba.conf asks " + pgtest.PasswordGroup + " for passwords)")
	}
	const password = "S3cret-pw-e2e"
	db := srv.CreateDatabase(t)
	srv.Exec(t, db, "CREATE ROLE e2e_user LOGIN PASSWORD '"+password+"' IN ROLE "+pgtest.PasswordGroup)
	t.Cleanup(func() {
		srv.Exec(t, db, "DROP OWNED BY e2e_user")
		srv.Exec(t, "postgres", "DROP ROLE IF EXISTS e2e_user")
	})
	srv.Exec(t, db, "GRANT CREATE ON SCHEMA public TO e2e_user")
	newer := srv.CreateDatabase(t)
	srv.Exec(t, newer, "CREATE TABLE mnemo_schema_versions (version integer PRIMARY KEY, name text NOT NULL, applied_at timestamptz NOT NULL DEFAULT now())")
	srv.Exec(t, newer, "INSERT INTO mnemo_schema_versions (version, name) VALUES (999, '0999_future.sql')")
	srv.Exec(t, newer, "GRANT ALL ON ALL TABLES IN SCHEMA public TO e2e_user")
	srv.Exec(t, newer, "GRANT CREATE ON SCHEMA public TO e2e_user")

	tests := []struct {
		name, url, want string
	}{
		{"not a postgres URL", "mysql://e2e_user:" + password + "@db/mnemo", "is not a PostgreSQL URL"},
		{"no server", strings.Replace(srv.URL(db, "e2e_user", password), "host=", "host=%2Fnonexistent", 1), "check that PostgreSQL is running"},
		{"wrong password", srv.URL(db, "e2e_user", password+"x"), "check the user name and password"},
		{"missing database", srv.URL("no_such_db", "e2e_user", password), "create the database first"},
		{"newer schema", srv.URL(newer, "e2e_user", password), "upgrade mnemo"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			cmd := exec.Command(bin, "serve")
			testutil.DieWithTest(cmd)
			cmd.Env = []string{"MNEMO_STORAGE=" + tc.url, "HOME=" + t.TempDir()}
			var stderr bytes.Buffer
			cmd.Stderr = &stderr
			cmd.Stdin = strings.NewReader("")
			err := cmd.Run()
			out := stderr.String()
			if err == nil {
				t.Fatalf("mnemo serve started on bad storage; stderr:\n%s", out)
			}
			if !strings.Contains(out, "setting storage from environment variable MNEMO_STORAGE") || !strings.Contains(out, tc.want) {
				t.Errorf("stderr = %s\nwant the setting named and %q", out, tc.want)
			}
			if strings.Contains(out, password) {
				t.Errorf("stderr shows the password:\n%s", out)
			}
			doctor := exec.Command(bin, "doctor")
			doctor.Env = cmd.Env
			dout, _ := doctor.CombinedOutput()
			if strings.Contains(string(dout), password) || !strings.Contains(string(dout), "FAIL") {
				t.Errorf("doctor output shows the password or no failure:\n%s", dout)
			}
		})
	}
}

// TestPostgresMigration moves a data directory's memory into PostgreSQL
// with export and import, and back into a new directory: nothing changes
// on the way.
func TestPostgresMigration(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("end-to-end test")
	}
	url := pgtest.NewDatabase(t)
	dir := t.TempDir()
	seedRich(t, dir)
	// exported returns the export of every scope, and the same with its
	// time stamp and generator left out, for comparing.
	exported := func(e env) (string, string) {
		t.Helper()
		path := filepath.Join(t.TempDir(), "export.json")
		if code, _, errOut := runEnv(t, e, "export", "--all", "--out", path); code != exitOK {
			t.Fatalf("export = %d\n%s", code, errOut)
		}
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		return string(data), exportedAt.ReplaceAllString(string(data), "")
	}
	fromFiles, wantNorm := exported(dataEnv(dir))
	importFrom := func(e env, text string) {
		t.Helper()
		path := filepath.Join(t.TempDir(), "in.json")
		if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
		if code, _, errOut := runEnv(t, e, "import", path); code != exitOK {
			t.Fatalf("import = %d\n%s", code, errOut)
		}
	}
	pg := env{"MNEMO_STORAGE": url}
	importFrom(pg, fromFiles)
	fromPG, pgNorm := exported(pg)
	if pgNorm != wantNorm {
		t.Errorf("export from PostgreSQL differs from the data directory's:\n--- postgres:\n%s\n--- files:\n%s", pgNorm, wantNorm)
	}
	back := t.TempDir()
	importFrom(dataEnv(back), fromPG)
	if _, again := exported(dataEnv(back)); again != wantNorm {
		t.Errorf("export after the round trip differs:\n%s", again)
	}
	code, out, _ := runEnv(t, pg, "show", "--user", "ana")
	if code != exitOK || !strings.Contains(out, "ana") {
		t.Errorf("show on PostgreSQL = %d\n%s", code, out)
	}
}
