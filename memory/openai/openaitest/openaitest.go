// Package openaitest is a fake OpenAI-compatible endpoint for tests, as
// net/http/httptest is a fake server: chat completions and embeddings
// answered from a script of replies or by a function, with injected faults
// (error statuses, hang-ups, replies held until the request ends, delays),
// and every request recorded.
//
// A test that needs more than the body of a request (its Authorization
// header) answers with Func; a test that waits for requests uses Await.
//
// It is a test helper: only _test.go files import it.
package openaitest

import (
	"cmp"
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"
)

// Paths the server answers, below its base URL's host.
const (
	ChatPath       = "/v1/chat/completions"
	EmbeddingsPath = "/v1/embeddings"
)

// Reply is one answer of the fake endpoint: a response, or a fault.
type Reply struct {
	Status int               // 0 means 200
	Header map[string]string // extra response headers
	Body   string            // the raw body
	// Block holds the reply until the request ends or the test is over.
	Block bool
	// Hangup closes the connection without replying.
	Hangup bool
	// Delay answers after this long, unless the request ends first.
	Delay time.Duration
	// Hook runs when the request arrives, before the reply.
	Hook func()
}

// Message is one chat message of a request.
type Message struct {
	Role    string `json:"role"`
	Content string `json:"content"`
}

// ChatRequest is what the fake reads of a chat completion request.
type ChatRequest struct {
	Model          string    `json:"model"`
	Messages       []Message `json:"messages"`
	ResponseFormat *struct {
		Type string `json:"type"`
	} `json:"response_format"`
	MaxTokens           int      `json:"max_tokens"`
	MaxCompletionTokens int      `json:"max_completion_tokens"`
	Temperature         *float64 `json:"temperature"`
}

// Prompt is the content of the last user message.
func (r ChatRequest) Prompt() string {
	for i := len(r.Messages) - 1; i >= 0; i-- {
		if r.Messages[i].Role == "user" {
			return r.Messages[i].Content
		}
	}
	return ""
}

// EmbedRequest is what the fake reads of an embeddings request.
type EmbedRequest struct {
	Input      []string `json:"input"`
	Model      string   `json:"model"`
	Dimensions int      `json:"dimensions"`
}

// Request is one request the fake received: Chat or Embed is set by Path.
type Request struct {
	Path  string
	Auth  string // the Authorization header
	Chat  ChatRequest
	Embed EmbedRequest
}

// Server is a fake OpenAI-compatible endpoint. Each chat completion takes
// the next scripted reply (PushChat); once the script is used up it is
// answered by Func, ChatFunc or the Repeat reply, or fails the test.
// Embeddings likewise (PushEmbed, Func, EmbedFunc). Its fields are set
// before the first request; the methods are safe for concurrent use.
type Server struct {
	// URL is the base URL, ending in /v1; empty for an in-process server.
	URL string
	// Func answers every request past the script, when set: chat
	// completions, embeddings and requests to any other path (a client
	// whose base URL is wrong). It sees the whole request (Path, Auth).
	Func func(Request) Reply
	// ChatFunc answers chat completions past the script, when set.
	ChatFunc func(ChatRequest) Reply
	// EmbedFunc answers embeddings past the script, when set.
	EmbedFunc func(EmbedRequest) Reply

	tb      testing.TB
	release chan struct{}
	first   chan struct{}
	once    sync.Once

	mu      sync.Mutex
	chat    []Reply
	embed   []Reply
	repeat  *Reply
	got     []Request
	arrived chan struct{} // closed and replaced when a request is recorded
}

// NewServer starts a fake endpoint on loopback, with chat replies
// scripted; it is closed when the test ends.
func NewServer(tb testing.TB, chat ...Reply) *Server {
	tb.Helper()
	srv := httptest.NewServer(nil)
	tb.Cleanup(srv.Close) // registered first: runs after release, so no handler is left blocked
	s := NewInProcess(tb, chat...)
	srv.Config.Handler = s
	s.URL = srv.URL + "/v1"
	return s
}

// NewInProcess returns a fake endpoint without a listener, to be reached
// through Transport: inside a synctest bubble, loopback I/O would keep
// fake time from advancing.
func NewInProcess(tb testing.TB, chat ...Reply) *Server {
	tb.Helper()
	s := &Server{tb: tb, chat: chat, release: make(chan struct{}), first: make(chan struct{}), arrived: make(chan struct{})}
	tb.Cleanup(func() { close(s.release) })
	return s
}

// PushChat appends chat completion replies to the script.
func (s *Server) PushChat(replies ...Reply) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.chat = append(s.chat, replies...)
}

// PushEmbed appends embeddings replies to the script.
func (s *Server) PushEmbed(replies ...Reply) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.embed = append(s.embed, replies...)
}

// Repeat makes the fake answer every chat completion past the script with r.
func (s *Server) Repeat(r Reply) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.repeat = &r
}

// Requests returns the requests received so far, in order.
func (s *Server) Requests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Request(nil), s.got...)
}

// ChatRequests returns the chat completion requests received so far.
func (s *Server) ChatRequests() []ChatRequest {
	var out []ChatRequest
	for _, r := range s.Requests() {
		if r.Path == ChatPath {
			out = append(out, r.Chat)
		}
	}
	return out
}

// Await waits until done holds for the requests received so far and
// returns them. It has no deadline of its own — a loaded machine makes
// the wait longer, not a failure — so go test -timeout bounds it (the
// test fails if tb's context ends first).
func (s *Server) Await(tb testing.TB, done func([]Request) bool) []Request {
	tb.Helper()
	for {
		s.mu.Lock()
		got, arrived := append([]Request(nil), s.got...), s.arrived
		s.mu.Unlock()
		if done(got) {
			return got
		}
		select {
		case <-arrived:
		case <-tb.Context().Done():
			tb.Fatalf("the awaited requests had not arrived when the test ended (%d received)", len(got))
			return nil
		}
	}
}

// First is closed when the first request arrives.
func (s *Server) First() <-chan struct{} { return s.first }

// Transport serves requests in process.
func (s *Server) Transport() http.RoundTripper { return handlerTransport{s} }

// ServeHTTP implements http.Handler.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	req := Request{Path: r.URL.Path, Auth: r.Header.Get("Authorization")}
	var body any
	switch {
	case r.Method == http.MethodPost && r.URL.Path == ChatPath:
		body = &req.Chat
	case r.Method == http.MethodPost && r.URL.Path == EmbeddingsPath:
		body = &req.Embed
	case s.Func != nil:
		// Func answers any other path; the body is not read.
	default:
		s.tb.Errorf("request %s %s, want POST %s or %s", r.Method, r.URL.Path, ChatPath, EmbeddingsPath)
		http.NotFound(w, r)
		return
	}
	if body != nil {
		if err := json.NewDecoder(r.Body).Decode(body); errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, net.ErrClosed) {
			// The client hung up mid-request (a test may kill it), or the
			// test ended and closed this server while a request, one the
			// test no longer waits for, was being read: nothing to answer.
			return
		} else if err != nil {
			s.tb.Errorf("decode %s request: %v", r.URL.Path, err)
		}
	}
	rep, ok := s.next(req)
	s.once.Do(func() { close(s.first) })
	if !ok {
		s.tb.Errorf("unexpected request %s: script exhausted", r.URL.Path)
		http.Error(w, "script exhausted", http.StatusTeapot)
		return
	}
	s.reply(w, r, rep)
}

// next records req and returns its reply.
func (s *Server) next(req Request) (Reply, bool) {
	s.mu.Lock()
	s.got = append(s.got, req)
	close(s.arrived)
	s.arrived = make(chan struct{})
	var script *[]Reply
	switch req.Path {
	case ChatPath:
		script = &s.chat
	case EmbeddingsPath:
		script = &s.embed
	}
	if script != nil && len(*script) > 0 {
		rep := (*script)[0]
		*script = (*script)[1:]
		s.mu.Unlock()
		return rep, true
	}
	repeat := s.repeat
	s.mu.Unlock()
	switch {
	case s.Func != nil:
		return s.Func(req), true
	case req.Path == ChatPath && s.ChatFunc != nil:
		return s.ChatFunc(req.Chat), true
	case req.Path == EmbeddingsPath && s.EmbedFunc != nil:
		return s.EmbedFunc(req.Embed), true
	case req.Path == ChatPath && repeat != nil:
		return *repeat, true
	}
	return Reply{}, false
}

func (s *Server) reply(w http.ResponseWriter, r *http.Request, rep Reply) {
	if rep.Hook != nil {
		rep.Hook()
	}
	switch {
	case rep.Hangup:
		conn, _, err := http.NewResponseController(w).Hijack()
		if err != nil {
			s.tb.Errorf("hijack: %v", err)
			return
		}
		conn.Close()
		return
	case rep.Block:
		select {
		case <-r.Context().Done():
		case <-s.release:
		}
		return
	case rep.Delay > 0:
		timer := time.NewTimer(rep.Delay)
		defer timer.Stop()
		select {
		case <-timer.C:
		case <-r.Context().Done():
			return
		case <-s.release:
			return
		}
	}
	for k, v := range rep.Header {
		w.Header().Set(k, v)
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(cmp.Or(rep.Status, http.StatusOK))
	io.WriteString(w, rep.Body)
}

// handlerTransport serves requests in process.
type handlerTransport struct{ h http.Handler }

func (t handlerTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	rec := httptest.NewRecorder()
	t.h.ServeHTTP(rec, r)
	if err := r.Context().Err(); err != nil {
		return nil, err
	}
	return rec.Result(), nil
}

// Usage is the token usage a chat reply reports.
type Usage struct{ PromptTokens, CompletionTokens int }

// Chat is a 200 chat completion whose message content is content.
func Chat(tb testing.TB, content string, usage Usage) Reply {
	tb.Helper()
	return ChatFull(tb, content, "", "stop", usage)
}

// ChatFull is a 200 chat completion with one choice; reasoning, when set,
// goes in reasoning_content as thinking models send it.
func ChatFull(tb testing.TB, content, reasoning, finish string, usage Usage) Reply {
	tb.Helper()
	msg := map[string]any{"role": "assistant", "content": content}
	if reasoning != "" {
		msg["reasoning_content"] = reasoning
	}
	return Reply{Body: MustJSON(tb, map[string]any{
		"id": "chatcmpl-1", "object": "chat.completion", "created": 1, "model": "test-model",
		"choices": []any{map[string]any{"index": 0, "message": msg, "finish_reason": finish}},
		"usage": map[string]int{"prompt_tokens": usage.PromptTokens, "completion_tokens": usage.CompletionTokens,
			"total_tokens": usage.PromptTokens + usage.CompletionTokens},
	})}
}

// Error is an OpenAI-style error reply; an empty code is sent as null, an
// empty param left out.
func Error(tb testing.TB, status int, typ, code, param, message string) Reply {
	tb.Helper()
	e := map[string]any{"message": message, "type": typ, "code": code}
	if code == "" {
		e["code"] = nil
	}
	if param != "" {
		e["param"] = param
	}
	return Reply{Status: status, Body: MustJSON(tb, map[string]any{"error": e})}
}

// Embeddings is a 200 embeddings reply with one vector per input, listed
// in reverse order (clients must order them by index).
func Embeddings(tb testing.TB, model string, vectors [][]float32) Reply {
	tb.Helper()
	data := make([]map[string]any, 0, len(vectors))
	for i := len(vectors) - 1; i >= 0; i-- {
		data = append(data, map[string]any{"object": "embedding", "index": i, "embedding": vectors[i]})
	}
	return Reply{Body: MustJSON(tb, map[string]any{"object": "list", "data": data, "model": model})}
}

// MustJSON marshals v or fails the test.
func MustJSON(tb testing.TB, v any) string {
	tb.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		tb.Fatalf("marshal: %v", err)
	}
	return string(b)
}
