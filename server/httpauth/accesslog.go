package httpauth

import (
	"context"
	"log/slog"
	"net/http"
	"time"
)

// logNote is where Authenticate, running inside AccessLog, leaves the
// identity for the log line AccessLog writes when the request is done.
type logNote struct {
	id Identity
	ok bool
}

type logNoteKey struct{}

// noteIdentity records id for the access log, when there is one.
func noteIdentity(ctx context.Context, id Identity) {
	if n, ok := ctx.Value(logNoteKey{}).(*logNote); ok {
		n.id, n.ok = id, true
	}
}

// AccessLog returns middleware that writes one Info line to logger per
// request, when it is done: method, path (without the query, which could
// carry a token), status, bytes written, duration, client address, and,
// for an authenticated request, the user, agent, method and credential id.
// No header is logged, so neither the Authorization header nor a token
// ever reaches the log. Put it outermost, so that refusals are logged too.
func AccessLog(logger *slog.Logger) func(http.Handler) http.Handler {
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			start := time.Now()
			note := &logNote{}
			rec := &recorder{ResponseWriter: w, status: http.StatusOK}
			next.ServeHTTP(rec, r.WithContext(context.WithValue(r.Context(), logNoteKey{}, note)))
			attrs := []slog.Attr{
				slog.String("method", r.Method),
				slog.String("path", r.URL.Path),
				slog.Int("status", rec.status),
				slog.Int64("bytes", rec.bytes),
				slog.Duration("duration", time.Since(start)),
				slog.String("remote", r.RemoteAddr),
			}
			if c := ClientAddr(r); c != connAddr(r) {
				attrs = append(attrs, slog.String("client", c))
			}
			if note.ok {
				attrs = append(attrs,
					slog.String("user", note.id.User),
					slog.String("auth", string(note.id.Method)),
					slog.String("credential", note.id.Credential))
				if note.id.Agent != "" {
					attrs = append(attrs, slog.String("agent", note.id.Agent))
				}
			}
			logger.LogAttrs(r.Context(), slog.LevelInfo, "http request", attrs...)
		})
	}
}

// recorder notes the status and size of a response. It passes Flush on,
// which streamed (SSE) responses need.
type recorder struct {
	http.ResponseWriter
	status  int
	bytes   int64
	written bool
}

func (r *recorder) WriteHeader(status int) {
	if !r.written {
		r.status, r.written = status, true
	}
	r.ResponseWriter.WriteHeader(status)
}

func (r *recorder) Write(p []byte) (int, error) {
	r.written = true
	n, err := r.ResponseWriter.Write(p)
	r.bytes += int64(n)
	return n, err
}

// Flush implements http.Flusher when the underlying writer does.
func (r *recorder) Flush() {
	if f, ok := r.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

// Unwrap lets http.ResponseController reach the underlying writer.
func (r *recorder) Unwrap() http.ResponseWriter { return r.ResponseWriter }

// Healthz returns the liveness handler: 200 "ok" while the process serves.
func Healthz() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		w.Header().Set("Cache-Control", "no-store")
		w.Write([]byte("ok\n"))
	})
}

// Readyz returns the readiness handler: 200 "ready" when check returns
// nil, else 503 "not ready" (the error goes to logger, not the client,
// since it may name paths or hosts). check should be quick; it runs on
// the request's context.
func Readyz(check func(ctx context.Context) error, logger *slog.Logger) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		w.Header().Set("Cache-Control", "no-store")
		if err := check(r.Context()); err != nil {
			logger.WarnContext(r.Context(), "not ready", "err", err)
			w.WriteHeader(http.StatusServiceUnavailable)
			w.Write([]byte("not ready\n"))
			return
		}
		w.Write([]byte("ready\n"))
	})
}
