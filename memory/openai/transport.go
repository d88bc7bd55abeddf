package openai

import (
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// Body limits: a chat completion reply is far below maxReplyBytes; error
// bodies are only read to classify the error.
const (
	maxReplyBytes     = 16 << 20
	maxErrorBodyBytes = 64 << 10
)

// exchangeKey is the context key of the *exchange of one attempt.
type exchangeKey struct{}

// exchange is what the transport saw of one attempt's HTTP response; go-openai
// drops the headers of error responses, and Retry-After lives there.
type exchange struct {
	status     int
	retryAfter string
}

// recordingDoer is the go-openai HTTPDoer: it records status and Retry-After
// into the attempt's exchange and bounds how much of a body is read.
type recordingDoer struct {
	hc *http.Client
}

// Do implements goopenai.HTTPDoer.
func (d recordingDoer) Do(req *http.Request) (*http.Response, error) {
	resp, err := d.hc.Do(req)
	if err != nil {
		return resp, err
	}
	if rec, ok := req.Context().Value(exchangeKey{}).(*exchange); ok {
		rec.status = resp.StatusCode
		rec.retryAfter = resp.Header.Get("Retry-After")
	}
	if resp.StatusCode >= 200 && resp.StatusCode < 300 {
		resp.Body = &cappedBody{rc: resp.Body, left: maxReplyBytes}
	} else {
		// A truncated error body just fails to decode; the status still counts.
		resp.Body = struct {
			io.Reader
			io.Closer
		}{io.LimitReader(resp.Body, maxErrorBodyBytes), resp.Body}
	}
	return resp, nil
}

// cappedBody reads at most left bytes and fails with errReplyTooLarge when
// the body is longer, so an oversized reply is an error, not truncated JSON.
type cappedBody struct {
	rc   io.ReadCloser
	left int64
}

func (b *cappedBody) Read(p []byte) (int, error) {
	if b.left <= 0 {
		var one [1]byte
		n, err := b.rc.Read(one[:])
		if n > 0 {
			return 0, errReplyTooLarge
		}
		return 0, err
	}
	if int64(len(p)) > b.left {
		p = p[:b.left]
	}
	n, err := b.rc.Read(p)
	b.left -= int64(n)
	return n, err
}

func (b *cappedBody) Close() error { return b.rc.Close() }

// maxRetryAfter bounds absurd Retry-After values before MaxBackoff caps them.
const maxRetryAfter = 24 * time.Hour

// parseRetryAfter reads a Retry-After value: delay seconds or an HTTP date
// (RFC 9110 §10.2.3). A date in the past means no wait.
func parseRetryAfter(v string, now time.Time) (time.Duration, bool) {
	v = strings.TrimSpace(v)
	if v == "" {
		return 0, false
	}
	if secs, err := strconv.ParseInt(v, 10, 64); err == nil {
		if secs < 0 {
			return 0, false
		}
		return time.Duration(min(secs, int64(maxRetryAfter/time.Second))) * time.Second, true
	}
	if t, err := http.ParseTime(v); err == nil {
		return min(max(t.Sub(now), 0), maxRetryAfter), true
	}
	return 0, false
}
