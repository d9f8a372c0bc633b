//go:build unix

// Package proctest helps tests that start real processes: wait for a
// condition with a deadline, read a pid a child wrote, tell whether a
// process still runs, and wait for one to die.
package proctest

import (
	"bytes"
	"os"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

const (
	// waitLimit bounds Wait and Dead: far more than a signalled process
	// needs to die and be reaped, even under -race on a busy machine.
	waitLimit = 10 * time.Second
	// pidLimit bounds Pid: the pid often comes from a child of a freshly
	// started rally, which must first start up and reach the command.
	pidLimit = 20 * time.Second
)

// Wait polls cond until it holds, failing the test after 10 s.
func Wait(t testing.TB, what string, cond func() bool) {
	t.Helper()
	if !poll(waitLimit, cond) {
		t.Fatalf("timed out waiting for %s", what)
	}
}

// Pid waits for file to hold a whole line (so a write in progress is not
// read half-way) with a process id, and returns it.
func Pid(t testing.TB, file string) int {
	t.Helper()
	var pid int
	if !poll(pidLimit, func() bool {
		b, _ := os.ReadFile(file)
		if !bytes.HasSuffix(b, []byte("\n")) {
			return false
		}
		pid, _ = strconv.Atoi(strings.TrimSpace(string(b)))
		return pid > 0
	}) {
		t.Fatalf("timed out waiting for a pid in %s", file)
	}
	return pid
}

// Alive reports whether pid runs; a zombie waiting for its reaper does not
// count.
func Alive(pid int) bool {
	stat, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return syscall.Kill(pid, 0) == nil
	}
	// The state follows the command name, which is in parentheses.
	f := strings.Fields(string(stat[bytes.LastIndexByte(stat, ')')+1:]))
	return len(f) > 0 && f[0] != "Z"
}

// Dead waits for pid to stop running, failing the test after 10 s. A
// survivor is killed before the test fails, so that it leaves nothing
// behind.
func Dead(t testing.TB, pid int) {
	t.Helper()
	if !poll(waitLimit, func() bool { return !Alive(pid) }) {
		syscall.Kill(pid, syscall.SIGKILL)
		t.Fatalf("process %d still runs after %v", pid, waitLimit)
	}
}

// poll reports whether cond comes to hold within limit.
func poll(limit time.Duration, cond func() bool) bool {
	deadline := time.Now().Add(limit)
	for !cond() {
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(2 * time.Millisecond)
	}
	return true
}
