package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"text/tabwriter"
	"time"
)

// mnemo bench --http --clients N: N concurrent HTTP clients on one user
// (one token), the load of a team's busy user or of one host with many
// agents; it prints throughput, latency and the server's CPU use.

// Mixes of a concurrent run (--mix).
const (
	mixAdd      = "add"      // the clients store the -n exchanges
	mixRetrieve = "retrieve" // the exchanges are stored first (not measured), then the clients retrieve
	mixBoth     = "both"     // the clients store, then retrieve: two phases, each measured
)

// benchClients runs the concurrent bench on srv: bc.n adds and bc.m
// retrievals shared among bc.clients clients, and prints a row per phase.
func benchClients(ctx context.Context, bc benchConfig, srv *benchHTTP, stdout, stderr io.Writer) error {
	gen := newConversation(bc.seed)
	// The texts are made up front, in order: the clients' share of them
	// then does not depend on their timing.
	type exchange struct{ user, reply string }
	exchanges := make([]exchange, bc.n)
	for i := range exchanges {
		exchanges[i].user, exchanges[i].reply = gen.exchange(i)
	}
	questions := make([]string, bc.m)
	for i := range questions {
		questions[i] = gen.question(i)
	}
	base := time.Date(2024, 1, 1, 9, 0, 0, 0, time.UTC)
	add := func(c *benchHTTP, i int) (time.Duration, error) {
		e := exchanges[i]
		return c.callTool(ctx, "add_memory", map[string]any{
			"user_input": e.user, "agent_response": e.reply,
			// Each client writes its own threads, 50 exchanges each,
			// as the sequential run does.
			"thread_id": fmt.Sprintf("bench-%d-%d", i%bc.clients, i/(50*bc.clients)),
			"timestamp": base.Add(time.Duration(i) * time.Minute).Format(time.RFC3339),
		})
	}
	retrieve := func(c *benchHTTP, i int) (time.Duration, error) {
		return c.callTool(ctx, "retrieve_memory", map[string]any{"query": questions[i]})
	}

	var rows []benchPhase
	if bc.mix == mixRetrieve {
		// Stored by the clients too, but not measured.
		if _, err := runPhase(ctx, srv, "add_memory", bc.clients, bc.n, add, stderr); err != nil {
			return err
		}
	} else {
		p, err := runPhase(ctx, srv, "add_memory", bc.clients, bc.n, add, stderr)
		if err != nil {
			return err
		}
		rows = append(rows, p)
	}
	if bc.mix != mixAdd {
		p, err := runPhase(ctx, srv, "retrieve_memory", bc.clients, bc.m, retrieve, stderr)
		if err != nil {
			return err
		}
		rows = append(rows, p)
	}
	peak := srv.peakKB()
	if err := srv.close(); err != nil {
		return err
	}

	tw := tabwriter.NewWriter(stdout, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "phase\tclients\tcalls\tcalls/s\tp50 ms\tp95 ms\tp99 ms\tmax ms\tserver cores\tclient cores\t")
	for _, p := range rows {
		s := slices.Clone(p.took)
		slices.Sort(s)
		fmt.Fprintf(tw, "%s\t%d\t%d\t%.0f\t%s\t%s\t%s\t%s\t%s\t%s\t\n", p.name, bc.clients, len(s), float64(len(s))/p.wall.Seconds(),
			benchMS(benchPct(s, 50)), benchMS(benchPct(s, 95)), benchMS(benchPct(s, 99)), benchMS(s[len(s)-1]), benchCores(p.cores), benchCores(p.clientCores))
	}
	tw.Flush()
	fmt.Fprintf(stdout, "\nserver cores: the server process's CPU time (utime+stime, /proc/PID/stat) over the phase's wall time; client cores: the same for this process, whose clients share the machine; this machine has %d\n", runtime.NumCPU())
	if peak > 0 {
		fmt.Fprintf(stdout, "peak memory (VmHWM): %.1f MB\n", float64(peak)/1024)
	}
	return nil
}

// benchCores formats a phase's CPU use in cores, n/a where it is
// unknown (negative).
func benchCores(c float64) string {
	if c < 0 {
		return "n/a"
	}
	return strconv.FormatFloat(c, 'f', 2, 64)
}

// benchPhase is one measured phase of a concurrent run.
type benchPhase struct {
	name  string
	took  []time.Duration // each call's round trip
	wall  time.Duration
	cores float64 // server CPU time over wall time; -1 where /proc is missing

	clientCores float64 // this process's (the clients') CPU time over wall time; -1 likewise
}

// runPhase makes calls calls of one tool from clients clients at once,
// each taking the next index until none is left.
func runPhase(ctx context.Context, srv *benchHTTP, name string, clients, calls int, call func(*benchHTTP, int) (time.Duration, error), stderr io.Writer) (benchPhase, error) {
	p := benchPhase{name: name, took: make([]time.Duration, calls)}
	prog := newProgress(stderr, name, calls)
	var (
		next     atomic.Int64
		wg       sync.WaitGroup
		mu       sync.Mutex
		firstErr error
	)
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	server, own := startCPU(srv.cmd.Process.Pid), startCPU(os.Getpid())
	start := time.Now()
	for range clients {
		c := srv.another()
		wg.Go(func() {
			for ctx.Err() == nil {
				i := int(next.Add(1) - 1)
				if i >= calls {
					return
				}
				d, err := call(c, i)
				if err != nil {
					mu.Lock()
					if firstErr == nil {
						firstErr = fmt.Errorf("%s %d: %w", name, i, err)
					}
					mu.Unlock()
					cancel()
					return
				}
				p.took[i] = d
				if i%100 == 0 {
					mu.Lock()
					prog.set(i)
					mu.Unlock()
				}
			}
		})
	}
	wg.Wait()
	p.wall = time.Since(start)
	prog.done()
	if firstErr != nil {
		return p, firstErr
	}
	p.cores, p.clientCores = server.cores(p.wall), own.cores(p.wall)
	return p, nil
}

// cpuStart is a process's CPU time read at the start of a phase.
type cpuStart struct {
	pid int
	at  time.Duration
	err error
}

func startCPU(pid int) cpuStart {
	at, err := procCPU(pid)
	return cpuStart{pid, at, err}
}

// cores returns the process's CPU time since c over wall, in cores; -1
// when either reading failed (no /proc).
func (c cpuStart) cores(wall time.Duration) float64 {
	now, err := procCPU(c.pid)
	if err != nil || c.err != nil {
		return -1
	}
	return (now - c.at).Seconds() / wall.Seconds()
}

// clockTicks is USER_HZ, the unit of /proc/PID/stat's times: 100 on
// every Linux architecture Go supports.
const clockTicks = 100

// procCPU returns the CPU time (user and system) process pid has
// used, from /proc/PID/stat.
func procCPU(pid int) (time.Duration, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, fmt.Errorf("read cpu time: %w", err)
	}
	return parseProcStat(string(b))
}

// parseProcStat reads utime and stime (fields 14 and 15) from the text
// of /proc/PID/stat. The command name (field 2) is in parentheses and may
// hold spaces, so fields are counted from its closing parenthesis.
func parseProcStat(stat string) (time.Duration, error) {
	i := strings.LastIndexByte(stat, ')')
	if i < 0 {
		return 0, errors.New("read cpu time: no command name in /proc/PID/stat")
	}
	f := strings.Fields(stat[i+1:])
	// f[0] is field 3 (state), so field k is f[k-3].
	if len(f) < 13 {
		return 0, errors.New("read cpu time: /proc/PID/stat is too short")
	}
	utime, err := strconv.ParseInt(f[11], 10, 64)
	if err != nil {
		return 0, fmt.Errorf("read cpu time: utime: %w", err)
	}
	stime, err := strconv.ParseInt(f[12], 10, 64)
	if err != nil {
		return 0, fmt.Errorf("read cpu time: stime: %w", err)
	}
	return time.Duration(utime+stime) * time.Second / clockTicks, nil
}
