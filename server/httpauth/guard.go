package httpauth

import (
	"errors"
	"fmt"
	"html"
	"io"
	"math"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Origins lists what CheckHostOrigin accepts.
type Origins struct {
	// Hosts are the host names (no port) a request's Host may name.
	Hosts []string
	// Origins are the browser origins (scheme://host[:port]) allowed.
	Origins []string
	// AnyIPHost also accepts a Host that is an IP address: a server
	// listening on every interface is reached by whatever address, and a
	// DNS rebinding attack always shows a host name, never an address.
	AnyIPHost bool
	// Setting names where an operator allows more hosts and origins
	// (http_allowed_hosts); refusals name it.
	Setting string
}

// AllowedOrigins derives what CheckHostOrigin accepts from the listen
// address (host:port), the public URLs the server is reached by (its
// resource URL behind a proxy), and extra host names or origins the
// operator allows. A loopback listener accepts localhost, 127.0.0.1 and
// [::1]; a listener on every interface (0.0.0.0, [::] or no host) accepts
// IP addresses as Host as well.
func AllowedOrigins(listen string, publicURLs []string, extraHosts []string) (Origins, error) {
	host, port, err := net.SplitHostPort(listen)
	if err != nil {
		return Origins{}, fmt.Errorf("listen address %q: %w", listen, err)
	}
	var o Origins
	addHost := func(h string) {
		h = normalHost(h)
		if h != "" && !slices.Contains(o.Hosts, h) {
			o.Hosts = append(o.Hosts, h)
		}
	}
	addOrigin := func(origin string) {
		if !slices.Contains(o.Origins, origin) {
			o.Origins = append(o.Origins, origin)
		}
	}
	ip := net.ParseIP(host)
	switch {
	case host == "" || ip != nil && ip.IsUnspecified():
		o.AnyIPHost = true
		addHost("localhost")
	case isLoopback(host):
		for _, h := range []string{"localhost", "127.0.0.1", "::1"} {
			addHost(h)
		}
	default:
		addHost(host)
	}
	for _, h := range o.Hosts {
		for _, scheme := range []string{"http", "https"} {
			addOrigin(scheme + "://" + net.JoinHostPort(h, port))
		}
	}
	for _, raw := range publicURLs {
		u, err := url.Parse(raw)
		if err != nil || u.Host == "" || u.Scheme != "http" && u.Scheme != "https" {
			return Origins{}, fmt.Errorf("public URL %q: want an absolute http or https URL", raw)
		}
		addHost(u.Hostname())
		addOrigin(canonicalOrigin(u))
	}
	for _, h := range extraHosts {
		if u, err := url.Parse(h); err == nil && u.Scheme != "" && u.Host != "" {
			addHost(u.Hostname())
			addOrigin(canonicalOrigin(u))
			continue
		}
		addHost(h)
	}
	return o, nil
}

// normalHost is a host name compared case-insensitively, without brackets
// or a trailing dot.
func normalHost(h string) string {
	return strings.TrimSuffix(strings.ToLower(strings.Trim(h, "[]")), ".")
}

// canonicalOrigin is u's origin with its default port left out.
func canonicalOrigin(u *url.URL) string {
	host, port := strings.ToLower(u.Hostname()), u.Port()
	if port == "" || u.Scheme == "http" && port == "80" || u.Scheme == "https" && port == "443" {
		if strings.Contains(host, ":") {
			host = "[" + host + "]"
		}
		return strings.ToLower(u.Scheme) + "://" + host
	}
	return strings.ToLower(u.Scheme) + "://" + net.JoinHostPort(host, port)
}

// hostAllowed reports whether a request's Host header is acceptable.
func (o Origins) hostAllowed(hostport string) bool {
	host := hostport
	if h, _, err := net.SplitHostPort(hostport); err == nil {
		host = h
	}
	host = normalHost(host)
	if host == "" {
		return false
	}
	if slices.Contains(o.Hosts, host) {
		return true
	}
	return o.AnyIPHost && net.ParseIP(host) != nil
}

// originAllowed reports whether a request's Origin header is
// acceptable: absent (not a browser), one of the allowed origins, or
// "null" on a request the browser itself marks same-origin. A browser
// sends "Origin: null" for a form posted from a page served with
// Referrer-Policy: no-referrer, and always sets Sec-Fetch-Site, which no
// page can forge; a sandboxed frame or a foreign page posting with a null
// origin is marked cross-site (or same-site) and stays refused.
func (o Origins) originAllowed(r *http.Request) bool {
	origins := r.Header.Values("Origin")
	switch {
	case len(origins) == 0:
		return true
	case len(origins) > 1:
		return false
	case origins[0] == "null":
		return r.Header.Get("Sec-Fetch-Site") == "same-origin"
	}
	u, err := url.Parse(origins[0])
	if err != nil || u.Host == "" || u.Path != "" && u.Path != "/" {
		return false
	}
	return slices.Contains(o.Origins, canonicalOrigin(u))
}

// CheckHostOrigin returns middleware against DNS rebinding and cross-site
// requests: a request whose Host is not one of o's is answered 403
// Forbidden, as is one whose Origin header names a foreign origin (see
// originAllowed). A request without Origin (a non-browser client) passes.
// The refusal says what was refused and which setting allows it, as a
// small page for a browser and as text otherwise.
func CheckHostOrigin(o Origins) func(http.Handler) http.Handler {
	setting := ""
	if o.Setting != "" {
		setting = " If it is, add it to " + o.Setting + "."
	}
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if !o.hostAllowed(r.Host) {
				forbidden(w, r, fmt.Sprintf("This server does not answer to the host name %q: it is not one this server is known by.%s", r.Host, setting))
				return
			}
			if !o.originAllowed(r) {
				forbidden(w, r, fmt.Sprintf("Requests from pages of another site (origin %q) are refused; use this server's own pages, at the address it is known by.%s", r.Header.Get("Origin"), setting))
				return
			}
			next.ServeHTTP(w, r)
		})
	}
}

// forbidden answers 403 with msg: a page for a browser navigating, text
// for anything else.
func forbidden(w http.ResponseWriter, r *http.Request, msg string) {
	h := w.Header()
	h.Set("Cache-Control", "no-store")
	h.Set("X-Content-Type-Options", "nosniff")
	if !strings.Contains(r.Header.Get("Accept"), "text/html") {
		http.Error(w, "forbidden: "+msg, http.StatusForbidden)
		return
	}
	h.Set("Content-Type", "text/html; charset=utf-8")
	h.Set("Content-Security-Policy", "default-src 'none'; style-src 'unsafe-inline'; frame-ancestors 'none'")
	w.WriteHeader(http.StatusForbidden)
	fmt.Fprintf(w, `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>mnemo — refused</title>`+
		`<style>body{font:16px/1.5 system-ui,sans-serif;max-width:36rem;margin:3rem auto;padding:0 1rem}</style></head>`+
		`<body><main><h1>Refused</h1><p>%s</p></main></body></html>`, html.EscapeString(msg))
}

// LimitBody returns middleware that answers 413 to a request whose body
// is longer than limit bytes. A declared Content-Length over the limit is
// refused before any of the body is read; a body of unknown length
// (chunked) is counted as the handler reads it (http.MaxBytesReader), so
// no more than limit bytes are ever held, and once it runs over, the
// handler's answer is replaced by the 413. Put it after Authenticate, so
// that nobody's body is read before their credentials are checked.
func LimitBody(limit int64) func(http.Handler) http.Handler {
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.ContentLength > limit {
				dropBody(w, r)
				tooLarge(w, limit)
				return
			}
			if r.Body == nil || r.Body == http.NoBody {
				next.ServeHTTP(w, r)
				return
			}
			lw := &limitWriter{ResponseWriter: w, limit: limit}
			r.Body = &limitedBody{ReadCloser: http.MaxBytesReader(w, r.Body, limit), w: lw}
			next.ServeHTTP(lw, r)
		})
	}
}

// limitedBody notes in w when the body ran over the limit.
type limitedBody struct {
	io.ReadCloser
	w *limitWriter
}

func (b *limitedBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	var mbe *http.MaxBytesError
	if errors.As(err, &mbe) {
		b.w.over = true
	}
	return n, err
}

// limitWriter answers 413 in place of whatever the handler writes once
// the request body ran over the limit. Handlers read the body before
// they answer, in the request's goroutine, so over needs no lock.
type limitWriter struct {
	http.ResponseWriter
	limit   int64
	over    bool
	refused bool
}

func (w *limitWriter) refuse() bool {
	if !w.over {
		return false
	}
	if !w.refused {
		w.refused = true
		tooLarge(w.ResponseWriter, w.limit)
	}
	return true
}

func (w *limitWriter) WriteHeader(code int) {
	if !w.refuse() {
		w.ResponseWriter.WriteHeader(code)
	}
}

func (w *limitWriter) Write(p []byte) (int, error) {
	if w.refuse() {
		return len(p), nil
	}
	return w.ResponseWriter.Write(p)
}

func (w *limitWriter) Flush() {
	if !w.refuse() {
		http.NewResponseController(w.ResponseWriter).Flush()
	}
}

// Unwrap lets http.ResponseController reach the connection's writer.
func (w *limitWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// BodyDeadline returns middleware that gives a request body d to arrive:
// past it, reading the body fails and the request ends (a client that
// trickles a body never finishing holds the connection no longer). The
// deadline is lifted once the body is read to its end, and at once for a
// request without a body, so that a long call (or a notification stream)
// is cut neither by it nor by the server's ReadTimeout, which it is meant
// to run under (the outermost guard, so that every route has it).
func BodyDeadline(d time.Duration) func(http.Handler) http.Handler {
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			rc := http.NewResponseController(w)
			if d <= 0 || r.Body == nil || r.Body == http.NoBody {
				_ = rc.SetReadDeadline(time.Time{})
				next.ServeHTTP(w, r)
				return
			}
			if err := rc.SetReadDeadline(time.Now().Add(d)); err != nil {
				next.ServeHTTP(w, r) // not a connection that has deadlines
				return
			}
			r.Body = &deadlineBody{ReadCloser: r.Body, rc: rc}
			next.ServeHTTP(w, r)
		})
	}
}

// deadlineBody lifts the read deadline when the body has been read.
type deadlineBody struct {
	io.ReadCloser
	rc     *http.ResponseController
	lifted bool
}

func (b *deadlineBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	if errors.Is(err, io.EOF) && !b.lifted {
		b.lifted = true
		_ = b.rc.SetReadDeadline(time.Time{})
	}
	return n, err
}

// dropBody makes the server read none of r's body: the connection is
// closed after the answer (not kept, which would mean reading the body to
// its end), and its read deadline is set in the past, so that the server
// does not read what is left of it either before closing (net/http reads
// up to 256 KiB of an unread body to reuse the connection). A client that
// sends a body nobody will read holds the connection no longer than the
// answer takes.
func dropBody(w http.ResponseWriter, r *http.Request) {
	if r.Body == nil || r.Body == http.NoBody {
		return
	}
	w.Header().Set("Connection", "close")
	_ = http.NewResponseController(w).SetReadDeadline(time.Unix(1, 0))
}

func tooLarge(w http.ResponseWriter, limit int64) {
	w.Header().Set("Connection", "close")
	http.Error(w, fmt.Sprintf("request body too large: at most %d bytes", limit), http.StatusRequestEntityTooLarge)
}

// RateOptions configures RateLimit.
type RateOptions struct {
	// Rate is the sustained requests per second per credential.
	Rate float64
	// Burst is how many requests may come at once; at least 1.
	Burst int
	// Now is the clock; default time.Now.
	Now func() time.Time
	// MaxKeys bounds how many credentials are tracked; default 10,000.
	// Full buckets are forgotten first when the bound is reached.
	MaxKeys int
	// Refuse answers a request over the limit; nil answers 429 in text.
	// It is given the time to suggest (whole seconds), already set in
	// Retry-After.
	Refuse func(w http.ResponseWriter, r *http.Request, retry time.Duration)
}

// RateLimit returns middleware that limits each credential (the
// identity's Credential; the client address for a request without one) to
// a token bucket of Rate per second and Burst at once. A request over the
// limit is answered 429 with Retry-After in whole seconds.
func RateLimit(opts RateOptions) func(http.Handler) http.Handler {
	l := newLimiter(opts)
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			key := "addr:" + ClientAddr(r)
			if id, ok := IdentityFrom(r.Context()); ok {
				key = string(id.Method) + ":" + id.Credential
			}
			if wait := l.take(key); wait > 0 {
				dropBody(w, r)
				secs := int(math.Ceil(wait.Seconds()))
				w.Header().Set("Retry-After", strconv.Itoa(secs))
				if opts.Refuse != nil {
					opts.Refuse(w, r, time.Duration(secs)*time.Second)
					return
				}
				http.Error(w, "too many requests: slow down and retry after the time in Retry-After", http.StatusTooManyRequests)
				return
			}
			next.ServeHTTP(w, r)
		})
	}
}

// limiter holds one token bucket per key.
type limiter struct {
	rate    float64
	burst   float64
	now     func() time.Time
	maxKeys int

	mu      sync.Mutex
	buckets map[string]*bucket
}

type bucket struct {
	tokens float64
	last   time.Time
}

func newLimiter(opts RateOptions) *limiter {
	if opts.Burst < 1 {
		opts.Burst = 1
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.MaxKeys <= 0 {
		opts.MaxKeys = 10000
	}
	return &limiter{rate: opts.Rate, burst: float64(opts.Burst), now: opts.Now, maxKeys: opts.MaxKeys, buckets: map[string]*bucket{}}
}

// take spends one token of key's bucket and returns 0, or returns how long
// until a token is there, spending nothing.
func (l *limiter) take(key string) time.Duration {
	l.mu.Lock()
	defer l.mu.Unlock()
	now := l.now()
	b, ok := l.buckets[key]
	if !ok {
		if len(l.buckets) >= l.maxKeys {
			l.forgetFull(now)
		}
		b = &bucket{tokens: l.burst, last: now}
		l.buckets[key] = b
	}
	if elapsed := now.Sub(b.last); elapsed > 0 {
		b.tokens = math.Min(l.burst, b.tokens+elapsed.Seconds()*l.rate)
		b.last = now
	}
	if b.tokens >= 1 {
		b.tokens--
		return 0
	}
	if l.rate <= 0 {
		return time.Hour
	}
	return time.Duration((1 - b.tokens) / l.rate * float64(time.Second))
}

// forgetFull drops the buckets that have refilled (forgetting them loses
// nothing), or all of them when none has.
func (l *limiter) forgetFull(now time.Time) {
	for k, b := range l.buckets {
		if b.tokens+now.Sub(b.last).Seconds()*l.rate >= l.burst {
			delete(l.buckets, k)
		}
	}
	if len(l.buckets) >= l.maxKeys {
		clear(l.buckets)
	}
}

// ConcurrencyOptions configures LimitConcurrent.
type ConcurrencyOptions struct {
	// Max is how many requests of one client address may run at once;
	// at least 1.
	Max int
	// Refuse answers a request over Max; nil answers 429 in text. It is
	// given the time to suggest in Retry-After, already set.
	Refuse func(w http.ResponseWriter, r *http.Request, retry time.Duration)
}

// LimitConcurrent returns middleware that lets at most opts.Max requests
// of one client address (ClientAddr) run at once; another is answered 429
// with Retry-After and its connection closed, none of its body read. Put
// it in front of a handler that reads a body before its sender is known
// (the viewer's login form), so that one address cannot hold more than
// Max connections by trickling bodies that never end.
func LimitConcurrent(opts ConcurrencyOptions) func(http.Handler) http.Handler {
	if opts.Max < 1 {
		opts.Max = 1
	}
	var mu sync.Mutex
	running := map[string]int{}
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			key := ClientAddr(r)
			mu.Lock()
			full := running[key] >= opts.Max
			if !full {
				running[key]++
			}
			mu.Unlock()
			if full {
				const retry = 5 * time.Second
				dropBody(w, r)
				w.Header().Set("Retry-After", strconv.Itoa(int(retry.Seconds())))
				if opts.Refuse != nil {
					opts.Refuse(w, r, retry)
					return
				}
				http.Error(w, "too many unfinished requests from your address: finish or close the others and retry after the time in Retry-After", http.StatusTooManyRequests)
				return
			}
			defer func() {
				mu.Lock()
				if running[key]--; running[key] <= 0 {
					delete(running, key)
				}
				mu.Unlock()
			}()
			next.ServeHTTP(w, r)
		})
	}
}
