package cli

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/mnemo-mcp/mnemo/internal/testutil"
	"github.com/mnemo-mcp/mnemo/memory"
	"github.com/mnemo-mcp/mnemo/memory/postgres/pgtest"
)

// trustStore is where a trust test's servers keep memory: a data
// directory, or a PostgreSQL database as well.
type trustStore struct {
	name string
	dir  string
	url  string // empty for the file store
}

// env is the environment that points mnemo at the store.
func (s trustStore) env() []string {
	if s.url == "" {
		return nil
	}
	return []string{"MNEMO_STORAGE=" + s.url}
}

// holding lists where the store holds any of words: files of the data
// directory (case-insensitive), or rows of the PostgreSQL tables (as
// written).
func (s trustStore) holding(t *testing.T, words ...string) []string {
	t.Helper()
	hits := testutil.GrepFiles(t, s.dir, words...)
	if s.url == "" {
		return hits
	}
	conn, err := pgx.Connect(t.Context(), s.url)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.Background())
	for _, tc := range []struct{ table, col string }{
		{"mnemo_scopes", "document"}, {"mnemo_versions", "document"}, {"mnemo_turns", "body"},
		{"mnemo_midterm", "state"}, {"mnemo_page_index", "snapshot"},
	} {
		for _, w := range words {
			var n int
			q := fmt.Sprintf(`SELECT count(*) FROM %s WHERE position($1::bytea IN %s) > 0`, tc.table, tc.col)
			if err := conn.QueryRow(t.Context(), q, []byte(w)).Scan(&n); err != nil {
				t.Fatal(err)
			}
			if n > 0 {
				hits = append(hits, fmt.Sprintf("%d rows of %s (%q)", n, tc.table, w))
			}
		}
	}
	return hits
}

// trustStores are the file store and, unless -short or PostgreSQL is
// missing (a failure under CI=true), a PostgreSQL database.
func trustStores(t *testing.T) []func(t *testing.T) trustStore {
	return []func(t *testing.T) trustStore{
		func(t *testing.T) trustStore { return trustStore{name: "files", dir: t.TempDir()} },
		func(t *testing.T) trustStore {
			if testing.Short() {
				t.Skip("PostgreSQL end-to-end tests skip under -short")
			}
			return trustStore{name: "postgres", dir: t.TempDir(), url: pgtest.NewDatabase(t)}
		},
	}
}

// TestE2EForgetScrubsHistoryAndVersions (issue 24, high 1 and 2): a fact
// is saved, reworded by update_memory, stated again in other words through
// add_memory's facts (merged into it), and another fact saved; after
// forget_memory of the first, no table or file of either store holds any
// of its wordings — not the current document, not its history (reasons
// included), not a kept version — memory_history quotes none of them, and
// restoring each kept version with mnemo rollback brings none back.
func TestE2EForgetScrubsHistoryAndVersions(t *testing.T) {
	t.Parallel()
	mnemoBinary(t)
	const word = "zanzibar"
	for i, open := range trustStores(t) {
		t.Run([]string{"files", "postgres"}[i], func(t *testing.T) {
			st := open(t)
			ctx := t.Context()
			srv := startServer(t, st.dir, st.env()...)
			srv.initialize(ctx)
			var saved struct{ Fact memory.Fact }
			// A version from before the fact, for mnemo rollback to restore.
			if err := srv.tool(ctx, "save_memory", map[string]any{"user_id": "bob", "content": "Drinks black coffee", "category": "preference"}, &saved); err != nil {
				t.Fatal(err)
			}
			if err := srv.tool(ctx, "save_memory", map[string]any{"user_id": "bob",
				"content": "Keeps the spare key under the " + word + " doormat", "category": "context"}, &saved); err != nil {
				t.Fatal(err)
			}
			id := saved.Fact.ID
			if err := srv.tool(ctx, "update_memory", map[string]any{"user_id": "bob", "id": id,
				"content": "Keeps the spare house key under the " + word + " doormat"}, &saved); err != nil {
				t.Fatal(err)
			}
			var added struct {
				Facts []struct {
					Status string `json:"status"`
					FactID string `json:"fact_id"`
				} `json:"facts"`
			}
			if err := srv.tool(ctx, "add_memory", map[string]any{"user_id": "bob", "thread_id": "porch",
				"user_input": "Where was it again?", "agent_response": "By the back door.",
				"facts": []map[string]any{{"content": "Spare house key kept under " + word + " doormat", "category": "context"}}}, &added); err != nil {
				t.Fatal(err)
			}
			if len(added.Facts) != 1 || added.Facts[0].FactID != id {
				t.Fatalf("add_memory facts = %+v, want the reworded fact merged into %s", added.Facts, id)
			}
			if err := srv.tool(ctx, "save_memory", map[string]any{"user_id": "bob", "content": "Likes tuna", "category": "preference"}, &saved); err != nil {
				t.Fatal(err)
			}
			if hits := st.holding(t, word); len(hits) == 0 {
				t.Fatalf("before the forget the store holds no %q; the test needs it", word)
			}
			var forgot memory.ForgetResult
			if err := srv.tool(ctx, "forget_memory", map[string]any{"user_id": "bob", "fact_ids": []string{id}}, &forgot); err != nil {
				t.Fatal(err)
			}
			if forgot.VersionsScrubbed == 0 {
				t.Errorf("forget_memory scrubbed no kept version; the versions from after the save hold the fact")
			}
			if hits := st.holding(t, word); len(hits) > 0 {
				t.Errorf("after the forget the store holds %q in %v", word, hits)
			}
			var hist struct{ Events []memory.FactEvent }
			if err := srv.tool(ctx, "memory_history", map[string]any{"user_id": "bob"}, &hist); err != nil {
				t.Fatal(err)
			}
			for _, e := range hist.Events {
				if strings.Contains(strings.ToLower(e.Reason+e.Content), word) {
					t.Errorf("memory_history event %+v quotes the forgotten fact", e)
				}
			}
			if code := srv.stop(); code != 0 {
				t.Errorf("server exit code = %d", code)
			}

			rollback := func(args ...string) string {
				t.Helper()
				cmd := mnemoCmd(t, st.dir, st.env(), append([]string{"rollback", "--user", "bob"}, args...)...)
				out, err := cmd.CombinedOutput()
				if err != nil && !strings.Contains(string(out), "not kept") {
					t.Fatalf("mnemo rollback %v: %v\n%s", args, err, out)
				}
				return string(out)
			}
			list := rollback("--list")
			revs := regexp.MustCompile(`(?m)^(\d+)\s`).FindAllStringSubmatch(list, -1)
			if len(revs) == 0 {
				t.Fatalf("mnemo rollback --list kept no versions; the test needs some:\n%s", list)
			}
			for _, m := range revs {
				rollback("--to", m[1])
				if hits := st.holding(t, word); len(hits) > 0 {
					t.Errorf("after mnemo rollback --to %s the store holds %q in %v", m[1], word, hits)
				}
			}
		})
	}
}

// TestE2ERedactionRule (issue 24, low 7, 8 and 9) goes through mnemo
// serve over stdio: an id that is a credential (user_id, thread_id,
// idempotency_key) is refused with a message that names the kind and not
// the id, and nothing is stored under it; Basic credentials in a turn are
// redacted; and ordinary phrases that share a key's prefix are stored as
// written.
func TestE2ERedactionRule(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	ctx := t.Context()
	srv := startServer(t, dir)
	srv.initialize(ctx)
	const (
		ghToken = "ghp_0123456789abcdefghijklmnopqrstuvwxyzAB"
		skKey   = "sk-proj-abcDEF1234567890abcdefGHIJ"
		awsKey  = "AKIAIOSFODNN7EXAMPLE"
	)
	turn := func(extra map[string]any) map[string]any {
		args := map[string]any{"user_input": "Where do I keep the spare key?", "agent_response": "Under the mat."}
		for k, v := range extra {
			args[k] = v
		}
		return args
	}
	for _, tc := range []struct {
		field string
		args  map[string]any
	}{
		{"user_id", turn(map[string]any{"user_id": ghToken})},
		{"thread_id", turn(map[string]any{"thread_id": skKey})},
		{"idempotency_key", turn(map[string]any{"idempotency_key": awsKey})},
	} {
		var out map[string]any
		err := srv.tool(ctx, "add_memory", tc.args, &out)
		if err == nil || !strings.Contains(err.Error(), tc.field) || !strings.Contains(err.Error(), "looks like a credential") {
			t.Errorf("add_memory with a credential as %s: %v, want a tool error saying it looks like a credential", tc.field, err)
		}
		for _, secret := range []string{ghToken, skKey, awsKey} {
			if err != nil && strings.Contains(err.Error(), secret) {
				t.Errorf("the refusal of %s quotes the credential: %v", tc.field, err)
			}
		}
	}
	prose := []string{"sk-learn-compatible-estimator", "xoxo-see-you-tomorrow", "The secret: extra-virgin-olive-oil",
		"my secret = always-preheat-the-oven", "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", "access_token = will-be-issued-tomorrow-morning",
		// A snake_case name that begins like a mnemo token (issue 41, low 10).
		"mnemo_redaction_false_positive_measurement"}
	basic := "YWxpY2U6czNjcjN0LXB3" // alice:s3cr3t-pw
	var added struct {
		TurnIDs []string `json:"turn_ids"`
	}
	if err := srv.tool(ctx, "add_memory", turn(map[string]any{"user_id": "bob", "thread_id": "notes",
		"user_input": strings.Join(prose, "; ") + ". The API wants Authorization: Basic " + basic}), &added); err != nil {
		t.Fatal(err)
	}
	if code := srv.stop(); code != 0 {
		t.Errorf("exit code %d", code)
	}
	if hits := testutil.GrepFiles(t, dir, strings.ToLower(ghToken), strings.ToLower(skKey), strings.ToLower(awsKey), strings.ToLower(basic)); len(hits) > 0 {
		t.Errorf("a credential is stored in %v", hits)
	}
	if _, err := os.Lstat(filepath.Join(dir, "users", ghToken)); err == nil {
		t.Errorf("a directory is named after the credential given as user_id")
	}
	for _, p := range prose {
		if hits := testutil.GrepFiles(t, dir, strings.ToLower(p)); len(hits) == 0 {
			t.Errorf("%q was not stored as written (redacted as a secret?)", p)
		}
	}
}

// TestPostgresRetryAcrossInstances (issue 24, low 11): the same exchange
// with the same idempotency_key sent at once to two mnemo processes on
// one database — a client retrying on another instance after an answer
// it never got — is stored once, and both answer with the stored turn.
func TestPostgresRetryAcrossInstances(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("PostgreSQL end-to-end tests skip under -short")
	}
	mnemoBinary(t)
	url := pgtest.NewDatabase(t)
	ctx := t.Context()
	a := startServer(t, t.TempDir(), "MNEMO_STORAGE="+url)
	b := startServer(t, t.TempDir(), "MNEMO_STORAGE="+url)
	a.initialize(ctx)
	b.initialize(ctx)
	const n = 30
	type answer struct {
		ids []string
		err error
	}
	answers := make([][2]answer, n)
	var wg sync.WaitGroup
	for i := range n {
		for j, srv := range []*mnemoProc{a, b} {
			wg.Go(func() {
				var res struct {
					TurnIDs []string `json:"turn_ids"`
				}
				err := srv.tool(ctx, "add_memory", map[string]any{"user_id": "rita", "thread_id": "retry",
					"idempotency_key": fmt.Sprintf("key-%02d", i),
					"user_input":      fmt.Sprintf("Exchange number %d", i), "agent_response": "Noted."}, &res)
				answers[i][j] = answer{res.TurnIDs, err}
			})
		}
	}
	wg.Wait()
	for i, pair := range answers {
		if pair[0].err != nil || pair[1].err != nil {
			t.Fatalf("exchange %d: %v / %v", i, pair[0].err, pair[1].err)
		}
		if len(pair[0].ids) != 1 || fmt.Sprint(pair[0].ids) != fmt.Sprint(pair[1].ids) {
			t.Errorf("exchange %d answered %v by one instance and %v by the other, want the same one turn", i, pair[0].ids, pair[1].ids)
		}
	}
	counts := map[string]int{}
	for _, r := range dbTurns(t, url, "rita") {
		counts[r.id]++
	}
	if len(counts) != n {
		t.Errorf("%d turns stored for %d exchanges sent twice each, want %d", len(counts), n, n)
	}
}
