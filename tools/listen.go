package tools

import (
	"context"
	"sync"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/mnemo-mcp/mnemo/memory"
)

// Resource updates for protocol 2026-07-28: a client of that revision
// has no notification stream of its own (no GET stream, no
// resources/subscribe); it opens subscriptions/listen naming the resource
// URIs it wants notifications/resources/updated for, and holds the
// request open. mcp-go acknowledges the subscription and keeps the stream
// open but does not route resources/updated to it, so the streams are
// tracked here: each with its caller and URIs, from the request until it
// ends. A stream gets an update only for a URI it named and, with a
// caller, only for a scope the caller may read (resources.go).

// listenStreams are the open subscriptions/listen streams.
type listenStreams struct {
	mu sync.Mutex
	m  map[server.ClientSession]listener
}

// listener is one stream: whose, and the URIs it listens to.
type listener struct {
	client logClient
	uris   map[string]bool
	id     any // the subscriptions/listen request's, which tags each notification
}

// track registers the streams through the hook that runs before
// subscriptions/listen; each is dropped when its request ends.
func (ls *listenStreams) track(hooks *server.Hooks) {
	hooks.AddBeforeSubscriptionsListen(func(ctx context.Context, id any, req *mcp.SubscriptionsListenRequest) {
		session := server.ClientSessionFromContext(ctx)
		want := req.Params.Notifications.ResourceSubscriptions
		if session == nil || len(want) == 0 {
			return
		}
		l := listener{client: clientOf(ctx), uris: map[string]bool{}, id: id}
		for _, uri := range want {
			l.uris[uri] = true
		}
		ls.mu.Lock()
		ls.m[session] = l
		ls.mu.Unlock()
		context.AfterFunc(ctx, func() {
			ls.mu.Lock()
			defer ls.mu.Unlock()
			delete(ls.m, session)
		})
	})
}

// send delivers notifications/resources/updated for the URIs of scope sc
// to the streams that listen to them and may read sc. authenticated says
// every stream must have a caller; defaultUser is whose shared memory the
// fixed documents are without one.
func (ls *listenStreams) send(sc memory.Scope, authenticated bool, defaultUser string) {
	ls.mu.Lock()
	defer ls.mu.Unlock()
	for session, l := range ls.m {
		uris := scopeURIs(sc)
		own := sc == memory.Scope{UserID: defaultUser}
		if l.client.hasCaller {
			if !l.client.caller.reads(sc) {
				continue
			}
			own = sc == memory.Scope{UserID: l.client.caller.User, AgentName: l.client.caller.Agent}
		} else if authenticated {
			continue
		}
		if own {
			for _, d := range memoryDocs {
				uris = append(uris, resourceRoot+d.name)
			}
		}
		for _, uri := range uris {
			if !l.uris[uri] {
				continue
			}
			n := mcp.JSONRPCNotification{JSONRPC: mcp.JSONRPC_VERSION, Notification: mcp.Notification{
				Method: string(mcp.MethodNotificationResourceUpdated),
				Params: mcp.NotificationParams{
					Meta:             map[string]any{mcp.MetaKeySubscriptionID: l.id},
					AdditionalFields: map[string]any{"uri": uri},
				},
			}}
			select {
			case session.NotificationChannel() <- n:
			default:
				// A full stream misses the update; the client reads the
				// resource again when it catches up.
			}
		}
	}
}
