package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/mnemo-mcp/mnemo/importers"
	"github.com/mnemo-mcp/mnemo/memory"
)

// exportFile is a whole export (importers.ExportFile: the format is
// written here and read by the importers).
type exportFile = importers.ExportFile

// exportScope is one scope's memory in an export.
type exportScope = importers.ExportScope

// runExport is "mnemo export [--out FILE] [--user U [--agent A] | --all]".
func runExport(ctx context.Context, e *call) int {
	all := e.args.flag("all")
	if all && (e.args.has("user") || e.args.has("agent")) {
		return e.fail(exitUsage, "--all exports every user; leave out --user and --agent, or --all")
	}
	want, err := e.scope()
	if err != nil {
		return e.fail(exitUsage, "%v", err)
	}
	if dataDirMissing(e.cfg) {
		return e.fail(exitError, "%s; nothing to export", noMemoryIn(e.cfg.DataDir))
	}
	store, err := openStore(ctx, e.cfg, e.log)
	if err != nil {
		return e.fail(exitError, "%v", err)
	}
	defer store.Close()

	stored, err := store.Scopes(ctx)
	if err != nil {
		return e.fail(exitError, "%v", err)
	}
	scopes := stored
	if !all {
		scopes = scopesOf(stored, want)
	}
	if len(scopes) == 0 {
		return e.fail(exitError, "no memory is stored for %s in %s; nothing to export", want.Key(), storageName(e.cfg))
	}
	file, err := exportScopes(ctx, store, scopes, time.Now())
	if err != nil {
		return e.fail(exitError, "%v", err)
	}
	data, err := json.MarshalIndent(file, "", "  ")
	if err != nil {
		return e.fail(exitError, "encode export: %v", err)
	}
	data = append(data, '\n')
	turns, facts := 0, 0
	for _, s := range file.Scopes {
		turns += len(s.Turns)
		facts += len(s.Document.Facts)
	}
	out := e.args.str("out")
	if out == "" || out == "-" {
		e.stdout.Write(data)
		out = "stdout"
	} else if err := writeFilePrivate(out, data); err != nil {
		return e.fail(exitError, "%v", err)
	}
	fmt.Fprintf(e.stderr, "exported %d scope(s), %d turns, %d facts to %s\n", len(file.Scopes), turns, facts, out)
	return exitOK
}

// exportScopes reads the memory of scopes. Reads take no lock, so a server
// writing at the same time may leave a document and a turn log that are a
// moment apart; export while no server runs for an exact copy.
func exportScopes(ctx context.Context, store memory.Store, scopes []memory.Scope, now time.Time) (*exportFile, error) {
	file := &exportFile{
		Format:     importers.ExportFormat,
		Version:    importers.ExportVersion,
		ExportedAt: now.UTC(),
		Generator:  "mnemo " + version(),
		Scopes:     []exportScope{},
	}
	for _, sc := range scopes {
		doc, err := store.LoadDocument(ctx, sc)
		if err != nil {
			return nil, fmt.Errorf("load memory of %s: %w", sc.Key(), err)
		}
		turns, err := store.ReadTurns(ctx, sc, 0)
		if err != nil {
			return nil, fmt.Errorf("read turns of %s: %w", sc.Key(), err)
		}
		if turns == nil {
			turns = []memory.Turn{}
		}
		file.Scopes = append(file.Scopes, exportScope{Scope: sc, Document: doc, Turns: turns})
	}
	return file, nil
}

// writeFilePrivate writes data to path, readable by its owner only,
// replacing the file atomically: temp file, fsync, rename.
func writeFilePrivate(path string, data []byte) error {
	dir, name := filepath.Split(path)
	if dir == "" {
		dir = "."
	}
	f, err := os.CreateTemp(dir, "."+name+".*.tmp")
	if err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	tmp := f.Name()
	_, err = f.Write(data)
	if err == nil {
		err = f.Chmod(0o600)
	}
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp, path)
	}
	if err != nil {
		os.Remove(tmp)
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}
