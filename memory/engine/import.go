package engine

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/mnemo-mcp/mnemo/memory"
)

// Import is the one way another assistant's memory reaches the store:
// mnemo import and the viewer's import call it with what an importers
// format read. Every record goes through the rules and limits the tools
// apply to what they store (CheckImport), so an import never stores what
// add_memory or save_memory would refuse.
//
// Conversations become turns appended to req.Scope, each exchange once:
// its idempotency key comes from its source message, so importing the
// same export again adds nothing; an exchange that breaks a rule is left
// out and counted in Refused. Facts are added to req.Scope's document,
// skipping those it knows; one that breaks a rule is refused alone, but
// more than max_facts refuses them all. Scopes are written whole into
// empty scopes: a scope that breaks a rule or holds memory already
// refuses the import before anything is written.
//
// With req.DryRun nothing is written. Errors wrapping ErrInvalidInput
// say what to fix.
func (s *Service) Import(ctx context.Context, req memory.ImportRequest) (*memory.ImportResult, error) {
	res := &memory.ImportResult{}
	if len(req.Conversations) > 0 || len(req.Facts) > 0 {
		if err := checkScope(req.Scope); err != nil {
			return nil, err
		}
	}
	if len(req.Conversations) > 0 {
		if err := s.importChats(ctx, req, res); err != nil {
			return nil, err
		}
	}
	if len(req.Facts) > 0 {
		if err := s.importFacts(ctx, req, res); err != nil {
			return nil, err
		}
	}
	if len(req.Scopes) > 0 || len(req.Conversations) == 0 && len(req.Facts) == 0 {
		if err := s.importScopes(ctx, req, res); err != nil {
			return nil, err
		}
	}
	return res, nil
}

// refuse counts a record the rules refuse, keeping the first reason.
func refuse(res *memory.ImportResult, why string) {
	res.Refused++
	if res.RefusedWhy == "" {
		res.RefusedWhy = why
	}
}

// importChats plans the turns of req's conversations and appends them.
func (s *Service) importChats(ctx context.Context, req memory.ImportRequest, res *memory.ImportResult) error {
	stored, err := s.store.ReadTurns(ctx, req.Scope, 0)
	if err != nil {
		return err
	}
	seen := make(map[string]bool, len(stored))
	for _, t := range stored {
		if t.IdempotencyKey != "" {
			seen[t.ThreadID+"\x00"+t.IdempotencyKey] = true
		}
	}
	now := s.now().UTC()
	planChats(s.cfg, req.Scope, req.Format, req.Conversations, seen, now, s.newID, req.Progress, res)
	if req.DryRun || len(res.Turns) == 0 {
		return nil
	}
	// Once the append starts, finish it even if the caller gives up.
	ctx = context.WithoutCancel(ctx)
	defer s.invalidate(req.Scope)
	if _, err := s.store.AppendTurns(ctx, req.Scope, res.Turns); err != nil {
		return fmt.Errorf("store turns: %w", err)
	}
	return nil
}

// importScopes checks req's scopes and writes each into its empty scope.
func (s *Service) importScopes(ctx context.Context, req memory.ImportRequest, res *memory.ImportResult) error {
	red, err := checkScopes(s.cfg, req.Scopes)
	if err != nil {
		return err
	}
	res.Redacted = append(res.Redacted, red...)
	if req.DryRun {
		return nil
	}
	for _, sc := range req.Scopes {
		doc, err := s.store.LoadDocument(ctx, sc.Scope)
		if err != nil {
			return err
		}
		turns, err := s.store.ReadTurns(ctx, sc.Scope, 0)
		if err != nil {
			return err
		}
		if doc.Revision != 0 || len(turns) > 0 {
			return &memory.InputError{Message: fmt.Sprintf("%s already holds memory (revision %d, %d turns); import only writes into an empty scope: import into another user with --user NAME, or delete it first with 'mnemo forget --user %s%s --yes' (after an export if you want to keep it)",
				sc.Scope.Key(), doc.Revision, len(turns), sc.Scope.UserID, agentFlag(sc.Scope))}
		}
	}
	ctx = context.WithoutCancel(ctx)
	for i, sc := range req.Scopes {
		if req.Progress != nil {
			req.Progress(i, len(req.Scopes))
		}
		err := s.store.ImportScope(ctx, sc.Scope, sc.Doc, sc.Turns)
		s.invalidate(sc.Scope)
		if err != nil {
			done := make([]string, i)
			for j := range done {
				done[j] = req.Scopes[j].Scope.Key()
			}
			msg := fmt.Sprintf("import into %s: %v", sc.Scope.Key(), err)
			if i > 0 {
				msg += "; already imported: " + strings.Join(done, ", ")
			}
			return errors.New(msg)
		}
		res.Turns = append(res.Turns, sc.Turns...)
	}
	if req.Progress != nil {
		req.Progress(len(req.Scopes), len(req.Scopes))
	}
	return nil
}

// agentFlag is the --agent flag naming scope's agent, for messages.
func agentFlag(scope memory.Scope) string {
	if scope.AgentName == "" {
		return ""
	}
	return " --agent " + scope.AgentName
}

// checkScopes validates whole scopes about to be imported: at least one;
// distinct scopes; a known document version; turns in increasing Seq
// order; and everything CheckImport checks, redacting secrets in place.
// It returns the redactions of every scope.
func checkScopes(cfg memory.Config, scopes []memory.ImportedScope) ([]memory.Redaction, error) {
	if len(scopes) == 0 {
		return nil, memory.Invalid("", "holds no memory to import")
	}
	var redacted []memory.Redaction
	seen := map[memory.Scope]bool{}
	for _, s := range scopes {
		if err := checkScope(s.Scope); err != nil {
			return nil, err
		}
		if seen[s.Scope] {
			return nil, memory.Invalid("", "holds scope %s twice", s.Scope.Key())
		}
		seen[s.Scope] = true
		if s.Doc == nil {
			return nil, memory.Invalid(s.Scope.Key(), "has no memory document")
		}
		if v := s.Doc.Version; v != "" && v != memory.SchemaVersion {
			return nil, memory.Invalid(s.Scope.Key(), "memory document version %q is not %q", v, memory.SchemaVersion)
		}
		var last int64
		for i, t := range s.Turns {
			if t.Seq <= last {
				return nil, memory.Invalid(s.Scope.Key(), "turn %d has seq %d after seq %d; turns must be in increasing seq order", i+1, t.Seq, last)
			}
			last = t.Seq
		}
		found, err := CheckImport(cfg, s.Scope, s.Doc, s.Turns)
		if err != nil {
			return nil, err
		}
		redacted = append(redacted, found...)
	}
	return redacted, nil
}
