package proc

import (
	"bytes"
	"os"
	"strconv"
	"syscall"
)

// KillMarked SIGKILLs every process of this user whose environment holds
// the entry mark ("NAME=value") and returns how many it killed. It finds
// what a command started even after it left the command's process group
// and session (setsid, a double fork): the environment is inherited by
// every descendant, whoever adopted it. A descendant that replaced its
// whole environment (env -i) is not found. It repeats the scan until one
// finds nothing, so a process forked during a scan is caught by the next.
func KillMarked(mark string) int {
	want := append([]byte(mark), 0)
	uid := os.Getuid()
	self := os.Getpid()
	killed := 0
	for round := 0; round < 10; round++ {
		n := 0
		for _, pid := range pids() {
			if pid == self || !ownedBy(pid, uid) || !hasEntry(pid, want) {
				continue
			}
			if syscall.Kill(pid, syscall.SIGKILL) == nil {
				n++
			}
		}
		if n == 0 {
			break
		}
		killed += n
	}
	return killed
}

func pids() []int {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return nil
	}
	out := make([]int, 0, len(entries))
	for _, e := range entries {
		if n, err := strconv.Atoi(e.Name()); err == nil {
			out = append(out, n)
		}
	}
	return out
}

func ownedBy(pid, uid int) bool {
	var st syscall.Stat_t
	return syscall.Stat("/proc/"+strconv.Itoa(pid), &st) == nil && int(st.Uid) == uid
}

// hasEntry reports whether pid's initial environment holds entry (with
// its NUL). A zombie or a process gone meanwhile reads empty.
func hasEntry(pid int, entry []byte) bool {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/environ")
	if err != nil {
		return false
	}
	return bytes.HasPrefix(b, entry) || bytes.Contains(b, append([]byte{0}, entry...))
}
