package memory

import "context"

// Actor is who made a change to the memory: the person in the viewer, the
// assistant through a tool, the model's updater, an import or the command
// line. It is carried in the context of the call that makes the change
// (WithActor) and recorded on every fact event that call adds, so the
// history can say who did what without every method taking one more
// argument.
type Actor string

// The actors.
const (
	// ActorViewer is the person, through the memory viewer.
	ActorViewer Actor = "viewer"
	// ActorAssistant is the assistant, through an MCP tool call.
	ActorAssistant Actor = "assistant"
	// ActorUpdater is the language model's updater and its upkeep
	// (consolidation, decay).
	ActorUpdater Actor = "updater"
	// ActorImport is an import of an export or of another tool's memory.
	ActorImport Actor = "import"
	// ActorCLI is the person, through the command line.
	ActorCLI Actor = "cli"
)

type actorKey struct{}

// WithActor returns ctx carrying the actor of the changes made with it.
func WithActor(ctx context.Context, a Actor) context.Context {
	return context.WithValue(ctx, actorKey{}, a)
}

// ActorFrom is the actor ctx carries; "" when none was set.
func ActorFrom(ctx context.Context) Actor {
	a, _ := ctx.Value(actorKey{}).(Actor)
	return a
}
