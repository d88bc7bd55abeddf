// Package pgtest starts a real PostgreSQL (15 or later) for tests: initdb
// into a temp directory, then postgres as a child of the test binary,
// listening only on a Unix socket in it (no TCP port), one server per test
// binary, started by the first test that needs it, and a fresh database
// per test. The server dies with the test binary, even when a go test
// time-out ends it with a panic that runs no cleanup.
//
//	func TestMain(m *testing.M) { os.Exit(pgtest.Main(m)) }
//
//	func TestX(t *testing.T) {
//		url := pgtest.NewDatabase(t) // skips, or fails under CI=true, without PostgreSQL
//		...
//	}
//
// The binaries are looked for by FindBinDir: on PATH, through pg_config
// --bindir, in Debian's /usr/lib/postgresql/*/bin and in Homebrew's
// locations. Run as root, the server runs as the postgres
// user (PostgreSQL refuses root). With MNEMO_TEST_POSTGRES_URL set (a
// postgres:// URL of a user allowed to create databases) that server is
// used instead, and nothing is started.
package pgtest

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"net/url"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/mnemo-mcp/mnemo/internal/testutil"
)

// EnvURL names the variable that points the tests at an existing server.
const EnvURL = "MNEMO_TEST_POSTGRES_URL"

// Superuser is the role initdb creates on a server the helper starts; it
// connects without a password over the socket.
const Superuser = "mnemo"

// PasswordGroup is a role on a started server whose members must log in
// with their password (scram-sha-256) even over the socket; everyone else
// is trusted. Tests of authentication failures create their roles in it.
const PasswordGroup = "mnemo_password_users"

// Server is a PostgreSQL server for tests.
type Server struct {
	bin   string     // directory of initdb and postgres
	dir   string     // data/, the socket and the log; "" for an external server
	admin *url.URL   // URL of the maintenance database
	owner *user.User // the postgres user the server runs as, when root

	mu sync.Mutex
	n  int // databases created

	proc   *os.Process   // the running server, nil when down
	exited chan struct{} // closed when proc has exited
}

// Start starts a new server in a temp directory, or returns the server
// at $MNEMO_TEST_POSTGRES_URL. The caller must Stop it.
func Start(ctx context.Context) (*Server, error) {
	if raw := os.Getenv(EnvURL); raw != "" {
		u, err := url.Parse(raw)
		if err != nil || (u.Scheme != "postgres" && u.Scheme != "postgresql") {
			return nil, fmt.Errorf("%s is not a postgres:// URL", EnvURL)
		}
		s := &Server{admin: u}
		if err := s.ping(ctx); err != nil {
			return nil, fmt.Errorf("server at %s: %w", EnvURL, err)
		}
		return s, nil
	}
	bin, err := FindBinDir(ctx)
	if err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp("", "mnemo-pg-")
	if err != nil {
		return nil, err
	}
	s := &Server{bin: bin, dir: dir}
	if os.Geteuid() == 0 {
		if err := s.handToPostgres(); err != nil {
			os.RemoveAll(dir)
			return nil, err
		}
	}
	s.admin = &url.URL{Scheme: "postgres", User: url.User(Superuser), Path: "/postgres",
		RawQuery: url.Values{"host": {dir}, "sslmode": {"disable"}}.Encode()}
	if err := s.initdb(ctx); err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	if err := s.Up(ctx); err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	if err := s.exec(ctx, "postgres", "CREATE ROLE "+PasswordGroup+" NOLOGIN"); err != nil {
		s.Stop()
		return nil, err
	}
	return s, nil
}

// handToPostgres makes the directory the postgres user's and runs the
// server's commands as that user.
func (s *Server) handToPostgres() error {
	u, err := user.Lookup("postgres")
	if err != nil {
		return fmt.Errorf("running as root, and there is no postgres user to run PostgreSQL as: %w", err)
	}
	uid, _ := strconv.Atoi(u.Uid)
	gid, _ := strconv.Atoi(u.Gid)
	if err := os.Chown(s.dir, uid, gid); err != nil {
		return err
	}
	s.owner = u
	return nil
}

func (s *Server) command(ctx context.Context, bin string, args ...string) *exec.Cmd {
	cmd := exec.CommandContext(ctx, filepath.Join(s.bin, bin), args...)
	cmd.Dir = s.dir
	if s.owner != nil {
		runAs(cmd, s.owner)
	}
	return cmd
}

func (s *Server) run(ctx context.Context, bin string, args ...string) error {
	out, err := s.command(ctx, bin, args...).CombinedOutput()
	if err != nil {
		return fmt.Errorf("%s %s: %w\n%s", bin, strings.Join(args, " "), err, out)
	}
	return nil
}

func (s *Server) initdb(ctx context.Context) error {
	data := filepath.Join(s.dir, "data")
	if err := s.run(ctx, "initdb", "-D", data, "-U", Superuser, "--auth=trust", "-E", "UTF8", "--locale=C", "--no-sync"); err != nil {
		return err
	}
	hba := "# written by pgtest\nlocal all +" + PasswordGroup + " scram-sha-256\nlocal all all trust\n"
	if err := os.WriteFile(filepath.Join(data, "pg_hba.conf"), []byte(hba), 0o600); err != nil {
		return err
	}
	if s.owner != nil {
		uid, _ := strconv.Atoi(s.owner.Uid)
		gid, _ := strconv.Atoi(s.owner.Gid)
		return os.Chown(filepath.Join(data, "pg_hba.conf"), uid, gid)
	}
	return nil
}

// Owned reports whether the helper started the server (and can stop it).
func (s *Server) Owned() bool { return s.dir != "" }

// Dir is the server's directory (data/, its socket, log), "" for an
// external server.
func (s *Server) Dir() string { return s.dir }

// Up starts the stopped server and waits until it accepts connections,
// for as long as ctx allows.
//
// postgres runs as a child of the test binary, not daemonised by pg_ctl,
// so that the kernel kills it when the binary dies (testutil.DieWithTest):
// a go test time-out ends the binary with a panic that runs no cleanup,
// and a server left behind would load the machine for the runs after it.
// The parent-death signal is tied to the thread that started the child,
// and the Go runtime ends a thread when a goroutine locked to it returns:
// the child is started and waited for by a goroutine that holds its own
// thread for the child's whole life.
func (s *Server) Up(ctx context.Context) error {
	if !s.Owned() {
		return errors.New("an external server is not started by the tests")
	}
	s.mu.Lock()
	running := s.proc != nil
	s.mu.Unlock()
	if running {
		return errors.New("the server is already up")
	}
	log, err := os.OpenFile(filepath.Join(s.dir, "log"), os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o644)
	if err != nil {
		return err
	}
	defer log.Close()
	// Not CommandContext: the server outlives the context of the test
	// that starts it; Down and the binary's death end it.
	cmd := exec.Command(filepath.Join(s.bin, "postgres"), "-D", filepath.Join(s.dir, "data"),
		"-c", "listen_addresses=", "-c", "unix_socket_directories="+s.dir, "-c", "max_connections=300")
	cmd.Dir = s.dir
	cmd.Stdout, cmd.Stderr = log, log
	if s.owner != nil {
		runAs(cmd, s.owner)
	}
	testutil.DieWithTest(cmd)
	started := make(chan error, 1)
	exited := make(chan struct{})
	go func() {
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
		if err := cmd.Start(); err != nil {
			started <- err
			return
		}
		started <- nil
		cmd.Wait()
		close(exited)
	}()
	if err := <-started; err != nil {
		return fmt.Errorf("start postgres: %w", err)
	}
	s.mu.Lock()
	s.proc, s.exited = cmd.Process, exited
	s.mu.Unlock()
	// Ready when it accepts a connection; a server that exits instead
	// (a bad option, a port in use) says why in its log.
	for {
		if err := s.ping(ctx); err == nil {
			return nil
		}
		select {
		case <-exited:
			s.mu.Lock()
			s.proc = nil
			s.mu.Unlock()
			tail, _ := os.ReadFile(filepath.Join(s.dir, "log"))
			return fmt.Errorf("postgres exited while starting:\n%s", lastLines(string(tail), 20))
		case <-ctx.Done():
			return fmt.Errorf("waiting for postgres to accept connections: %w", ctx.Err())
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// Down stops the server (fast shutdown: sessions are ended) and waits
// until it is gone, for as long as ctx allows. Up starts it again with
// the same data.
func (s *Server) Down(ctx context.Context) error {
	if !s.Owned() {
		return errors.New("an external server is not stopped by the tests")
	}
	s.mu.Lock()
	proc, exited := s.proc, s.exited
	s.mu.Unlock()
	if proc == nil {
		return nil
	}
	// SIGINT is PostgreSQL's fast shutdown.
	if err := proc.Signal(os.Interrupt); err != nil {
		select {
		case <-exited:
		default:
			return fmt.Errorf("stop postgres: %w", err)
		}
	}
	select {
	case <-exited:
	case <-ctx.Done():
		return fmt.Errorf("waiting for postgres to stop: %w", ctx.Err())
	}
	s.mu.Lock()
	s.proc = nil
	s.mu.Unlock()
	return nil
}

// lastLines returns the last n lines of text.
func lastLines(text string, n int) string {
	lines := strings.Split(strings.TrimRight(text, "\n"), "\n")
	return strings.Join(lines[max(0, len(lines)-n):], "\n")
}

// Stop stops a started server and removes its directory; an external
// server is left alone.
func (s *Server) Stop() error {
	if !s.Owned() {
		return nil
	}
	err := s.Down(context.Background())
	return errors.Join(err, os.RemoveAll(s.dir))
}

// URL returns the URL of database db on the server, for user (the
// server's own user when "") with password (none when "").
func (s *Server) URL(db, user, password string) string {
	u := *s.admin
	u.Path = "/" + db
	switch {
	case user != "" && password != "":
		u.User = url.UserPassword(user, password)
	case user != "":
		u.User = url.User(user)
	}
	return u.String()
}

func (s *Server) ping(ctx context.Context) error {
	conn, err := pgx.Connect(ctx, s.admin.String())
	if err != nil {
		return err
	}
	return conn.Close(ctx)
}

// exec runs sql in database db as the server's user.
func (s *Server) exec(ctx context.Context, db, sql string) error {
	conn, err := pgx.Connect(ctx, s.URL(db, "", ""))
	if err != nil {
		return err
	}
	defer conn.Close(context.WithoutCancel(ctx))
	_, err = conn.Exec(ctx, sql)
	return err
}

// Exec runs sql in database db as the server's user, failing the test on
// error.
func (s *Server) Exec(tb testing.TB, db, sql string) {
	tb.Helper()
	// Not tb.Context(): Exec is also for cleanups, which run after it
	// ends; go test -timeout bounds it.
	if err := s.exec(context.Background(), db, sql); err != nil {
		tb.Fatalf("exec %q in %s: %v", sql, db, err)
	}
}

// CreateDatabase creates an empty database, dropped when the test ends,
// and returns its name.
func (s *Server) CreateDatabase(tb testing.TB) string {
	tb.Helper()
	s.mu.Lock()
	s.n++
	name := fmt.Sprintf("mnemo_test_%d_%d", os.Getpid(), s.n)
	s.mu.Unlock()
	if err := s.exec(tb.Context(), s.adminDB(), `CREATE DATABASE "`+name+`"`); err != nil {
		tb.Fatalf("create test database: %v", err)
	}
	tb.Cleanup(func() {
		if err := s.exec(context.Background(), s.adminDB(), `DROP DATABASE IF EXISTS "`+name+`" WITH (FORCE)`); err != nil {
			tb.Logf("drop test database %s: %v", name, err)
		}
	})
	return name
}

// adminDB is the database the server's user connects to for creating and
// dropping others.
func (s *Server) adminDB() string { return strings.TrimPrefix(s.admin.Path, "/") }

// NewDatabase creates an empty database and returns its URL.
func (s *Server) NewDatabase(tb testing.TB) string {
	tb.Helper()
	return s.URL(s.CreateDatabase(tb), "", "")
}

var (
	sharedOnce sync.Once
	shared     *Server
	errShared  = errors.New("pgtest.Main was not called from TestMain")
	inMain     bool
)

// Main runs the tests and stops the package's server if one of them
// started it, and returns m.Run's exit code, for os.Exit in TestMain. The
// server is started by the first test that needs one (Shared), so a run
// of other tests — or a fuzz worker, which runs only its fuzz target —
// starts none. When no server can be started, the tests run anyway:
// those that need one skip (or fail under CI=true) with the reason, and
// Main prints one line saying how many skipped and how to run them
// (testutil.ReportSkips).
func Main(m *testing.M) int {
	inMain = true
	code := m.Run()
	if shared != nil {
		if err := shared.Stop(); err != nil {
			fmt.Fprintf(os.Stderr, "pgtest: stop PostgreSQL: %v\n", err)
		}
	}
	testutil.ReportSkips()
	return code
}

// Enable says how to run the tests that need PostgreSQL.
var Enable = "install PostgreSQL 15 or later (Debian: apt-get install postgresql; macOS: brew install postgresql@17) or set " + EnvURL + " to a server's postgres:// URL"

// Shared returns the package's server, starting it on first use (or
// using the one at $MNEMO_TEST_POSTGRES_URL). Without one, the test is
// skipped with the reason — or fails, when the environment has CI=true,
// since CI must run these tests.
//
// Under -short the test is skipped: a short run starts no server.
func Shared(tb testing.TB) *Server {
	tb.Helper()
	if testing.Short() {
		tb.Skip("-short: the tests that need PostgreSQL do not run")
	}
	sharedOnce.Do(func() {
		if !inMain {
			return // errShared says so
		}
		if fuzzWorker() && os.Getenv(EnvURL) == "" {
			// A fuzz worker is killed, not ended, by the coordinator: a
			// server it started would be orphaned.
			errShared = errors.New("fuzz workers start no server; set " + EnvURL + " to use an existing one")
			return
		}
		// Not tb.Context(): the server outlives this test. The start-up
		// is bounded by go test -timeout.
		shared, errShared = Start(context.Background())
	})
	if shared != nil {
		return shared
	}
	testutil.SkipMissing(tb, "PostgreSQL", errShared.Error(), Enable)
	return nil
}

// fuzzWorker reports whether this process is a fuzzing worker, which the
// go command starts with -test.fuzzworker and kills when fuzzing ends.
func fuzzWorker() bool {
	f := flag.Lookup("test.fuzzworker")
	return f != nil && f.Value.String() == "true"
}

// NewDatabase creates an empty database on the shared server, dropped
// when the test ends, and returns its URL; see Shared for a missing
// server.
func NewDatabase(tb testing.TB) string {
	tb.Helper()
	return Shared(tb).NewDatabase(tb)
}
