package cli

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/mnemo-mcp/mnemo/memory"
)

// runProfile is "mnemo profile set|clear": it replaces or clears one
// section of a profile through the same Service.UpdateProfile as the
// update_profile tool, so the document it replaces is kept as a version.
func runProfile(ctx context.Context, c *call) int {
	pos := c.args.positional
	if len(pos) == 0 || pos[0] != "set" && pos[0] != "clear" {
		return c.fail(exitUsage, "say what to do: 'profile set --section S TEXT' or 'profile clear --section S'")
	}
	if !c.args.has("section") {
		return c.fail(exitUsage, "name the section with --section: %s", strings.Join(memory.ProfileSections, ", "))
	}
	text := ""
	switch {
	case pos[0] == "set" && len(pos) != 2:
		return c.fail(exitUsage, "profile set takes the new text as one argument (quote it); to empty the section use 'profile clear'")
	case pos[0] == "set":
		text = pos[1]
		if strings.TrimSpace(text) == "" {
			return c.fail(exitUsage, "the new text is empty; to empty the section use 'profile clear'")
		}
	case len(pos) > 1:
		return c.fail(exitUsage, "profile clear takes no text")
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
	svc, err := openService(c.cfg, store, c.log, withoutModels, nil)
	if err != nil {
		return c.fail(exitError, "%v", err)
	}
	defer svc.Close(ctx)
	res, err := svc.UpdateProfile(ctx, memory.UpdateProfileRequest{
		UserID: scope.UserID, AgentName: scope.AgentName,
		Section: c.args.str("section"), Text: text, Source: memory.SourceCLI,
	})
	if err != nil {
		c.fail(exitError, "%v", err)
		if errors.Is(err, memory.ErrInvalidInput) {
			return exitUsage
		}
		return exitError
	}
	switch {
	case !res.Changed:
		fmt.Fprintf(c.stdout, "%s of %s already reads so; nothing changed\n", res.Section, scope.Key())
	case res.Text == "":
		fmt.Fprintf(c.stdout, "cleared %s of %s\n", res.Section, scope.Key())
	default:
		fmt.Fprintf(c.stdout, "set %s of %s\n", res.Section, scope.Key())
	}
	if res.Changed {
		fmt.Fprintf(c.stdout, "undo with: mnemo rollback --user %s%s (the previous document is kept as a version)\n", scope.UserID, agentFlag(scope))
	}
	return exitOK
}
