package cli

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/mnemo-mcp/mnemo/internal/chatwords"
)

// benchDetails documents mnemo bench.
const benchDetails = `Drives a memory server over stdio the way an MCP host does and prints
latency percentiles, start-up time and peak memory:
  1. start the server and time spawn → initialize answer;
  2. store N exchanges with add_memory, one call each;
  3. ask M distinct questions with retrieve_memory;
  4. restart it on the same data and time the initialize answer and the
     first retrieval (which loads and indexes what was stored).
Peak memory is the server's VmHWM (Linux only).

With --http --clients N, N clients call the server at once, all as one
user (one token): they store the -n exchanges between them, then ask the -m
questions (--mix add: only the adds; --mix retrieve: the adds are made
but only the retrievals measured). Each phase prints calls per second,
latency percentiles and the server's CPU use in cores (its utime+stime
from /proc/PID/stat over the phase's wall time), and the clients' own
beside it: they share the machine with the server; there is no restart.`

// benchConfig is mnemo bench's command line.
type benchConfig struct {
	n, m    int
	server  string
	dataDir string
	seed    uint64
	http    bool   // over Streamable HTTP on loopback (command_bench_http.go)
	clients int    // concurrent clients (command_bench_clients.go); 0: one, the sequential run
	mix     string // with clients: mixAdd, mixRetrieve or mixBoth
}

// runBench runs mnemo bench and returns the exit code.
func runBench(ctx context.Context, c *call) int {
	bc := benchConfig{server: c.args.str("server"), dataDir: c.args.str("data-dir"), seed: 1, http: c.args.flag("http")}
	var err error
	if bc.n, err = c.args.int("n", 5000); err != nil {
		return c.fail(exitUsage, "%v", err)
	}
	if bc.m, err = c.args.int("m", 1000); err != nil {
		return c.fail(exitUsage, "%v", err)
	}
	if c.args.has("seed") {
		if bc.seed, err = strconv.ParseUint(c.args.str("seed"), 10, 64); err != nil {
			return c.fail(exitUsage, "--seed %q is not a whole number", c.args.str("seed"))
		}
	}
	if bc.n < 1 || bc.m < 1 {
		return c.fail(exitUsage, "-n and -m must be at least 1")
	}
	if c.args.has("clients") {
		if bc.clients, err = c.args.int("clients", 1); err != nil {
			return c.fail(exitUsage, "%v", err)
		}
		if bc.clients < 1 {
			return c.fail(exitUsage, "--clients must be at least 1")
		}
		if !bc.http {
			return c.fail(exitUsage, "--clients needs --http: a stdio server has one client")
		}
	}
	bc.mix = mixBoth
	if c.args.has("mix") {
		bc.mix = c.args.str("mix")
		if bc.clients == 0 {
			return c.fail(exitUsage, "--mix needs --clients")
		}
		if bc.mix != mixAdd && bc.mix != mixRetrieve && bc.mix != mixBoth {
			return c.fail(exitUsage, "--mix %q: use add, retrieve or both", bc.mix)
		}
	}
	if err := bench(ctx, bc, c.stdout, c.stderr); err != nil {
		return c.fail(exitError, "%v", err)
	}
	return exitOK
}

func bench(ctx context.Context, bc benchConfig, stdout, stderr io.Writer) error {
	dir := bc.dataDir
	if dir == "" {
		tmp, err := os.MkdirTemp("", "mnemo-bench-")
		if err != nil {
			return err
		}
		defer os.RemoveAll(tmp)
		dir = tmp
	}
	argv, err := benchCommand(bc.server, dir)
	if err != nil {
		return err
	}
	transport := "stdio"
	if bc.http {
		transport = "Streamable HTTP on loopback, with a bearer token"
	}
	if bc.clients > 0 {
		transport += fmt.Sprintf(", %d clients as one user (--mix %s)", bc.clients, bc.mix)
	}
	fmt.Fprintf(stdout, "mnemo bench: %d exchanges, %d retrievals, server %q over %s, %s/%s\n\n", bc.n, bc.m, strings.Join(argv, " "), transport, runtime.GOOS, runtime.GOARCH)

	start := startBenchServer
	if bc.http {
		start = startBenchHTTP
	}
	srv, startup, err := start(ctx, argv, dir, stderr)
	if err != nil {
		return err
	}
	defer srv.close()
	if bc.clients > 0 {
		return benchClients(ctx, bc, srv.(*benchHTTP), stdout, stderr)
	}
	gen := newConversation(bc.seed)
	base := time.Date(2024, 1, 1, 9, 0, 0, 0, time.UTC)
	adds := make([]time.Duration, 0, bc.n)
	prog := newProgress(stderr, "add_memory", bc.n)
	for i := range bc.n {
		prog.set(i)
		user, reply := gen.exchange(i)
		d, err := srv.callTool(ctx, "add_memory", map[string]any{
			"user_input": user, "agent_response": reply,
			"thread_id": fmt.Sprintf("bench-%d", i/50),
			"timestamp": base.Add(time.Duration(i) * time.Minute).Format(time.RFC3339),
		})
		if err != nil {
			prog.done()
			return fmt.Errorf("add_memory %d: %w", i, err)
		}
		adds = append(adds, d)
	}
	prog.done()
	rets := make([]time.Duration, 0, bc.m)
	prog = newProgress(stderr, "retrieve_memory", bc.m)
	for i := range bc.m {
		prog.set(i)
		d, err := srv.callTool(ctx, "retrieve_memory", map[string]any{"query": gen.question(i)})
		if err != nil {
			prog.done()
			return fmt.Errorf("retrieve_memory %d: %w", i, err)
		}
		rets = append(rets, d)
	}
	prog.done()
	peak := srv.peakKB()
	if err := srv.close(); err != nil {
		return err
	}

	srv2, restart, err := start(ctx, argv, dir, stderr)
	if err != nil {
		return fmt.Errorf("restart: %w", err)
	}
	defer srv2.close()
	first, err := srv2.callTool(ctx, "retrieve_memory", map[string]any{"query": gen.question(bc.m)})
	if err != nil {
		return fmt.Errorf("restart: retrieve_memory: %w", err)
	}
	peak2 := srv2.peakKB()
	if err := srv2.close(); err != nil {
		return err
	}

	tw := tabwriter.NewWriter(stdout, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "phase\tcalls\tp50 ms\tp95 ms\tp99 ms\tmax ms\t")
	row := func(name string, ds []time.Duration) {
		if len(ds) == 0 {
			return
		}
		s := slices.Clone(ds)
		slices.Sort(s)
		fmt.Fprintf(tw, "%s\t%d\t%s\t%s\t%s\t%s\t\n", name, len(s), benchMS(benchPct(s, 50)), benchMS(benchPct(s, 95)), benchMS(benchPct(s, 99)), benchMS(s[len(s)-1]))
	}
	row("add_memory", adds)
	if k := min(1000, len(adds)); k < len(adds) {
		row(fmt.Sprintf("add_memory, last %d", k), adds[len(adds)-k:])
	}
	row("retrieve_memory", rets)
	tw.Flush()
	fmt.Fprintf(stdout, "\nstartup (spawn → initialize answer): %s ms on an empty data dir, %s ms on the stored data\n", benchMS(startup), benchMS(restart))
	fmt.Fprintf(stdout, "first retrieve_memory after the restart (the stored exchanges loaded and indexed): %s ms; spawn → its answer: %s ms\n", benchMS(first), benchMS(restart+first))
	if peak > 0 {
		fmt.Fprintf(stdout, "peak memory (VmHWM): %.1f MB during the run, %.1f MB after the restart's first retrieval\n", float64(peak)/1024, float64(peak2)/1024)
	}
	return nil
}

// benchCommand returns the server's argv: --server split on spaces with
// {data_dir} replaced, or this binary's serve.
func benchCommand(server, dir string) ([]string, error) {
	if server != "" {
		argv := strings.Fields(strings.ReplaceAll(server, "{data_dir}", dir))
		if len(argv) == 0 {
			return nil, errors.New("--server is empty")
		}
		return argv, nil
	}
	exe, err := os.Executable()
	if err != nil {
		return nil, fmt.Errorf("find this binary: %w", err)
	}
	return []string{exe, "serve"}, nil
}

// benchConn is a running server the bench calls tools of.
type benchConn interface {
	callTool(ctx context.Context, name string, args map[string]any) (time.Duration, error)
	peakKB() int
	close() error
}

// benchServer is a server process spoken to over stdio JSON-RPC.
type benchServer struct {
	cmd    *exec.Cmd
	in     io.WriteCloser
	out    *bufio.Reader
	nextID int
	done   bool
}

// startServer spawns argv with MNEMO_DATA_DIR=dir and returns it once it
// has answered initialize, with the time that took.
func startBenchServer(ctx context.Context, argv []string, dir string, stderr io.Writer) (benchConn, time.Duration, error) {
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	cmd.Env = append(os.Environ(), "MNEMO_DATA_DIR="+dir, "MNEMO_LOG_LEVEL=warn")
	cmd.Stderr = stderr
	in, err := cmd.StdinPipe()
	if err != nil {
		return nil, 0, err
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, 0, err
	}
	start := time.Now()
	if err := cmd.Start(); err != nil {
		return nil, 0, fmt.Errorf("start %s: %w", filepath.Base(argv[0]), err)
	}
	s := &benchServer{cmd: cmd, in: in, out: bufio.NewReaderSize(out, 1<<20)}
	if _, err := s.call("initialize", map[string]any{
		"protocolVersion": "2025-06-18",
		"capabilities":    map[string]any{},
		"clientInfo":      map[string]any{"name": "mnemo-bench", "version": "1"},
	}); err != nil {
		s.close()
		return nil, 0, fmt.Errorf("initialize: %w", err)
	}
	took := time.Since(start)
	if err := s.send(map[string]any{"jsonrpc": "2.0", "method": "notifications/initialized"}); err != nil {
		s.close()
		return nil, 0, err
	}
	return s, took, nil
}

func (s *benchServer) send(msg any) error {
	b, err := json.Marshal(msg)
	if err != nil {
		return err
	}
	_, err = s.in.Write(append(b, '\n'))
	return err
}

// call sends one request and waits for its answer, skipping notifications.
func (s *benchServer) call(method string, params any) (json.RawMessage, error) {
	s.nextID++
	id := s.nextID
	if err := s.send(map[string]any{"jsonrpc": "2.0", "id": id, "method": method, "params": params}); err != nil {
		return nil, err
	}
	for {
		line, err := s.out.ReadBytes('\n')
		if err != nil {
			return nil, fmt.Errorf("read answer: %w", err)
		}
		var msg struct {
			ID     *int            `json:"id"`
			Result json.RawMessage `json:"result"`
			Error  *struct {
				Message string `json:"message"`
			} `json:"error"`
		}
		if err := json.Unmarshal(line, &msg); err != nil {
			return nil, fmt.Errorf("server wrote a line that is not JSON-RPC: %.80q", line)
		}
		if msg.ID == nil || *msg.ID != id {
			continue
		}
		if msg.Error != nil {
			return nil, errors.New(msg.Error.Message)
		}
		return msg.Result, nil
	}
}

// callTool calls a tool and returns the round-trip time; a tool error
// result is an error.
func (s *benchServer) callTool(_ context.Context, name string, args map[string]any) (time.Duration, error) {
	start := time.Now()
	res, err := s.call("tools/call", map[string]any{"name": name, "arguments": args})
	took := time.Since(start)
	if err != nil {
		return 0, err
	}
	var r toolOutcome
	if err := json.Unmarshal(res, &r); err != nil {
		return 0, err
	}
	return took, r.err()
}

// toolOutcome is what the bench reads of a tools/call result: whether it
// is a tool error, and its message.
type toolOutcome struct {
	IsError bool `json:"isError"`
	Content []struct {
		Text string `json:"text"`
	} `json:"content"`
}

// err is the tool error r reports, nil if none.
func (r toolOutcome) err() error {
	if !r.IsError {
		return nil
	}
	msg := ""
	if len(r.Content) > 0 {
		msg = r.Content[0].Text
	}
	return fmt.Errorf("tool error: %.200s", msg)
}

// peakKB returns the server's VmHWM in kB, 0 where /proc is missing.
func (s *benchServer) peakKB() int {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", s.cmd.Process.Pid))
	if err != nil {
		return 0
	}
	for line := range strings.Lines(string(b)) {
		if rest, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			kb, _ := strconv.Atoi(strings.TrimSuffix(strings.TrimSpace(rest), " kB"))
			return kb
		}
	}
	return 0
}

// close ends the server by closing its stdin, and waits for it.
func (s *benchServer) close() error {
	if s.done {
		return nil
	}
	s.done = true
	s.in.Close()
	if err := s.cmd.Wait(); err != nil {
		return fmt.Errorf("server exit: %w", err)
	}
	return nil
}

func benchPct(sorted []time.Duration, p int) time.Duration {
	i := (len(sorted)*p + 99) / 100
	return sorted[max(0, min(len(sorted)-1, i-1))]
}

func benchMS(d time.Duration) string { return strconv.FormatFloat(float64(d)/1e6, 'f', 2, 64) }

// conversation generates chat-like text from a skewed vocabulary, so that
// term statistics look like a real conversation's.
type conversation struct {
	r *rand.Rand
}

func newConversation(seed uint64) *conversation {
	return &conversation{r: rand.New(rand.NewPCG(seed, 2))}
}

func (c *conversation) text(n int) string {
	return chatwords.Text(c.r, n)
}

// exchange returns the i-th user message and reply; each names a number
// so that no two are the same.
func (c *conversation) exchange(i int) (user, reply string) {
	return fmt.Sprintf("%s (note %d)", c.text(20+c.r.IntN(20)), i), c.text(25 + c.r.IntN(30))
}

// question returns the i-th of many distinct questions.
func (c *conversation) question(i int) string {
	starts := []string{"When did", "What did", "Where is", "How was", "Why did", "Who was"}
	return fmt.Sprintf("%s %s?", starts[i%len(starts)], c.text(4+i%5))
}
