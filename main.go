// Command mnemo is a Model Context Protocol server that gives an AI
// assistant a long-term memory it maintains itself. This file is the door:
// the whole command line is package cli.
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"

	"github.com/mnemo-mcp/mnemo/cli"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	go func() {
		// After the first signal, restore the default handling so that a
		// second one ends a shutdown that hangs.
		<-ctx.Done()
		stop()
	}()
	code := cli.Run(ctx, os.Args[1:], os.Getenv, os.Stdin, os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}
