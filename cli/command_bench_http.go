package cli

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"
)

// mnemo bench --http: the same run over Streamable HTTP on loopback, with
// a bearer token, so that its percentiles sit next to the stdio ones.

// benchHTTP is a server process spoken to over Streamable HTTP.
type benchHTTP struct {
	cmd    *exec.Cmd
	url    string
	token  string
	client *http.Client
	nextID int
	exited chan struct{}
	done   bool
}

// startBenchHTTP makes a token in dir, spawns argv with --http
// 127.0.0.1:0 and returns it once it has answered initialize, with the
// time from spawn to that answer.
func startBenchHTTP(ctx context.Context, argv []string, dir string, stderr io.Writer) (benchConn, time.Duration, error) {
	env := append(os.Environ(), "MNEMO_DATA_DIR="+dir, "MNEMO_LOG_LEVEL=warn", "MNEMO_HTTP_RATE=100000", "MNEMO_HTTP_BURST=100000")
	add := exec.CommandContext(ctx, argv[0], "token", "add", "--user", "bench")
	add.Env = env
	out, err := add.Output()
	if err != nil {
		return nil, 0, fmt.Errorf("mnemo token add: %w", err)
	}
	args := append(append([]string{}, argv[1:]...), "--http", "127.0.0.1:0")
	cmd := exec.CommandContext(ctx, argv[0], args...)
	cmd.Env = env
	pipe, err := cmd.StderrPipe()
	if err != nil {
		return nil, 0, err
	}
	start := time.Now()
	if err := cmd.Start(); err != nil {
		return nil, 0, fmt.Errorf("start %s: %w", filepath.Base(argv[0]), err)
	}
	s := &benchHTTP{cmd: cmd, token: strings.TrimSpace(string(out)), exited: make(chan struct{}),
		client: &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 64}}}
	found := make(chan string, 1)
	go func() {
		defer close(s.exited)
		sc := bufio.NewScanner(pipe)
		for sc.Scan() {
			if u, ok := strings.CutPrefix(sc.Text(), "mnemo: listening on "); ok {
				found <- u
				continue
			}
			fmt.Fprintln(stderr, sc.Text())
		}
	}()
	select {
	case s.url = <-found:
	case <-s.exited:
		cmd.Wait()
		return nil, 0, errors.New("the server exited before listening")
	case <-time.After(time.Minute):
		s.close()
		return nil, 0, errors.New("the server did not listen within a minute")
	}
	if err := s.call("initialize", map[string]any{
		"protocolVersion": "2025-06-18",
		"capabilities":    map[string]any{},
		"clientInfo":      map[string]any{"name": "mnemo-bench", "version": "1"},
	}, nil); err != nil {
		s.close()
		return nil, 0, fmt.Errorf("initialize: %w", err)
	}
	return s, time.Since(start), nil
}

// another returns another client of the same server and token, for one
// goroutine of a concurrent run (its own request ids, the shared
// connection pool); closing it is closing s.
func (s *benchHTTP) another() *benchHTTP {
	return &benchHTTP{cmd: s.cmd, url: s.url, token: s.token, client: s.client, exited: s.exited, done: true}
}

// call posts one request and decodes its result into result (which may
// be nil), in one pass over the answer: a retrieval's answer is ~10 KB,
// and the clients share the machine with the server they measure.
func (s *benchHTTP) call(method string, params, result any) error {
	s.nextID++
	body, err := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": s.nextID, "method": method, "params": params})
	if err != nil {
		return err
	}
	req, err := http.NewRequest(http.MethodPost, s.url, bytes.NewReader(body))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("MCP-Protocol-Version", "2025-06-18")
	req.Header.Set("Authorization", "Bearer "+s.token)
	resp, err := s.client.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		return err
	}
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("status %d: %.200s", resp.StatusCode, data)
	}
	msg := struct {
		Result any `json:"result"` // a non-nil pointer is decoded into
		Error  *struct {
			Message string `json:"message"`
		} `json:"error"`
	}{Result: result}
	if result == nil {
		msg.Result = &json.RawMessage{}
	}
	if err := json.Unmarshal(data, &msg); err != nil {
		return fmt.Errorf("answer is not JSON-RPC: %.80q", data)
	}
	if msg.Error != nil {
		return errors.New(msg.Error.Message)
	}
	return nil
}

func (s *benchHTTP) callTool(_ context.Context, name string, args map[string]any) (time.Duration, error) {
	start := time.Now()
	var r toolOutcome
	err := s.call("tools/call", map[string]any{"name": name, "arguments": args}, &r)
	took := time.Since(start)
	if err != nil {
		return 0, err
	}
	return took, r.err()
}

func (s *benchHTTP) peakKB() int {
	return (&benchServer{cmd: s.cmd}).peakKB()
}

// close stops the server with SIGTERM, as a service manager does, and
// waits for it.
func (s *benchHTTP) close() error {
	if s.done {
		return nil
	}
	s.done = true
	s.client.CloseIdleConnections()
	s.cmd.Process.Signal(syscall.SIGTERM)
	<-s.exited
	if err := s.cmd.Wait(); err != nil {
		return fmt.Errorf("server exit: %w", err)
	}
	return nil
}
