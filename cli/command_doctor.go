package cli

import (
	"cmp"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"maps"
	"net/url"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"time"

	"github.com/mnemo-mcp/mnemo/memory"
	"github.com/mnemo-mcp/mnemo/memory/files"
	"github.com/mnemo-mcp/mnemo/memory/openai"
	"github.com/mnemo-mcp/mnemo/memory/postgres"
	"github.com/mnemo-mcp/mnemo/memory/redact"
	"github.com/mnemo-mcp/mnemo/memory/tiktoken"
)

// doctorTimeout bounds each network check and the lock check.
const doctorTimeout = 30 * time.Second

// doctor collects check results and prints them as it goes.
type doctor struct {
	w        io.Writer
	problems int
	secrets  []string // never printed, even if an error carried one
}

func (d *doctor) section(title string) { fmt.Fprintf(d.w, "\n%s\n", title) }

func (d *doctor) ok(format string, args ...any) { d.line("ok  ", fmt.Sprintf(format, args...)) }

func (d *doctor) info(format string, args ...any) { d.line("--  ", fmt.Sprintf(format, args...)) }

// fail reports a problem and what to do about it.
func (d *doctor) fail(fix, format string, args ...any) {
	d.problems++
	d.line("FAIL", fmt.Sprintf(format, args...))
	if fix != "" {
		d.line("    ", "fix: "+fix)
	}
}

func (d *doctor) line(status, text string) {
	text = redact.Message(text, d.secrets...)
	// Not wrapped: the lines hold paths and URLs a user copies.
	fmt.Fprintf(d.w, "  %s  %s\n", status, text)
}

// runDoctor is "mnemo doctor": it checks the configuration, the data
// directory, the token encoding and the endpoints, says what to fix, and
// exits 0 when all is well, 1 otherwise.
func runDoctor(ctx context.Context, c *call) int {
	d := &doctor{w: c.stdout}
	fmt.Fprintln(c.stdout, "mnemo doctor", version())

	d.section("Configuration")
	if c.cfgErr != nil {
		d.fail("correct the setting named above (run 'mnemo help' for its range)", "%v", c.cfgErr)
		return d.finish()
	}
	cfg := c.cfg
	d.secrets = []string{cfg.LLM.APIKey, cfg.Embedding.APIKey}
	d.ok("every setting is valid")
	for _, name := range slices.Sorted(maps.Keys(cfg.origin)) {
		s := lookupSetting(name)
		if s == nil {
			continue
		}
		value := s.shown(cfg)
		d.info("%s = %s (from %s)", name, value, cfg.origin[name])
	}
	if _, set := cfg.origin["data_dir"]; !set && cfg.DataDir != "" {
		d.info("data_dir = %s (the default)", cfg.DataDir)
	}
	if !cfg.LLM.Configured() {
		d.info("no LLM endpoint: turns are stored and searchable, but nothing is extracted into long-term memory until MNEMO_LLM_BASE_URL or MNEMO_LLM_API_KEY is set")
	}

	if cfg.Storage != "" {
		d.section("Storage (PostgreSQL)")
		d.checkPostgres(ctx, cfg)
	} else {
		d.section("Data directory")
		if problem, fix := cfg.dataDirProblem(); problem != "" {
			d.fail(fix, "%s", problem)
		}
		d.checkDataDir(ctx, cfg)
	}

	d.section("Token encoding")
	if tk, err := tiktoken.New(cfg.TokenEncoding); err != nil {
		d.fail("set token_encoding to cl100k_base or o200k_base; if it is one of them the binary is broken: reinstall mnemo", "%v", err)
	} else if n := tk.Count("mnemo doctor checks the token encoding"); n <= 0 {
		d.fail("reinstall mnemo", "%s counted %d tokens in a sentence", tk.Encoding(), n)
	} else {
		d.ok("%s loads offline from the binary", tk.Encoding())
	}

	d.section("LLM endpoint")
	if cfg.LLM.Configured() {
		d.checkLLM(ctx, cfg)
	} else {
		d.info("not configured (optional)")
	}
	if cfg.Embedding.Configured() {
		d.section("Embeddings endpoint")
		d.checkEmbedding(ctx, cfg)
	}
	d.section("Usage")
	d.usage(ctx, c)
	return d.finish()
}

// checkPostgres reports the database of the storage setting: whether it
// answers, its schema version against this build's, and the privileges
// the user lacks. Only the masked URL is printed.
func (d *doctor) checkPostgres(ctx context.Context, cfg *Config) {
	d.secrets = append(d.secrets, postgresPassword(cfg.Storage))
	cctx, cancel := context.WithTimeout(ctx, doctorTimeout)
	defer cancel()
	r, err := postgres.Check(cctx, cfg.Storage)
	if err != nil {
		fix := "check the storage URL (host, port, user, password, database) and that PostgreSQL is running"
		if hint := storageHint(err); hint != "" {
			fix = strings.Trim(hint, " ()")
		}
		d.fail(fix, "cannot reach the database: %v", err)
		return
	}
	d.ok("%s answers: PostgreSQL %s, user %s, database %s", r.URL, r.Server, r.User, r.Database)
	switch {
	case r.Schema > r.Want:
		d.fail("upgrade mnemo (every instance on this database)", "schema version %d is newer than this mnemo's %d", r.Schema, r.Want)
	case r.Schema == r.Want:
		d.ok("schema version %d (current)", r.Schema)
	case r.Schema == 0:
		d.info("no mnemo tables yet: they are created at the first start (schema version %d)", r.Want)
	default:
		d.info("schema version %d: migrated to %d at the next start", r.Schema, r.Want)
	}
	if len(r.Missing) > 0 {
		d.fail("GRANT the privileges to user "+r.User, "user %s lacks: %s", r.User, strings.Join(r.Missing, "; "))
	} else {
		d.ok("user %s may create and use mnemo's tables", r.User)
	}
}

// postgresPassword is the password in a storage URL, to keep out of any
// line doctor prints.
func postgresPassword(raw string) string {
	if u, err := url.Parse(raw); err == nil {
		if u.User != nil {
			if p, ok := u.User.Password(); ok {
				return p
			}
		}
		return u.Query().Get("password")
	}
	return ""
}

// finish prints the verdict and returns the exit code.
func (d *doctor) finish() int {
	if d.problems == 0 {
		fmt.Fprintln(d.w, "\nAll checks passed.")
		return exitOK
	}
	fmt.Fprintf(d.w, "\n%d problem(s) found; fix them and run 'mnemo doctor' again.\n", d.problems)
	return exitError
}

// checkDataDir checks that the data directory exists (or can be created),
// is private and writable, that the scope lock works and that every stored
// turn log and memory document parses.
func (d *doctor) checkDataDir(ctx context.Context, cfg *Config) {
	dir := cfg.DataDir
	fi, err := os.Stat(dir)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		// Create the missing directories to prove it can be done, then
		// remove exactly those (os.Remove leaves any that are not empty).
		var created []string
		for p := dir; ; p = filepath.Dir(p) {
			if _, err := os.Stat(p); !errors.Is(err, fs.ErrNotExist) || filepath.Dir(p) == p {
				break
			}
			created = append(created, p)
		}
		if err := os.MkdirAll(dir, 0o700); err != nil {
			d.fail("create it, or point --data-dir / MNEMO_DATA_DIR at a directory you can write", "%s does not exist and cannot be created: %v", dir, err)
			return
		}
		for _, p := range created {
			os.Remove(p)
		}
		d.ok("%s does not exist yet; it can be created, and will be at the first start", dir)
		return
	case err != nil:
		d.fail("check the path and its permissions", "%s: %v", dir, err)
		return
	case !fi.IsDir():
		d.fail("point --data-dir / MNEMO_DATA_DIR at a directory", "%s is not a directory", dir)
		return
	}
	d.ok("%s exists", dir)
	if links, err := files.FindSymlinks(dir); err != nil {
		d.fail("check the permissions of the data directory", "cannot look for symbolic links in it: %v", err)
	} else if len(links) > 0 {
		d.fail("remove them (mnemo never follows a link inside the data directory: a directory that came with a cloned repository may hold links planted to reach your files); the memory they lead to is refused until then",
			"%d symbolic link(s) inside the data directory: %s", len(links), strings.Join(links, ", "))
	} else {
		d.ok("no symbolic links inside")
	}
	if runtime.GOOS != "windows" {
		d.checkPermissions(dir, fi)
	}

	probe, err := os.CreateTemp(dir, ".doctor-probe-*")
	if err == nil {
		_, err = probe.WriteString("mnemo doctor\n")
		if err == nil {
			err = probe.Sync()
		}
		probe.Close()
		if rerr := os.Remove(probe.Name()); err == nil {
			err = rerr
		}
	}
	if err != nil {
		d.fail("make the directory writable by this user (chmod u+rwx), or free disk space", "cannot write a file in %s: %v", dir, err)
		return
	}
	d.ok("writable (created, synced and removed a probe file)")

	store, err := openStore(ctx, cfg, slog.New(slog.DiscardHandler))
	if err != nil {
		d.fail("check the directory's permissions", "cannot open the store: %v", err)
		return
	}
	defer store.Close()
	scopes, err := store.Scopes(ctx)
	if err != nil {
		d.fail("check the permissions of users/ in the data directory", "cannot list the stored memories: %v", err)
		return
	}
	d.checkLock(ctx, store, scopes)

	turns, docs := 0, 0
	bad := 0
	for _, sc := range scopes {
		if _, err := store.LoadDocument(ctx, sc); err != nil {
			bad++
			d.fail(fmt.Sprintf("restore an earlier version with 'mnemo rollback --user %s%s --list', or move memory.json aside", sc.UserID, agentFlag(sc)),
				"memory.json of %s does not load: %v", sc.Key(), err)
		} else {
			docs++
		}
		ts, err := store.ReadTurns(ctx, sc, 0)
		if err != nil {
			bad++
			d.fail("move turns.jsonl of that scope aside and restart (its turns are then lost), or repair the named line", "turns.jsonl of %s does not load: %v", sc.Key(), err)
			continue
		}
		turns += len(ts)
	}
	if bad == 0 {
		d.ok("%d memories (scopes) load: %d memory documents, %d turns", len(scopes), docs, turns)
	}
}

// checkPermissions reports files and directories that other users could
// read: mnemo writes directories 0700 and files 0600.
func (d *doctor) checkPermissions(dir string, fi os.FileInfo) {
	if fi.Mode().Perm()&0o077 != 0 {
		d.fail("chmod 700 "+dir, "%s has mode %04o; other users of this machine can read the memory (want 0700)", dir, fi.Mode().Perm())
	} else {
		d.ok("mode 0700")
	}
	var loose []string
	filepath.WalkDir(dir, func(path string, e fs.DirEntry, err error) error {
		if err != nil || path == dir {
			return nil
		}
		info, err := e.Info()
		if err != nil {
			return nil
		}
		if info.Mode()&fs.ModeSymlink == 0 && info.Mode().Perm()&0o077 != 0 { // links are reported on their own
			rel, _ := filepath.Rel(dir, path)
			loose = append(loose, fmt.Sprintf("%s (%04o)", rel, info.Mode().Perm()))
		}
		return nil
	})
	if len(loose) > 0 {
		shown := loose[:min(len(loose), 3)]
		more := ""
		if len(loose) > 3 {
			more = fmt.Sprintf(" and %d more", len(loose)-3)
		}
		what := fmt.Sprintf("%d files or directories are", len(loose))
		if len(loose) == 1 {
			what = "1 file or directory is"
		}
		d.fail("chmod -R go-rwx "+dir, "%s readable by other users: %s%s", what, strings.Join(shown, ", "), more)
	}
}

// errDoctorProbe makes the lock check's update change nothing.
var errDoctorProbe = errors.New("doctor probe")

// checkLock takes and releases the cross-process lock of a scope that
// holds nothing, the way every write does, then removes that scope.
func (d *doctor) checkLock(ctx context.Context, store memory.Store, scopes []memory.Scope) {
	var b [4]byte
	rand.Read(b[:])
	probe := memory.Scope{UserID: "mnemo-doctor-probe-" + hex.EncodeToString(b[:])}
	if slices.Contains(scopes, probe) {
		d.info("skipped the lock check: the probe scope %s exists", probe.Key())
		return
	}
	lctx, cancel := context.WithTimeout(ctx, doctorTimeout)
	defer cancel()
	_, err := store.UpdateDocument(lctx, probe, func(*memory.Document) error { return errDoctorProbe })
	cleanup := store.DeleteScope(context.WithoutCancel(ctx), probe)
	switch {
	case errors.Is(err, errDoctorProbe) && cleanup == nil:
		d.ok("the cross-process lock works")
	case errors.Is(err, context.DeadlineExceeded):
		d.fail("the lock of a new scope was held for "+doctorTimeout.String()+"; the file system may not support flock (a network file system?): use a local directory",
			"cannot take a scope lock: %v", err)
	case errors.Is(err, errDoctorProbe):
		d.fail("remove users/"+probe.UserID+" from the data directory", "cannot remove the lock probe: %v", cleanup)
	default:
		d.fail("check that the file system supports file locks (flock); use a local directory", "cannot take a scope lock: %v", err)
	}
}

// checkLLM sends one minimal chat completion to the configured endpoint.
func (d *doctor) checkLLM(ctx context.Context, cfg *Config) {
	where := llmState(cfg)
	c, err := openai.New(openai.Config{
		BaseURL:    cfg.LLM.BaseURL,
		APIKey:     cfg.LLM.APIKey,
		Model:      cfg.LLM.Model,
		Timeout:    min(cfg.LLM.Timeout, doctorTimeout),
		MaxRetries: -1,
	})
	if err != nil {
		d.fail("check MNEMO_LLM_BASE_URL", "%s: %v", where, err)
		return
	}
	rctx, cancel := context.WithTimeout(ctx, doctorTimeout)
	defer cancel()
	reply, err := c.Complete(rctx, memory.CompletionRequest{Prompt: "This is a connection test. Reply with the word: ok"})
	if err != nil {
		d.fail(llmFix(err), "%s: %v", where, err)
		return
	}
	d.ok("%s answered a test request (%d prompt + %d reply tokens)", where, reply.PromptTokens, reply.CompletionTokens)
}

// llmFix is the advice for an endpoint error whose message does not
// already say what to check.
func llmFix(err error) string {
	msg := err.Error()
	if strings.Contains(msg, "MNEMO_") || strings.Contains(msg, "billing") {
		return ""
	}
	if errors.Is(err, memory.ErrLLMUnavailable) {
		return "check that the endpoint is up and reachable from this machine (MNEMO_LLM_BASE_URL), then try again"
	}
	return "check MNEMO_LLM_BASE_URL, MNEMO_LLM_MODEL and MNEMO_LLM_API_KEY"
}

// checkEmbedding embeds one short text with the configured endpoint.
func (d *doctor) checkEmbedding(ctx context.Context, cfg *Config) {
	e, err := openai.NewEmbedder(openai.EmbedConfig{
		Config: openai.Config{
			BaseURL:    cmp.Or(cfg.Embedding.BaseURL, cfg.LLM.BaseURL),
			APIKey:     cmp.Or(cfg.Embedding.APIKey, cfg.LLM.APIKey),
			Model:      cfg.Embedding.Model,
			Timeout:    min(cfg.LLM.Timeout, doctorTimeout),
			MaxRetries: -1,
		},
		Dimensions: cfg.Embedding.Dimensions,
	})
	if err != nil {
		d.fail("check MNEMO_EMBEDDING_BASE_URL", "%v", err)
		return
	}
	rctx, cancel := context.WithTimeout(ctx, doctorTimeout)
	defer cancel()
	vecs, err := e.Embed(rctx, []string{"mnemo doctor checks the embeddings endpoint"})
	switch {
	case err != nil:
		d.fail("check MNEMO_EMBEDDING_MODEL, MNEMO_EMBEDDING_BASE_URL and MNEMO_EMBEDDING_API_KEY (empty ones fall back to the LLM endpoint's)", "%s: %v", e.Model(), err)
	case len(vecs) != 1 || len(vecs[0]) == 0:
		d.fail("check that MNEMO_EMBEDDING_MODEL is an embedding model", "%s returned no vector", e.Model())
	default:
		d.ok("%s answered a test request: %d dimensions", e.Model(), len(vecs[0]))
	}
}

// usage reports the default user's model and embedding usage today and the
// daily token budget; it finds no problem, only facts.
func (d *doctor) usage(ctx context.Context, c *call) {
	cfg := c.cfg
	scope := memory.Scope{UserID: cfg.Memory.UserID}
	budget := "unlimited (daily_token_budget = 0)"
	if b := cfg.Memory.DailyTokenBudget; b > 0 {
		budget = fmt.Sprintf("%d model tokens a day per scope", b)
	}
	if cfg.Storage == "" && (cfg.DataDir == "" || dataDirMissing(cfg)) {
		d.info("%s: nothing counted, no memory is stored yet; daily token budget %s", scope.Key(), budget)
		return
	}
	store, err := openStore(ctx, cfg, slog.New(slog.DiscardHandler))
	if err != nil {
		d.info("%s: usage not read: %v", scope.Key(), err)
		return
	}
	defer store.Close()
	doc, err := store.LoadDocument(ctx, scope)
	if err != nil {
		d.info("%s: usage not read: %v", scope.Key(), err)
		return
	}
	u := memory.UsageOf(doc.Usage, cfg.Memory.DailyTokenBudget, time.Now())
	t := u.Today
	d.info("%s today (UTC): %s, %d tokens (%d prompt + %d completion), %d failed; %s, %d tokens",
		scope.Key(), plural(t.LLMCalls, "model call"), t.Tokens(), t.PromptTokens, t.CompletionTokens, t.LLMFailures+t.EmbeddingFailures,
		plural(t.EmbeddingCalls, "embedding call"), t.EmbeddingTokens)
	if cfg.Memory.DailyTokenBudget > 0 {
		budget += fmt.Sprintf(", %d left today", max(0, cfg.Memory.DailyTokenBudget-t.Tokens()))
	}
	d.info("daily token budget: %s", budget)
	if u.Deferred != "" {
		d.info("extraction is deferred until tomorrow (UTC): the budget is spent; turns stay pending, nothing is lost (raise daily_token_budget to resume now)")
	} else {
		d.info("extraction is not deferred")
	}
	d.info("mnemo show --usage lists the recent days (--user U [--agent A] for another memory)")
}
