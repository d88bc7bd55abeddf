package postgres_test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"strings"
	"sync"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/mnemo-mcp/mnemo/memory"
	"github.com/mnemo-mcp/mnemo/memory/postgres"
	"github.com/mnemo-mcp/mnemo/memory/postgres/pgtest"
	"github.com/mnemo-mcp/mnemo/memory/storetest"
)

// Two Stores (two pools, as two instances) on one database.
func twoStores(t *testing.T) (a, b *postgres.Store) {
	url := pgtest.NewDatabase(t)
	return mustOpen(t, url), mustOpen(t, url)
}

func TestTwoStoresAppend(t *testing.T) {
	a, b := twoStores(t)
	storetest.ConcurrentAppend(t, []memory.Store{a, b}, memory.Scope{UserID: "team", AgentName: "bot"}, 4, 50)
}

func TestTwoStoresUpdate(t *testing.T) {
	a, b := twoStores(t)
	storetest.ConcurrentUpdate(t, []memory.Store{a, b}, memory.Scope{UserID: "team"}, 4, 10)
}

// TestTwoStoresSee checks that a Store sees the other's turns, saves and
// deletions without being reopened, including through its document cache.
func TestTwoStoresSee(t *testing.T) {
	a, b := twoStores(t)
	scope := memory.Scope{UserID: "shared"}
	storetest.MustUpdateDocument(t, a, scope, func(d *memory.Document) error {
		d.User.TopOfMind.Summary = "from a"
		return nil
	})
	if got := storetest.MustLoadDocument(t, b, scope); got.User.TopOfMind.Summary != "from a" || got.Revision != 1 {
		t.Fatalf("b loads %q revision %d, want a's save (revision 1)", got.User.TopOfMind.Summary, got.Revision)
	}
	storetest.MustUpdateDocument(t, b, scope, func(d *memory.Document) error {
		d.User.TopOfMind.Summary = "from b"
		return nil
	})
	if got := storetest.MustLoadDocument(t, a, scope); got.User.TopOfMind.Summary != "from b" || got.Revision != 2 {
		t.Fatalf("a loads %q revision %d after b's save, want b's (revision 2)", got.User.TopOfMind.Summary, got.Revision)
	}
	storetest.MustAppendTurns(t, a, scope, storetest.NewTurns("t", 0, 3)...)
	if got := storetest.MustReadTurns(t, b, scope, 0); len(got) != 3 {
		t.Fatalf("b reads %d turns after a appended 3", len(got))
	}
	if _, err := b.DeleteTurns(t.Context(), scope, func(tu memory.Turn) bool { return tu.Seq == 2 }); err != nil {
		t.Fatal(err)
	}
	if got := storetest.MustLoadDocument(t, a, scope); got.TurnLogEpoch != 1 {
		t.Errorf("a sees TurnLogEpoch %d after b deleted a turn, want 1", got.TurnLogEpoch)
	}
	if err := b.DeleteScope(t.Context(), scope); err != nil {
		t.Fatal(err)
	}
	if got := storetest.MustLoadDocument(t, a, scope); got.Revision != 0 {
		t.Errorf("a loads revision %d after b deleted the scope, want 0", got.Revision)
	}
	// Written again, the scope is a new row: a's cache of revision 1 of
	// the old row must not be taken for the new revision 1.
	storetest.MustUpdateDocument(t, b, scope, func(d *memory.Document) error {
		d.User.TopOfMind.Summary = "reborn"
		return nil
	})
	if got := storetest.MustLoadDocument(t, a, scope); got.User.TopOfMind.Summary != "reborn" {
		t.Errorf("a loads %q after the scope was deleted and written again, want \"reborn\"", got.User.TopOfMind.Summary)
	}
}

func TestConcurrentMigrations(t *testing.T) {
	url := pgtest.NewDatabase(t)
	const n = 4
	var wg sync.WaitGroup
	errs := make([]error, n)
	for i := range n {
		wg.Go(func() {
			s, err := postgres.Open(t.Context(), url)
			if err == nil {
				s.Close()
			}
			errs[i] = err
		})
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Errorf("Open #%d error: %v", i, err)
		}
	}
	r, err := postgres.Check(t.Context(), url)
	if err != nil {
		t.Fatalf("Check() error: %v", err)
	}
	if r.Schema != postgres.SchemaVersion() || !r.OK() {
		t.Errorf("Check() = schema %d, missing %v; want schema %d and nothing missing", r.Schema, r.Missing, postgres.SchemaVersion())
	}
	// Opening again is a no-op.
	mustOpen(t, url)
}

func TestNewerSchemaRefused(t *testing.T) {
	srv := pgtest.Shared(t)
	db := srv.CreateDatabase(t)
	url := srv.URL(db, "", "")
	mustOpen(t, url).Close()
	srv.Exec(t, db, "INSERT INTO mnemo_schema_versions (version, name) VALUES (999, '0999_future.sql')")
	_, err := postgres.Open(t.Context(), url)
	if !errors.Is(err, postgres.ErrSchemaTooNew) {
		t.Fatalf("Open(newer schema) error = %v, want ErrSchemaTooNew", err)
	}
	if !strings.Contains(err.Error(), "999") {
		t.Errorf("Open(newer schema) error %q does not name the database's version", err)
	}
	r, err := postgres.Check(t.Context(), url)
	if err != nil {
		t.Fatalf("Check() error: %v", err)
	}
	if r.Schema != 999 || r.OK() {
		t.Errorf("Check() = schema %d, OK %v; want 999, not OK", r.Schema, r.OK())
	}
}

func TestConnectErrorsMasked(t *testing.T) {
	srv := pgtest.Shared(t)
	if !srv.Owned() {
		t.Skip("needs a server started by pgtest (its pg_hba.conf asks " + pgtest.PasswordGroup + " for passwords)")
	}
	const password = "S3cret-pw-sEkr1t"
	db := srv.CreateDatabase(t)
	srv.Exec(t, db, "CREATE ROLE pw_user LOGIN PASSWORD '"+password+"' IN ROLE "+pgtest.PasswordGroup)
	t.Cleanup(func() {
		srv.Exec(t, db, "DROP OWNED BY pw_user")
		srv.Exec(t, "postgres", "DROP ROLE IF EXISTS pw_user")
	})
	srv.Exec(t, db, "GRANT CREATE ON SCHEMA public TO pw_user")

	// The right password works.
	mustOpen(t, srv.URL(db, "pw_user", password)).Close()

	tests := []struct {
		name, url, secret string
		unavailable       bool
	}{
		{"wrong password", srv.URL(db, "pw_user", "Wr0ng-pw-gUess"), "Wr0ng-pw-gUess", false},
		{"missing database", srv.URL("no_such_db", "pw_user", password), password, false},
		{"no server", strings.Replace(srv.URL(db, "pw_user", password), "host=", "host=%2Fnonexistent", 1), password, true},
		{"unparsable", "postgres://pw_user:" + password + "@host:notaport/db", password, false},
		{"keyword form", "host=" + srv.Dir() + " user=pw_user password=Wr0ng-pw-gUess dbname=" + db, "Wr0ng-pw-gUess", false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := postgres.Open(t.Context(), tc.url)
			if err == nil {
				t.Fatalf("Open() succeeded, want an error")
			}
			t.Logf("Open() error: %v", err)
			if strings.Contains(err.Error(), tc.secret) {
				t.Errorf("Open() error shows the password: %v", err)
			}
			if got := errors.Is(err, postgres.ErrUnavailable); got != tc.unavailable {
				t.Errorf("Open() error = %v; wraps ErrUnavailable: %v, want %v", err, got, tc.unavailable)
			}
			_, err = postgres.Check(t.Context(), tc.url)
			if err == nil || strings.Contains(err.Error(), tc.secret) {
				t.Errorf("Check() error = %v, want one without the password", err)
			}
		})
	}
}

func TestMaskURL(t *testing.T) {
	tests := []struct{ in, want string }{
		{"postgres://bob:hunter2@db.example:5432/mnemo?sslmode=require", "postgres://bob:xxxxx@db.example:5432/mnemo?sslmode=require"},
		{"postgresql://bob:p%40ss%2Fw@db/mnemo", "postgresql://bob:xxxxx@db/mnemo"},
		{"postgres://bob@db/mnemo", "postgres://bob@db/mnemo"},
		{"postgres:///mnemo?host=/run/pg&password=hunter2", "postgres:///mnemo?host=%2Frun%2Fpg&password=xxxxx"},
		{"postgres://bob:hunter2@db:bad port/x", "postgres://xxxxx@db:bad port/x"},
		{"host=db user=bob password=hunter2 dbname=mnemo", "host=db user=bob password=xxxxx dbname=mnemo"},
		{"host=db password='hun ter2' dbname=mnemo", "host=db password=xxxxx dbname=mnemo"},
		{"host=db PASSWORD = hunter2", "host=db PASSWORD = xxxxx"},
		{"", ""},
	}
	for _, tc := range tests {
		got := postgres.MaskURL(tc.in)
		if got != tc.want {
			t.Errorf("MaskURL(%q) = %q, want %q", tc.in, got, tc.want)
		}
		if strings.Contains(got, "hunter2") || strings.Contains(got, "hun ter2") || strings.Contains(got, "p@ss") {
			t.Errorf("MaskURL(%q) = %q shows the password", tc.in, got)
		}
	}
}

func TestCheckPrivileges(t *testing.T) {
	srv := pgtest.Shared(t)
	db := srv.CreateDatabase(t)
	url := srv.URL(db, "", "")
	r, err := postgres.Check(t.Context(), url)
	if err != nil {
		t.Fatalf("Check(empty database) error: %v", err)
	}
	if r.Schema != 0 || r.Want != postgres.SchemaVersion() || !r.OK() || r.Server == "" {
		t.Errorf("Check(empty database) = %+v, want schema 0 of %d, OK, a server version", r, postgres.SchemaVersion())
	}
	s := mustOpen(t, url)
	if r, err := s.Check(t.Context()); err != nil || r.Schema != postgres.SchemaVersion() || !r.OK() {
		t.Errorf("Store.Check() = %+v, %v; want the current schema, OK", r, err)
	}

	srv.Exec(t, db, "CREATE ROLE reader LOGIN")
	t.Cleanup(func() {
		srv.Exec(t, db, "DROP OWNED BY reader")
		srv.Exec(t, "postgres", "DROP ROLE IF EXISTS reader")
	})
	srv.Exec(t, db, "GRANT SELECT ON ALL TABLES IN SCHEMA public TO reader")
	r, err = postgres.Check(t.Context(), srv.URL(db, "reader", ""))
	if err != nil {
		t.Fatalf("Check(as reader) error: %v", err)
	}
	if r.OK() || len(r.Missing) != 8 || !strings.Contains(r.Missing[0], "mnemo_scopes") || !strings.Contains(r.Missing[7], "mnemo_keys") {
		t.Errorf("Check(as reader) missing = %q, want the eight tables' write privileges (memory, tokens, keys)", r.Missing)
	}
}

// TestRestart stops PostgreSQL under an open Store: calls fail with
// ErrUnavailable, nothing acknowledged is lost, and once the server is
// back the same Store works again.
func TestRestart(t *testing.T) {
	srv := pgtest.Shared(t)
	if !srv.Owned() {
		t.Skip("needs a server started by pgtest, to restart it")
	}
	s := mustOpen(t, srv.NewDatabase(t))
	ctx := t.Context()
	scope := memory.Scope{UserID: "restart"}
	storetest.MustAppendTurns(t, s, scope, storetest.NewTurns("t", 0, 2)...)
	storetest.MustUpdateDocument(t, s, scope, func(*memory.Document) error { return nil })

	if err := srv.Down(ctx); err != nil {
		t.Fatalf("stop PostgreSQL: %v", err)
	}
	restarted := false
	t.Cleanup(func() {
		if !restarted {
			srv.Up(context.Background())
		}
	})
	calls := map[string]func() error{
		"AppendTurns": func() error { _, err := s.AppendTurns(ctx, scope, storetest.NewTurns("t", 9, 1)); return err },
		"ReadTurns":   func() error { _, err := s.ReadTurns(ctx, scope, 0); return err },
		"LoadDocument": func() error {
			_, err := s.LoadDocument(ctx, memory.Scope{UserID: "other"})
			return err
		},
		"UpdateDocument": func() error {
			_, err := s.UpdateDocument(ctx, scope, func(*memory.Document) error { return nil })
			return err
		},
		"Scopes": func() error { _, err := s.Scopes(ctx); return err },
	}
	for name, call := range calls {
		if err := call(); !errors.Is(err, postgres.ErrUnavailable) {
			t.Errorf("%s while PostgreSQL is down: error = %v, want one wrapping ErrUnavailable", name, err)
		}
	}

	if err := srv.Up(ctx); err != nil {
		t.Fatalf("start PostgreSQL: %v", err)
	}
	restarted = true
	got := storetest.MustAppendTurns(t, s, scope, storetest.NewTurn("t", 2))
	if got[0].Seq != 3 {
		t.Errorf("first append after the restart got seq %d, want 3 (nothing half-written during the outage)", got[0].Seq)
	}
	storetest.CheckSeqs(t, storetest.MustReadTurns(t, s, scope, 0), 1, 3)
	if d := storetest.MustLoadDocument(t, s, scope); d.Revision != 1 {
		t.Errorf("revision after the restart = %d, want 1", d.Revision)
	}
	for name, call := range calls {
		if err := call(); err != nil {
			t.Errorf("%s after the restart: %v", name, err)
		}
	}
}

// TestRestartIdle restarts PostgreSQL while the Store's connections are
// idle: the first call afterwards must not fail on a dead connection.
func TestRestartIdle(t *testing.T) {
	srv := pgtest.Shared(t)
	if !srv.Owned() {
		t.Skip("needs a server started by pgtest, to restart it")
	}
	s := mustOpen(t, srv.NewDatabase(t))
	scope := memory.Scope{UserID: "idle"}
	storetest.MustAppendTurns(t, s, scope, storetest.NewTurn("t", 0))
	if err := srv.Down(t.Context()); err != nil {
		t.Fatal(err)
	}
	if err := srv.Up(t.Context()); err != nil {
		t.Fatal(err)
	}
	storetest.CheckSeqs(t, storetest.MustAppendTurns(t, s, scope, storetest.NewTurn("t", 1)), 2, 2)
	storetest.CheckSeqs(t, storetest.MustReadTurns(t, s, scope, 0), 1, 2)
}

// TestDerivedData checks the optional capabilities round-trip and that
// deleting turns drops the caches, and deleting the scope everything.
func TestDerivedData(t *testing.T) {
	s := mustOpen(t, pgtest.NewDatabase(t))
	ctx := t.Context()
	scope := memory.Scope{UserID: "derived", AgentName: "a"}
	neighbour := memory.Scope{UserID: "derived"}

	fill := func(sc memory.Scope) {
		t.Helper()
		storetest.MustAppendTurns(t, s, sc, storetest.NewTurns("t", 0, 3)...)
		if err := s.SaveMidTerm(ctx, sc, &memory.MidTermState{Version: 1, NextID: 7, Moved: map[string]int64{"t": 2}}); err != nil {
			t.Fatal(err)
		}
		if err := s.SavePageIndex(ctx, sc, []byte("snapshot of "+sc.Key())); err != nil {
			t.Fatal(err)
		}
		vecs := []memory.PageVector{{TurnID: "a", Vector: []float32{1, 2}}, {TurnID: "b", Vector: []float32{3, -4.5}}, {TurnID: "a", Vector: []float32{5, 6}}}
		if err := s.SaveVectors(ctx, sc, "m1", vecs); err != nil {
			t.Fatal(err)
		}
	}
	has := func(sc memory.Scope) (mid, idx bool, vecs int) {
		t.Helper()
		st, err := s.LoadMidTerm(ctx, sc)
		if err != nil {
			t.Fatal(err)
		}
		rc, err := s.OpenPageIndex(ctx, sc)
		if err != nil {
			t.Fatal(err)
		}
		if rc != nil {
			b, _ := io.ReadAll(rc)
			rc.Close()
			if !bytes.Equal(b, []byte("snapshot of "+sc.Key())) {
				t.Errorf("page index of %s = %q", sc.Key(), b)
			}
		}
		v, err := s.LoadVectors(ctx, sc, "m1")
		if err != nil {
			t.Fatal(err)
		}
		return st != nil, rc != nil, len(v)
	}
	fill(scope)
	fill(neighbour)

	if st, err := s.LoadMidTerm(ctx, scope); err != nil || st.NextID != 7 || st.Moved["t"] != 2 {
		t.Errorf("LoadMidTerm() = %+v, %v", st, err)
	}
	v, err := s.LoadVectors(ctx, scope, "m1")
	if err != nil || len(v) != 2 {
		t.Fatalf("LoadVectors() = %v, %v; want 2 vectors (a's second replacing its first)", v, err)
	}
	for _, pv := range v {
		if pv.TurnID == "a" && (pv.Vector[0] != 5 || pv.Vector[1] != 6) || pv.TurnID == "b" && pv.Vector[1] != -4.5 {
			t.Errorf("vector %s = %v", pv.TurnID, pv.Vector)
		}
	}
	if v, _ := s.LoadVectors(ctx, scope, "m2"); len(v) != 0 {
		t.Errorf("LoadVectors(another model) = %v, want none", v)
	}
	if err := s.SaveVectors(ctx, scope, "m2", []memory.PageVector{{TurnID: "c", Vector: []float32{1}}}); err != nil {
		t.Fatal(err)
	}
	if v, _ := s.LoadVectors(ctx, scope, "m1"); len(v) != 0 {
		t.Errorf("after saving under m2, m1 vectors = %v, want none", v)
	}
	if err := s.ReplaceVectors(ctx, scope, "m1", []memory.PageVector{{TurnID: "d", Vector: []float32{2}}}); err != nil {
		t.Fatal(err)
	}
	if v, _ := s.LoadVectors(ctx, scope, "m1"); len(v) != 1 || v[0].TurnID != "d" {
		t.Errorf("after ReplaceVectors, vectors = %v, want only d", v)
	}

	if _, err := s.DeleteTurns(ctx, scope, func(tu memory.Turn) bool { return tu.Seq == 1 }); err != nil {
		t.Fatal(err)
	}
	if mid, idx, n := has(scope); mid || idx || n != 0 {
		t.Errorf("after DeleteTurns: mid-term %v, page index %v, %d vectors; want none", mid, idx, n)
	}
	if mid, idx, n := has(neighbour); !mid || !idx || n != 2 {
		t.Errorf("DeleteTurns of %s touched %s: mid-term %v, page index %v, %d vectors", scope.Key(), neighbour.Key(), mid, idx, n)
	}
	fill(scope)
	if err := s.DeleteScope(ctx, neighbour); err != nil {
		t.Fatal(err)
	}
	for _, sc := range []memory.Scope{scope, neighbour} {
		if mid, idx, n := has(sc); mid || idx || n != 0 {
			t.Errorf("after deleting user %s, %s has mid-term %v, page index %v, %d vectors", neighbour.UserID, sc.Key(), mid, idx, n)
		}
	}
	for _, call := range []func(memory.Scope) error{
		func(sc memory.Scope) error { _, err := s.LoadMidTerm(ctx, sc); return err },
		func(sc memory.Scope) error { return s.SavePageIndex(ctx, sc, nil) },
		func(sc memory.Scope) error { _, err := s.LoadVectors(ctx, sc, "m"); return err },
	} {
		if err := call(memory.Scope{UserID: "../x"}); !errors.Is(err, memory.ErrInvalidInput) {
			t.Errorf("bad scope: error = %v, want ErrInvalidInput", err)
		}
	}
}

func TestWatch(t *testing.T) {
	a, b := twoStores(t)
	ctx, cancel := context.WithCancel(t.Context())
	got := make(chan memory.Scope, 16)
	done := make(chan error, 1)
	go func() { done <- a.Watch(ctx, func(sc memory.Scope) { got <- sc }) }()
	if sc := <-got; sc != (memory.Scope{}) {
		t.Fatalf("first call = %v, want the zero Scope (listening)", sc)
	}
	scope := memory.Scope{UserID: "watched", AgentName: "bot"}
	storetest.MustAppendTurns(t, b, scope, storetest.NewTurn("t", 0))
	if sc := <-got; sc != scope {
		t.Errorf("after b appended: changed(%v), want %v", sc, scope)
	}
	storetest.MustUpdateDocument(t, b, memory.Scope{UserID: "watched"}, func(*memory.Document) error { return nil })
	if sc := <-got; sc != (memory.Scope{UserID: "watched"}) {
		t.Errorf("after b saved a document: changed(%v)", sc)
	}
	if err := b.DeleteScope(t.Context(), memory.Scope{UserID: "watched"}); err != nil {
		t.Fatal(err)
	}
	seen := map[memory.Scope]bool{}
	for len(seen) < 2 {
		seen[<-got] = true
	}
	if !seen[scope] || !seen[memory.Scope{UserID: "watched"}] {
		t.Errorf("after deleting the user: changed %v, want both scopes", seen)
	}
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Errorf("Watch() = %v, want context.Canceled", err)
	}
}

// TestScopeVersion: a scope's version changes with every write of its
// turn log or document, by either store, and only then; a scope deleted
// and written again never shows an earlier version.
func TestScopeVersion(t *testing.T) {
	a, b := twoStores(t)
	scope := memory.Scope{UserID: "versioned"}
	version := func() string {
		t.Helper()
		v, err := a.ScopeVersion(t.Context(), scope)
		if err != nil {
			t.Fatalf("ScopeVersion() = %v", err)
		}
		return v
	}
	if v := version(); v != "" {
		t.Fatalf("version of a scope never written = %q, want empty", v)
	}
	seen := map[string]string{}
	step := func(what string) {
		t.Helper()
		v := version()
		if v == "" {
			t.Fatalf("after %s: empty version", what)
		}
		if earlier, ok := seen[v]; ok {
			t.Fatalf("after %s: version %q, as after %s", what, v, earlier)
		}
		seen[v] = what
	}
	storetest.MustAppendTurns(t, b, scope, storetest.NewTurn("t", 0))
	step("an append")
	if v := version(); seen[v] != "an append" {
		t.Fatalf("a second read without a write gives %q", v)
	}
	storetest.MustUpdateDocument(t, b, scope, func(*memory.Document) error { return nil })
	step("a document saved")
	if err := b.DeleteScope(t.Context(), scope); err != nil {
		t.Fatal(err)
	}
	if v := version(); v != "" {
		t.Fatalf("version of a deleted scope = %q, want empty", v)
	}
	storetest.MustAppendTurns(t, b, scope, storetest.NewTurn("t", 0))
	step("an append after the delete")
	if _, err := a.ScopeVersion(t.Context(), memory.Scope{}); err == nil {
		t.Error("ScopeVersion of the zero scope: no error")
	}
}

// TestSynchronousCommit checks the Store commits synchronously even when
// the database's default says otherwise.
func TestSynchronousCommit(t *testing.T) {
	srv := pgtest.Shared(t)
	db := srv.CreateDatabase(t)
	srv.Exec(t, db, "ALTER DATABASE "+db+" SET synchronous_commit = off")
	url := srv.URL(db, "", "")
	conn, err := pgx.Connect(t.Context(), url)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.Background())
	var plain string
	if err := conn.QueryRow(t.Context(), "SHOW synchronous_commit").Scan(&plain); err != nil || plain != "off" {
		t.Fatalf("plain connection: synchronous_commit = %q, %v; want off (the test's premise)", plain, err)
	}
	s := mustOpen(t, url)
	if got := postgres.SynchronousCommit(t, s); got != "on" {
		t.Errorf("Store connection: synchronous_commit = %q, want on", got)
	}
}

// TestTryLockScope checks the updater lock across two instances: held by
// one, refused to the other, free again once released; other scopes are
// not affected.
func TestTryLockScope(t *testing.T) {
	a, b := twoStores(t)
	ctx := t.Context()
	alice, bob := memory.Scope{UserID: "alice"}, memory.Scope{UserID: "bob"}
	unlock, ok, err := a.TryLockScope(ctx, alice)
	if err != nil || !ok {
		t.Fatalf("a.TryLockScope(alice) = %v, %v; want the lock", ok, err)
	}
	if _, ok, err := b.TryLockScope(ctx, alice); err != nil || ok {
		t.Fatalf("b.TryLockScope(alice) while a holds it = %v, %v; want refused", ok, err)
	}
	unlockBob, ok, err := b.TryLockScope(ctx, bob)
	if err != nil || !ok {
		t.Fatalf("b.TryLockScope(bob) = %v, %v; want the lock (another scope)", ok, err)
	}
	unlockBob()
	unlock()
	unlock() // twice is harmless
	unlockB, ok, err := b.TryLockScope(ctx, alice)
	if err != nil || !ok {
		t.Fatalf("b.TryLockScope(alice) after a released it = %v, %v; want the lock", ok, err)
	}
	unlockB()
	if _, ok, err := a.TryLockScope(ctx, alice); err != nil || !ok {
		t.Fatalf("a.TryLockScope(alice) after b released it = %v, %v; want the lock", ok, err)
	}
}

func TestUnavailableIsMemoryErr(t *testing.T) {
	if !errors.Is(postgres.ErrUnavailable, memory.ErrUnavailable) {
		t.Error("postgres.ErrUnavailable does not match memory.ErrUnavailable")
	}
}
