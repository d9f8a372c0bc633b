//go:build unix

// Package proctest helps tests that start real processes: wait for a
// condition with a deadline, read a pid a child wrote, and tell whether a
// process still runs.
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

// Wait polls cond until it holds, failing the test after 10 s.
func Wait(t testing.TB, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(2 * time.Millisecond)
	}
}

// Pid waits for file to hold a process id and returns it.
func Pid(t testing.TB, file string) int {
	t.Helper()
	var pid int
	Wait(t, "a pid in "+file, func() bool {
		b, _ := os.ReadFile(file)
		pid, _ = strconv.Atoi(strings.TrimSpace(string(b)))
		return pid > 0
	})
	return pid
}

// Alive reports whether pid runs; a zombie waiting for its reaper does not
// count.
func Alive(pid int) bool {
	stat, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return syscall.Kill(pid, 0) == nil
	}
	f := strings.Fields(string(stat[bytes.LastIndexByte(stat, ')')+1:]))
	return len(f) > 0 && f[0] != "Z"
}
