package engine

import (
	"context"
	"fmt"
	"strings"

	"github.com/mnemo-mcp/mnemo/memory"
)

// updateForgetting runs fn as a document update of scope and removes the
// texts it returns from the kept versions: in the update's own
// transaction when the store is a ForgettingUpdater, else right after
// (VersionScrubber). Versions deleted are counted in res.
func (s *Service) updateForgetting(ctx context.Context, scope memory.Scope, fn func(*memory.Document) ([]string, error), res *memory.ForgetResult) error {
	if fu, ok := s.base.(memory.ForgettingUpdater); ok {
		defer s.invalidate(scope)
		_, n, err := fu.UpdateDocumentForgetting(ctx, scope, fn)
		res.VersionsScrubbed += n
		return err
	}
	var texts []string
	_, err := s.store.UpdateDocument(ctx, scope, func(d *memory.Document) error {
		var err error
		texts, err = fn(d)
		return err
	})
	if err != nil {
		return err
	}
	if err := s.scrubVersions(ctx, scope, texts, res); err != nil {
		return fmt.Errorf("update memory of %s: %w", scope.Key(), err)
	}
	return nil
}

// unquotedReason returns a history reason without the text it quotes:
// reasons written by earlier builds quoted a fact's wording ("stated
// again by t as \"…\"", "reworded … (was \"…\")"). The quote and what
// follows it are cut; a reason that quotes nothing is returned as is.
func unquotedReason(r string) string {
	i := strings.IndexByte(r, '"')
	if i < 0 {
		return r
	}
	r = strings.TrimRight(r[:i], " (")
	r = strings.TrimSuffix(strings.TrimSuffix(r, " as"), " (was")
	return r + " (wording removed when the fact was forgotten)"
}
