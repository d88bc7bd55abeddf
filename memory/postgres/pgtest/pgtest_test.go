//go:build unix

package pgtest

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/mnemo-mcp/mnemo/internal/testutil"
)

// TestServerDiesWithTestBinary runs a copy of this test binary that
// starts a server and then dies the way a go test time-out ends it (a
// panic that runs no cleanup). The server must not outlive it: with
// pg_ctl, which daemonises it, it did, and kept loading the machine.
func TestServerDiesWithTestBinary(t *testing.T) {
	if os.Getenv("PGTEST_DIE_WITH_TEST") == "1" {
		s, err := Start(context.Background())
		if err != nil {
			fmt.Println("start:", err)
			os.Exit(3)
		}
		fmt.Println(s.proc.Pid, s.dir)
		panic("test timed out (simulated)")
	}
	if runtime.GOOS != "linux" {
		t.Skip("the parent-death signal is Linux's")
	}
	if testing.Short() {
		t.Skip("-short: starts PostgreSQL")
	}
	if _, err := FindBinDir(t.Context()); err != nil {
		testutil.SkipMissing(t, "PostgreSQL", err.Error(), Enable)
	}
	t.Setenv(EnvURL, "")
	copy := exec.Command(os.Args[0], "-test.run=^TestServerDiesWithTestBinary$")
	copy.Env = append(os.Environ(), "PGTEST_DIE_WITH_TEST=1")
	out, err := copy.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := copy.Start(); err != nil {
		t.Fatal(err)
	}
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil {
		copy.Wait()
		t.Fatalf("reading the server's pid: %v", err)
	}
	f := strings.Fields(line)
	pid, err := strconv.Atoi(f[0])
	if err != nil || len(f) != 2 {
		copy.Wait()
		t.Fatalf("the copy printed %q, want the server's pid and directory", line)
	}
	t.Cleanup(func() { os.RemoveAll(f[1]) })
	if err := copy.Wait(); err == nil {
		t.Fatal("the copy of the test binary exited cleanly; it should have panicked")
	}
	// The kernel kills the server as the copy exits; init then reaps it.
	// Wait for that, with the test's own time-out as the only bound.
	for testutil.Alive(pid) {
		time.Sleep(10 * time.Millisecond)
	}
}

// TestUpDown stops and starts a server and checks it answers between.
func TestUpDown(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: starts PostgreSQL")
	}
	if _, err := FindBinDir(t.Context()); err != nil {
		testutil.SkipMissing(t, "PostgreSQL", err.Error(), Enable)
	}
	t.Setenv(EnvURL, "")
	s, err := Start(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	defer s.Stop()
	pid := s.proc.Pid
	if err := s.Down(t.Context()); err != nil {
		t.Fatalf("Down: %v", err)
	}
	if testutil.Alive(pid) {
		t.Errorf("postgres (pid %d) still runs after Down", pid)
	}
	if err := s.ping(t.Context()); err == nil {
		t.Error("the server answers after Down")
	}
	if err := s.Up(t.Context()); err != nil {
		t.Fatalf("Up: %v", err)
	}
	if err := s.Up(t.Context()); err == nil {
		t.Error("Up on a running server succeeded; want an error")
	}
	if err := s.ping(t.Context()); err != nil {
		t.Errorf("the server does not answer after Up: %v", err)
	}
}
