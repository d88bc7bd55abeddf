// Package cli is the command line of mnemo, a Model Context Protocol
// server that gives an AI assistant a long-term memory it maintains
// itself: the host stores each exchange with add_memory and gets back a
// token-budgeted <memory> text from retrieve_memory before it answers.
//
// Run is the whole program. Every command is a row of one table
// (commands.go) and runs the same way: one parse of its own flags and the
// settings flags (before or after the command name), one configuration
// load with one error and log-level policy (command.go), one way to open
// the store and the memory service (open.go). Each command lives in its
// own command_<name>.go; printers are in print.go. help.go prints the
// short help (mnemo --help), a command's help and the whole reference;
// invoked.go names mnemo in messages as the user ran it ("npx -y
// @mnemo-mcp/mnemo" through the npm launcher, which says so in
// MNEMO_LAUNCHER). mnemo serve is command_serve.go: it parses the
// flags and fills server.Config (the settings, and how to open the store,
// the service and the viewer's options); package server serves. In serve
// mode stdout carries only JSON-RPC messages; logs go to stderr.
package cli
