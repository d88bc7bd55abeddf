// Package postgres is a memory.Store kept in PostgreSQL (15 or later), for
// several mnemo instances sharing one memory.
//
// Tables (created by the embedded migrations, see migrations/): one row per
// scope in mnemo_scopes holds the memory document, its revision and the
// Seq of the newest turn; mnemo_turns holds the turn logs, mnemo_versions
// the documents kept for undo, and mnemo_midterm, mnemo_page_index and
// mnemo_vectors the per-scope caches; mnemo_tokens and mnemo_keys hold what
// instances of serve --http share besides memory (see tokens.go). The
// scope row is the scope lock: an
// append bumps its last_seq in the statement that inserts the turns, and
// document updates, turn deletions and imports lock it with SELECT … FOR
// UPDATE, so writers in any number of instances serialize per scope and
// Seqs are dense. Every write commits with synchronous_commit on before it
// returns. Readers take no lock.
//
// Every change to a scope's log or document is also announced with NOTIFY
// (see Store.Watch); the document's Revision and TurnLogEpoch remain the
// check that is correct alone.
package postgres

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/url"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/mnemo-mcp/mnemo/memory"
	"github.com/mnemo-mcp/mnemo/memory/redact"
)

var _ memory.Store = (*Store)(nil)

// ErrUnavailable marks a failure to reach the database (refused or broken
// connection, server shutting down or starting). The call may succeed when
// retried later; the Store reconnects by itself. It is memory.ErrUnavailable,
// so the memory pipeline and the tools match it without knowing the store.
var ErrUnavailable = memory.ErrUnavailable

// DefaultVersions is how many earlier memory documents a Store keeps per
// scope unless WithVersions says otherwise (as memory/files).
const DefaultVersions = 5

// Store is a memory.Store in a PostgreSQL database. It is safe for
// concurrent use by several goroutines, and by several processes using the
// same database.
type Store struct {
	pool     *pgxpool.Pool
	masked   string // the connection URL with its password masked
	password string // to scrub from errors, whatever printed it
	now      func() time.Time
	log      *slog.Logger
	versions int
	docs     *docCache

	// lockConns are the sessions holding updater locks (TryLockScope).
	lockMu    sync.Mutex
	lockConns map[*pgx.Conn]struct{}
	closed    bool
}

type options struct {
	now      func() time.Time
	log      *slog.Logger
	versions int
}

// Option configures a Store.
type Option func(*options)

// WithLogger sets where the store reports migrations and reconnections;
// nil means slog.Default().
func WithLogger(l *slog.Logger) Option {
	return func(o *options) {
		if l != nil {
			o.log = l
		}
	}
}

// WithVersions sets how many earlier memory documents are kept per scope
// for undo; 0 keeps none (and drops those kept at the next save). A
// negative n means DefaultVersions.
func WithVersions(n int) Option {
	return func(o *options) {
		if n >= 0 {
			o.versions = n
		}
	}
}

// Open connects to the database at url (postgres://user:password@host/db?…
// or key=value form), applies the schema migrations this build has that
// the database lacks (under an advisory lock, so instances starting
// together do not race), and returns the Store. A database whose schema is
// newer than this build is refused with an error wrapping ErrSchemaTooNew;
// an unreachable one with an error wrapping ErrUnavailable. No error
// contains the password.
func Open(ctx context.Context, url string, opts ...Option) (*Store, error) {
	o := options{now: time.Now, log: slog.Default(), versions: DefaultVersions}
	for _, opt := range opts {
		opt(&o)
	}
	masked := MaskURL(url)
	cfg, err := pgxpool.ParseConfig(url)
	if err != nil {
		// pgx masks what it recognizes; the message is not trusted further.
		return nil, fmt.Errorf("open postgres store %s: invalid connection URL: %w", masked, scrub(err, passwordOf(url)))
	}
	password := cfg.ConnConfig.Password
	// Acknowledged writes must be on disk, whatever the server, database
	// or role default says.
	cfg.ConnConfig.RuntimeParams["synchronous_commit"] = "on"
	if cfg.ConnConfig.RuntimeParams["application_name"] == "" {
		cfg.ConnConfig.RuntimeParams["application_name"] = "mnemo"
	}
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("open postgres store %s: %w", masked, classify(err, password))
	}
	s := &Store{
		pool:     pool,
		masked:   masked,
		password: password,
		now:      o.now,
		log:      o.log,
		versions: o.versions,
		docs:     newDocCache(docCacheSize),

		lockConns: make(map[*pgx.Conn]struct{}),
	}
	if err := s.migrate(ctx); err != nil {
		pool.Close()
		return nil, fmt.Errorf("open postgres store %s: %w", masked, err)
	}
	s.warm(ctx)
	return s, nil
}

// warmConns is how many connections Open makes ready: the first read of
// a scope runs that many queries at once (document, turn log, page index
// snapshot, mid-term sessions).
const warmConns = 4

// warm opens up to warmConns connections at once, so that the first read
// of a scope does not wait for PostgreSQL to start a backend per query.
// A connection that fails is left to the next use to report.
func (s *Store) warm(ctx context.Context) {
	n := min(warmConns, int(s.pool.Config().MaxConns))
	conns := make(chan *pgxpool.Conn, n)
	var wg sync.WaitGroup
	for range n {
		wg.Go(func() {
			if c, err := s.pool.Acquire(ctx); err == nil {
				conns <- c
			}
		})
	}
	wg.Wait()
	close(conns)
	for c := range conns {
		c.Release()
	}
}

// Close closes the connections, after waiting for those in use to be
// released. Methods called after Close fail. Closing twice is a no-op.
func (s *Store) Close() error {
	s.closeLocks()
	s.pool.Close()
	return nil
}

// String returns the masked URL of the database.
func (s *Store) String() string { return s.masked }

// err turns an error from the database into one that names what failed,
// wraps ErrUnavailable when the database could not be reached, and never
// contains the password. A connection error also closes the idle
// connections, which are likely broken too (the server restarted), so the
// next call connects afresh.
func (s *Store) err(what string, err error) error {
	if err == nil {
		return nil
	}
	err = classify(err, s.password)
	if errors.Is(err, ErrUnavailable) {
		s.pool.Reset()
	}
	return fmt.Errorf("%s: %w", what, err)
}

// classify wraps err with ErrUnavailable when it says the server could not
// be reached or went away, and scrubs password from its text.
func classify(err error, password string) error {
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return scrub(err, password)
	}
	if unavailable(err) {
		return &unavailableError{err: scrub(err, password)}
	}
	return scrub(err, password)
}

// unavailable reports whether err means the database is out of reach,
// rather than refusing what was asked.
func unavailable(err error) bool {
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) {
		switch {
		case strings.HasPrefix(pgErr.Code, "08"): // connection exception
			return true
		case pgErr.Code == "57P01", pgErr.Code == "57P02", pgErr.Code == "57P03": // shutdown, crash, starting
			return true
		case pgErr.Code == "53300": // too many connections
			return true
		}
		return false
	}
	var connErr *pgconn.ConnectError
	var netErr net.Error
	switch {
	case errors.As(err, &connErr), errors.As(err, &netErr):
		return true
	case errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF),
		errors.Is(err, syscall.ECONNREFUSED), errors.Is(err, syscall.ECONNRESET),
		errors.Is(err, syscall.EPIPE), errors.Is(err, syscall.ENOENT):
		return true
	}
	return pgconn.SafeToRetry(err) || strings.Contains(err.Error(), "conn closed")
}

// unavailableError is a database error that means the server is out of
// reach; it matches ErrUnavailable as well as what it wraps.
type unavailableError struct{ err error }

func (e *unavailableError) Error() string { return ErrUnavailable.Error() + ": " + e.err.Error() }

func (e *unavailableError) Unwrap() []error { return []error{ErrUnavailable, e.err} }

// scrub returns err with every occurrence of password in its text masked;
// errors.Is and errors.As still see what it wraps.
func scrub(err error, password string) error {
	if err == nil || password == "" || !strings.Contains(err.Error(), password) {
		return err
	}
	// A short password is masked only where it stands alone: masked
	// inside words it would mangle the message and show itself by the
	// gaps ("datxxxxxase").
	return &scrubbedError{msg: redact.Secret(err.Error(), password), err: err}
}

type scrubbedError struct {
	msg string
	err error
}

func (e *scrubbedError) Error() string { return e.msg }

func (e *scrubbedError) Unwrap() error { return e.err }

// maskedPassword stands in for a password in what is shown.
const maskedPassword = "xxxxx"

// keywordPassword finds password=… in a key=value connection string, and
// in the query of a URL.
var keywordPassword = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`(?i)(\bpassword\s*=\s*)('(?:[^'\\]|\\.)*'|[^\s&]*)`) })

// MaskURL returns a PostgreSQL connection string (URL or key=value form)
// with its password replaced by "xxxxx", for logs, errors and doctor
// output. A string it cannot parse is masked from its scheme on, so
// nothing after "://" user info leaks.
func MaskURL(conn string) string {
	if strings.HasPrefix(conn, "postgres://") || strings.HasPrefix(conn, "postgresql://") {
		u, err := url.Parse(conn)
		if err != nil {
			scheme, rest, _ := strings.Cut(conn, "://")
			if at := strings.LastIndex(rest, "@"); at >= 0 {
				return scheme + "://" + maskedPassword + "@" + keywordPassword().ReplaceAllString(rest[at+1:], "${1}"+maskedPassword)
			}
			return keywordPassword().ReplaceAllString(conn, "${1}"+maskedPassword)
		}
		if _, ok := u.User.Password(); ok {
			u.User = url.UserPassword(u.User.Username(), maskedPassword)
		}
		if q := u.Query(); q.Has("password") {
			q.Set("password", maskedPassword)
			u.RawQuery = q.Encode()
		}
		// url.URL.String escapes the mask's characters no further.
		return u.String()
	}
	return keywordPassword().ReplaceAllString(conn, "${1}"+maskedPassword)
}

// passwordOf returns the password in conn, if one can be found, for
// scrubbing errors of a string pgx could not parse.
func passwordOf(conn string) string {
	if u, err := url.Parse(conn); err == nil && u.User != nil {
		if p, ok := u.User.Password(); ok {
			return p
		}
	}
	if m := keywordPassword().FindStringSubmatch(conn); m != nil {
		return strings.Trim(m[2], "'")
	}
	return ""
}

// scopeArgs returns the two key columns of scope, after validating it.
func scopeArgs(scope memory.Scope) (string, string, error) {
	if err := scope.Validate(); err != nil {
		return "", "", err
	}
	return scope.UserID, scope.AgentName, nil
}

// read runs fn, a read-only query, once more after a connection error
// (the pool's idle connections are closed first: after a server restart
// they are all broken).
func (s *Store) read(ctx context.Context, fn func() error) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	err := fn()
	if err != nil && ctx.Err() == nil && unavailable(err) {
		s.pool.Reset()
		err = fn()
	}
	return err
}

// write runs fn, which writes, once more only when it failed before
// anything reached the server (pgconn.SafeToRetry): a write that may have
// been applied is never repeated.
func (s *Store) write(ctx context.Context, fn func() error) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	err := fn()
	if err != nil && ctx.Err() == nil && pgconn.SafeToRetry(err) {
		s.pool.Reset()
		err = fn()
	}
	return err
}

// inTx runs fn in a transaction committed when fn returns nil and rolled
// back otherwise, with write's retry.
func (s *Store) inTx(ctx context.Context, fn func(pgx.Tx) error) error {
	return s.write(ctx, func() error { return pgx.BeginFunc(ctx, s.pool, fn) })
}
