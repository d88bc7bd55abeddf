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

// stampActor wraps an UpdateDocument function so that the fact events it
// adds record the context's actor. The events it adds are those after the
// last event the document held before (the history drops its oldest
// events past MaxFactEvents, so a count would not do).
func stampActor(ctx context.Context, fn func(*Document) error) func(*Document) error {
	a := ActorFrom(ctx)
	if a == "" {
		return fn
	}
	return func(d *Document) error {
		var last FactEvent
		had := len(d.FactEvents) > 0
		if had {
			last = d.FactEvents[len(d.FactEvents)-1]
		}
		if err := fn(d); err != nil {
			return err
		}
		from := 0
		if had {
			// The events fn added follow the old last event; if fn
			// rewrote the history so that it is gone, nothing is stamped.
			from = len(d.FactEvents)
			for i := len(d.FactEvents) - 1; i >= 0; i-- {
				if sameEvent(d.FactEvents[i], last) {
					from = i + 1
					break
				}
			}
		}
		for i := from; i < len(d.FactEvents); i++ {
			if d.FactEvents[i].Actor == "" {
				d.FactEvents[i].Actor = a
			}
		}
		return nil
	}
}

// sameEvent reports whether a and b are one event, its content aside: a
// forget removes the forgotten text from the earlier events of a fact.
func sameEvent(a, b FactEvent) bool {
	a.Content, b.Content = "", ""
	return a == b
}
