package testutil

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestDieWithTest runs a copy of this test binary that starts a
// long-lived child with DieWithTest and then dies the way a go test
// time-out ends it (a panic that runs no cleanup). The child must not
// outlive it.
func TestDieWithTest(t *testing.T) {
	if os.Getenv("TESTUTIL_DIE_WITH_TEST") == "1" {
		child := exec.Command("sleep", "100000")
		DieWithTest(child)
		if err := child.Start(); err != nil {
			fmt.Println("start:", err)
			os.Exit(3)
		}
		fmt.Println(child.Process.Pid)
		panic("test timed out (simulated)")
	}
	if _, err := exec.LookPath("sleep"); err != nil {
		t.Skip("no sleep command to start as the child")
	}
	parent := exec.Command(os.Args[0], "-test.run=^TestDieWithTest$")
	parent.Env = append(os.Environ(), "TESTUTIL_DIE_WITH_TEST=1")
	out, err := parent.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := parent.Start(); err != nil {
		t.Fatal(err)
	}
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil {
		t.Fatalf("reading the child's pid: %v", err)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(line))
	if err != nil {
		t.Fatalf("the copy printed %q, want the child's pid", line)
	}
	if err := parent.Wait(); err == nil {
		t.Fatal("the copy of the test binary exited cleanly; it should have panicked")
	}
	// The kernel signals the child as the parent exits; init then reaps
	// it. Wait for that, with the test's own time-out as the only bound.
	for Alive(pid) {
		time.Sleep(10 * time.Millisecond)
	}
}
