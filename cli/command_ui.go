package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os/exec"
	"runtime"
	"strconv"
	"time"

	"github.com/mnemo-mcp/mnemo/importers"
	"github.com/mnemo-mcp/mnemo/memory"
	"github.com/mnemo-mcp/mnemo/memory/engine"
	"github.com/mnemo-mcp/mnemo/server/ui"
)

const uiDetails = `Pages: the profile, facts (filter, add, edit, forget), exchanges (search
ranked as retrieve_memory ranks, filter by thread and date, a timeline,
forget one or a thread), topic sessions with their heat, a fact's history,
pending work and the model state, a preview of what retrieve_memory would
inject, export, import and forgetting a whole memory. Changes made by a
running server on the same data directory show up without a reload.
The viewer answers on 127.0.0.1 only; the printed link logs in once, then a
session cookie does. docs/viewer.md says more.`

// runUI is "mnemo ui": the memory viewer on loopback, behind a one-time
// token exchanged for a session cookie.
func runUI(ctx context.Context, c *call) int {
	port, err := c.args.int("port", 0)
	if err != nil {
		return c.fail(exitUsage, "%v", err)
	}
	if port < 0 || port > 65535 {
		return c.fail(exitUsage, "--port %d is not a port; use 1-65535, or leave it out for a free one", port)
	}
	scope, err := c.scope()
	if err != nil {
		return c.fail(exitUsage, "%v", err)
	}
	store, err := openStore(ctx, c.cfg, c.log)
	if err != nil {
		return c.fail(exitError, "%v", err)
	}
	defer store.Close()
	// With the models, as search: the same ranking as retrieve_memory
	// (embeddings) and the updater's state. The viewer never starts the
	// pending updates; the server does that.
	svc, err := openService(c.cfg, store, c.log, withModels, nil, loadProgress(c.stderr))
	if err != nil {
		return c.fail(exitError, "%v", err)
	}
	defer svc.Close(context.WithoutCancel(ctx))

	ln, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(port)))
	if err != nil {
		return c.fail(exitError, "listen on 127.0.0.1:%d: %v", port, err)
	}
	port = ln.Addr().(*net.TCPAddr).Port
	token := ui.NewToken()
	login := ui.NewTokenLogin(token)
	h, err := ui.New(svc, store, ui.Options{
		Access:       login.Caller,
		Hosts:        []string{"127.0.0.1:" + strconv.Itoa(port), "localhost:" + strconv.Itoa(port)},
		DefaultUser:  scope.UserID,
		DefaultAgent: scope.AgentName,
		LoginHint:    "Open the link 'mnemo ui' printed when it started: it logs in once. To log in again, stop mnemo ui and start it again for a new link.",
		Models:       uiModels(c.cfg),
		DataDir:      c.cfg.DataDir,
		Version:      version(),
		Export:       uiExport(store),
		Import:       uiImport(svc, c.cfg.Memory),
		Log:          c.log,
	})
	if err != nil {
		ln.Close()
		return c.fail(exitError, "%v", err)
	}
	srv := &http.Server{Handler: login.Wrap(h), ReadHeaderTimeout: 10 * time.Second}
	url := "http://127.0.0.1:" + strconv.Itoa(port) + "/?token=" + token
	fmt.Fprintf(c.stdout, "mnemo ui: the memory in %s is at\n\n    %s\n\nThe link logs in once (then a cookie does); keep it private. Ctrl-C stops the viewer.\n", c.cfg.DataDir, url)

	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()
	if c.args.flag("open") {
		if err := openBrowser(ctx, url); err != nil {
			c.log.Warn("cannot open a browser; open the link yourself", "err", err)
		}
	}
	select {
	case err = <-served:
		return c.fail(exitError, "serve: %v", err)
	case <-ctx.Done():
	}
	shutdown, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
	defer cancel()
	if err := srv.Shutdown(shutdown); err != nil && !errors.Is(err, context.DeadlineExceeded) {
		c.log.Warn("viewer shutdown", "err", err)
	}
	return exitOK
}

// openBrowser opens url in the desktop's browser.
func openBrowser(ctx context.Context, url string) error {
	var cmd *exec.Cmd
	switch runtime.GOOS {
	case "darwin":
		cmd = exec.CommandContext(ctx, "open", url)
	case "windows":
		cmd = exec.CommandContext(ctx, "rundll32", "url.dll,FileProtocolHandler", url)
	default:
		cmd = exec.CommandContext(ctx, "xdg-open", url)
	}
	if err := cmd.Start(); err != nil {
		return err
	}
	go cmd.Wait()
	return nil
}

// uiModels describes the configured endpoints for the viewer; never a key.
func uiModels(cfg *Config) ui.Models {
	m := ui.Models{LLM: llmState(cfg), TokenEncoding: cfg.TokenEncoding}
	if cfg.Embedding.Configured() {
		m.Embeddings = fmt.Sprintf("%s (%d dimensions): pages are ranked by words and by meaning", cfg.Embedding.Model, cfg.Embedding.Dimensions)
	}
	return m
}

// uiExport is the viewer's export: the file "mnemo export" writes.
func uiExport(store memory.Store) func(context.Context, []memory.Scope) ([]byte, error) {
	return func(ctx context.Context, scopes []memory.Scope) ([]byte, error) {
		file, err := exportScopes(ctx, store, scopes, time.Now())
		if err != nil {
			return nil, err
		}
		data, err := json.MarshalIndent(file, "", "  ")
		if err != nil {
			return nil, fmt.Errorf("encode export: %w", err)
		}
		return append(data, '\n'), nil
	}
}

// uiImport is the viewer's import of an uploaded file: a mnemo export or
// a DeerFlow memory.json, read as "mnemo import" reads it and stored
// through the engine's Import, into empty scopes the caller may write.
// Errors about the file wrap memory.ErrInvalidInput.
func uiImport(svc *engine.Service, cfg memory.Config) func(context.Context, ui.ImportRequest) ([]string, error) {
	return func(ctx context.Context, req ui.ImportRequest) ([]string, error) {
		bad := func(err error) error { return &memory.InputError{Field: "file", Message: err.Error()} }
		opt := newImportOptions(cfg.UserID)
		opt.User = req.User
		src := importers.Source{Path: "the file", Data: req.Data}
		format, err := importers.Detect(src)
		if err != nil {
			return nil, bad(err)
		}
		if name := format.Name(); name != "mnemo" && name != "deerflow" {
			return nil, bad(fmt.Errorf("%s files are imported with 'mnemo import'", name))
		}
		parsed, err := format.Parse(src, opt)
		if err != nil {
			return nil, bad(err)
		}
		for _, s := range parsed.Scopes {
			if req.May != nil && !req.May(s.Scope) {
				return nil, bad(fmt.Errorf("it would write the memory of %s, which you may not change", s.Scope.Key()))
			}
		}
		res, err := svc.Import(ctx, memory.ImportRequest{Scopes: parsed.Scopes})
		if errors.Is(err, memory.ErrInvalidInput) {
			return nil, bad(err)
		}
		if err != nil {
			return nil, err
		}
		out := importNotes(parsed, res)
		for _, s := range parsed.Scopes {
			out = append(out, fmt.Sprintf("imported into %s: %s, %s", s.Scope.Key(), plural(len(s.Turns), "turn"), plural(len(s.Doc.Facts), "fact")))
		}
		return out, nil
	}
}
