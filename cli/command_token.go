package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"text/tabwriter"
	"time"

	"github.com/mnemo-mcp/mnemo/memory"
	"github.com/mnemo-mcp/mnemo/server"
	"github.com/mnemo-mcp/mnemo/server/httpauth"
)

const tokenDetails = `A token lets one user (and, with --agent, one agent of the user) use
mnemo serve --http: requests send it as "Authorization: Bearer TOKEN", and
the memory they use is that user's, whatever the tool arguments say. The
same token logs a person in to the memory viewer at /ui/login.

Where tokens are kept follows the storage setting: with PostgreSQL, in its
mnemo_tokens table, so that the command works from any machine with the
storage URL and every instance on the database honours a new token and
refuses a revoked one within seconds; otherwise in tokens.json in the data
directory. Only a hash of each token is kept, so a lost token cannot be
shown again: revoke it and add a new one.
`

// runToken is "mnemo token add|list|revoke".
func runToken(ctx context.Context, c *call) int {
	if len(c.args.positional) == 0 {
		return c.fail(exitUsage, "which action? add, list or revoke; run 'mnemo help token'")
	}
	action, rest := c.args.positional[0], c.args.positional[1:]
	onlyWith := func(flags ...string) int {
		allowed := map[string]bool{}
		for _, f := range flags {
			allowed[f] = true
		}
		for name := range c.args.values {
			if !allowed[name] {
				return c.fail(exitUsage, "token %s takes no --%s", action, name)
			}
		}
		return exitOK
	}
	var tokens httpauth.TokenStore
	closeStore := func() error { return nil }
	defer func() { closeStore() }()
	open := func() int {
		ts, _, closeFn, err := openTokenStore(ctx, c.cfg, c.log)
		if err != nil {
			return c.fail(exitError, "%v", err)
		}
		tokens = ts
		closeStore = closeFn
		return exitOK
	}
	switch action {
	case "add":
		if code := onlyWith("user", "agent"); code != exitOK {
			return code
		}
		if len(rest) > 0 {
			return c.fail(exitUsage, "unexpected argument %q; usage: mnemo token add --user U [--agent A]", rest[0])
		}
		user := c.args.str("user")
		if user == "" {
			return c.fail(exitUsage, "token add needs --user: the user whose memory the token opens")
		}
		agent := c.args.str("agent")
		if err := memory.ValidateID("user", user); err != nil {
			return c.fail(exitUsage, "%v", err)
		}
		if agent != "" {
			if err := memory.ValidateID("agent", agent); err != nil {
				return c.fail(exitUsage, "%v", err)
			}
		}
		if code := open(); code != exitOK {
			return code
		}
		secret, tok, err := httpauth.IssueToken(ctx, tokens, user, agent)
		if err != nil {
			return c.fail(exitError, "%v", err)
		}
		who := "user " + tok.User
		if tok.Agent != "" {
			who += ", agent " + tok.Agent
		}
		// The token alone on stdout (TOKEN=$(mnemo token add ...)); the
		// explanation on stderr, without it, so that a captured log of
		// the command does not hold it twice.
		fmt.Fprintf(c.stdout, "%s\n", secret)
		fmt.Fprintf(c.stderr, "Token %s for %s, printed above. It is shown only this once: copy it now.\n"+
			"Clients send it with every request to mnemo serve --http, as the header\n"+
			"  Authorization: Bearer <the token>\n"+
			"It also logs in to the memory viewer at %s\n"+
			"Revoke it with: mnemo token revoke %s\n", tok.ID, who, c.viewerLogin(), tok.ID)
		return exitOK
	case "list":
		if code := onlyWith("json"); code != exitOK {
			return code
		}
		if len(rest) > 0 {
			return c.fail(exitUsage, "unexpected argument %q; usage: mnemo token list [--json]", rest[0])
		}
		if code := open(); code != exitOK {
			return code
		}
		list, err := tokens.Tokens(ctx)
		if err != nil {
			return c.fail(exitError, "%v", err)
		}
		if c.args.flag("json") {
			type row struct {
				ID      string    `json:"id"`
				User    string    `json:"user"`
				Agent   string    `json:"agent,omitempty"`
				Created time.Time `json:"created"`
			}
			rows := make([]row, len(list))
			for i, t := range list {
				rows[i] = row{t.ID, t.User, t.Agent, t.Created}
			}
			enc := json.NewEncoder(c.stdout)
			enc.SetIndent("", "  ")
			if err := enc.Encode(rows); err != nil {
				return c.fail(exitError, "%v", err)
			}
			return exitOK
		}
		if len(list) == 0 {
			fmt.Fprintln(c.stdout, "No tokens. Add one with: mnemo token add --user NAME")
			return exitOK
		}
		tw := tabwriter.NewWriter(c.stdout, 0, 4, 2, ' ', 0)
		fmt.Fprintln(tw, "ID\tUSER\tAGENT\tCREATED")
		for _, t := range list {
			agent := t.Agent
			if agent == "" {
				agent = "-"
			}
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", t.ID, t.User, agent, t.Created.UTC().Format(time.RFC3339))
		}
		tw.Flush()
		return exitOK
	case "revoke":
		if code := onlyWith(); code != exitOK {
			return code
		}
		if len(rest) != 1 {
			return c.fail(exitUsage, "usage: mnemo token revoke ID (the ids are in 'mnemo token list')")
		}
		if code := open(); code != exitOK {
			return code
		}
		tok, err := tokens.RevokeToken(ctx, rest[0])
		if errors.Is(err, httpauth.ErrNoToken) {
			return c.fail(exitError, "no token %q; the ids are in 'mnemo token list'", rest[0])
		}
		if err != nil {
			return c.fail(exitError, "%v", err)
		}
		fmt.Fprintf(c.stdout, "Revoked %s (user %s). Every server refuses it within seconds.\n", tok.ID, tok.User)
		return exitOK
	}
	return c.fail(exitUsage, "unknown action %q; want add, list or revoke", action)
}

// viewerLogin is where the memory viewer's login page is for the
// configuration: at the origin of http_public_url, else at the default
// address of serve --http.
func (c *call) viewerLogin() string {
	if c.cfg.HTTP.PublicURL != "" {
		return server.LoginURL(c.cfg.HTTP.PublicURL)
	}
	return server.LoginURL("http://"+server.DefaultHTTPAddr+server.MCPPath) + " (when served at the default address; serve --http prints it)"
}
