package postgres

import (
	"context"
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"slices"
	"strconv"
	"strings"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
)

// migrations are the schema changes, applied in order of their number:
// migrations/NNNN_what.sql is schema version NNNN. A released file is
// never edited; a change is a new file.
//
//go:embed migrations/*.sql
var migrations embed.FS

// ErrSchemaTooNew means the database was migrated by a newer mnemo: this
// build does not know its tables and refuses to touch them.
var ErrSchemaTooNew = errors.New("database schema is newer than this mnemo")

// migrationLock is the key of the session advisory lock held while
// migrating ("mnemo" in ASCII, then the lock's purpose number).
const migrationLock int64 = 0x6d6e656d6f_0001

// versionTable records the applied schema versions, one row each.
const versionTable = "mnemo_schema_versions"

type migration struct {
	version int
	name    string
	sql     string
}

// loadMigrations returns the embedded migrations in version order. Their
// numbers must run 1, 2, … without gaps.
func loadMigrations() ([]migration, error) {
	entries, err := fs.ReadDir(migrations, "migrations")
	if err != nil {
		return nil, err
	}
	var out []migration
	for _, e := range entries {
		num, _, ok := strings.Cut(e.Name(), "_")
		v, err := strconv.Atoi(num)
		if !ok || err != nil || v <= 0 || !strings.HasSuffix(e.Name(), ".sql") {
			return nil, fmt.Errorf("migration %s: name is not NNNN_what.sql", e.Name())
		}
		raw, err := migrations.ReadFile("migrations/" + e.Name())
		if err != nil {
			return nil, err
		}
		out = append(out, migration{version: v, name: e.Name(), sql: string(raw)})
	}
	slices.SortFunc(out, func(a, b migration) int { return a.version - b.version })
	for i, m := range out {
		if m.version != i+1 {
			return nil, fmt.Errorf("migration %s: want version %d", m.name, i+1)
		}
	}
	return out, nil
}

// SchemaVersion is the schema version this build creates and reads.
func SchemaVersion() int {
	ms, err := loadMigrations()
	if err != nil {
		panic(err) // the embedded files are checked by the tests
	}
	return len(ms)
}

// migrate brings the schema up to this build's version, one transaction
// per migration, while holding the advisory lock on one connection.
func (s *Store) migrate(ctx context.Context) error {
	ms, err := loadMigrations()
	if err != nil {
		return fmt.Errorf("read migrations: %w", err)
	}
	conn, err := s.pool.Acquire(ctx)
	if err != nil {
		return s.err("connect", err)
	}
	defer conn.Release()
	if _, err := conn.Exec(ctx, "SELECT pg_advisory_lock($1)", migrationLock); err != nil {
		return s.err("take the migration lock", err)
	}
	defer func() {
		// A failed unlock (connection lost) releases the lock anyway;
		// a live connection with the lock still held is not returned
		// to the pool.
		if _, err := conn.Exec(context.WithoutCancel(ctx), "SELECT pg_advisory_unlock($1)", migrationLock); err != nil {
			conn.Conn().Close(context.WithoutCancel(ctx))
		}
	}()
	if _, err := conn.Exec(ctx, `CREATE TABLE IF NOT EXISTS `+versionTable+` (
		version    integer PRIMARY KEY,
		name       text NOT NULL,
		applied_at timestamptz NOT NULL DEFAULT now())`); err != nil {
		return s.err("create "+versionTable, err)
	}
	cur, err := schemaVersion(ctx, conn.Conn())
	if err != nil {
		return s.err("read schema version", err)
	}
	if cur > len(ms) {
		return fmt.Errorf("%w: the database is at schema version %d, this build knows up to %d; upgrade mnemo", ErrSchemaTooNew, cur, len(ms))
	}
	for _, m := range ms[cur:] {
		err := pgx.BeginFunc(ctx, conn, func(tx pgx.Tx) error {
			if _, err := tx.Exec(ctx, m.sql); err != nil {
				return err
			}
			_, err := tx.Exec(ctx, "INSERT INTO "+versionTable+" (version, name) VALUES ($1, $2)", m.version, m.name)
			return err
		})
		if err != nil {
			return s.err("apply migration "+m.name, err)
		}
		s.log.Info("applied database migration", "db", s.masked, "version", m.version, "name", m.name)
	}
	return nil
}

// schemaVersion returns the highest applied version, 0 for none (or no
// version table).
func schemaVersion(ctx context.Context, conn *pgx.Conn) (int, error) {
	var exists bool
	if err := conn.QueryRow(ctx, "SELECT to_regclass($1) IS NOT NULL", versionTable).Scan(&exists); err != nil || !exists {
		return 0, err
	}
	var v int
	err := conn.QueryRow(ctx, "SELECT coalesce(max(version), 0) FROM "+versionTable).Scan(&v)
	return v, err
}

// Report is what Check finds out about a database, for mnemo doctor.
type Report struct {
	// URL is the connection URL with the password masked.
	URL string
	// Server is the PostgreSQL version (server_version).
	Server string
	// User and Database are whom the connection is for.
	User, Database string
	// Schema is the database's schema version (0: no mnemo tables yet),
	// Want the version this build uses.
	Schema, Want int
	// Missing lists the privileges the user lacks: to create the tables
	// (when migrations are pending) or to read and write them.
	Missing []string
}

// OK reports whether a Store can be opened on the database as it is.
func (r *Report) OK() bool { return r.Schema <= r.Want && len(r.Missing) == 0 }

// Check connects to the database at url without changing anything and
// reports its version, schema version and the privileges the user lacks.
// An unreachable database is an error wrapping ErrUnavailable; a schema
// newer than this build is reported, not an error. No error contains the
// password.
func Check(ctx context.Context, url string) (*Report, error) {
	masked := MaskURL(url)
	cfg, err := pgx.ParseConfig(url)
	if err != nil {
		return nil, fmt.Errorf("check postgres %s: invalid connection URL: %w", masked, scrub(err, passwordOf(url)))
	}
	conn, err := pgx.ConnectConfig(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("check postgres %s: %w", masked, classify(err, cfg.Password))
	}
	defer conn.Close(context.WithoutCancel(ctx))
	r := &Report{URL: masked, Want: SchemaVersion()}
	if err := conn.QueryRow(ctx, "SELECT current_setting('server_version'), current_user, current_database()").Scan(&r.Server, &r.User, &r.Database); err != nil {
		return nil, fmt.Errorf("check postgres %s: %w", masked, classify(err, cfg.Password))
	}
	if r.Schema, err = schemaVersion(ctx, conn); err != nil {
		return nil, fmt.Errorf("check postgres %s: read schema version: %w", masked, classify(err, cfg.Password))
	}
	if r.Missing, err = missingPrivileges(ctx, conn, r.Schema < r.Want); err != nil {
		return nil, fmt.Errorf("check postgres %s: privileges: %w", masked, classify(err, cfg.Password))
	}
	return r, nil
}

// Check reports on the Store's database, as the function Check does.
func (s *Store) Check(ctx context.Context) (*Report, error) {
	conn, err := s.pool.Acquire(ctx)
	if err != nil {
		return nil, s.err("check postgres "+s.masked, err)
	}
	defer conn.Release()
	r := &Report{URL: s.masked, Want: SchemaVersion()}
	if err := conn.QueryRow(ctx, "SELECT current_setting('server_version'), current_user, current_database()").Scan(&r.Server, &r.User, &r.Database); err != nil {
		return nil, s.err("check postgres "+s.masked, err)
	}
	if r.Schema, err = schemaVersion(ctx, conn.Conn()); err != nil {
		return nil, s.err("check postgres "+s.masked+": read schema version", err)
	}
	if r.Missing, err = missingPrivileges(ctx, conn.Conn(), r.Schema < r.Want); err != nil {
		return nil, s.err("check postgres "+s.masked+": privileges", err)
	}
	return r, nil
}

// dataTables are the tables a Store reads and writes.
var dataTables = []string{"mnemo_scopes", "mnemo_turns", "mnemo_versions", "mnemo_midterm", "mnemo_page_index", "mnemo_vectors", "mnemo_tokens", "mnemo_keys"}

// missingPrivileges lists what the current user may not do: with
// migrate, create tables in the current schema (and the migrations lock
// needs nothing more); and read and write every table that exists.
func missingPrivileges(ctx context.Context, conn *pgx.Conn, migrate bool) ([]string, error) {
	var missing []string
	if migrate {
		var ok bool
		if err := conn.QueryRow(ctx, "SELECT has_schema_privilege(current_schema(), 'CREATE')").Scan(&ok); err != nil {
			return nil, err
		}
		if !ok {
			missing = append(missing, "CREATE on the current schema (to create mnemo's tables)")
		}
	}
	for _, t := range dataTables {
		var exists, ok bool
		// has_table_privilege with a list is true if any is held: ask
		// for each.
		err := conn.QueryRow(ctx, `SELECT to_regclass($1) IS NOT NULL, to_regclass($1) IS NULL OR (
			has_table_privilege($1, 'SELECT') AND has_table_privilege($1, 'INSERT') AND
			has_table_privilege($1, 'UPDATE') AND has_table_privilege($1, 'DELETE'))`, t).Scan(&exists, &ok)
		if err != nil {
			return nil, err
		}
		if exists && !ok {
			missing = append(missing, "SELECT, INSERT, UPDATE, DELETE on "+t)
		}
	}
	return missing, nil
}

// poolQuerier is what the helpers below need of a pool or a transaction.
type poolQuerier interface {
	Exec(ctx context.Context, sql string, args ...any) (pgconn.CommandTag, error)
	Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error)
	QueryRow(ctx context.Context, sql string, args ...any) pgx.Row
}

var (
	_ poolQuerier = (*pgxpool.Pool)(nil)
	_ poolQuerier = (pgx.Tx)(nil)
)
