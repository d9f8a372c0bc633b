package proc

import (
	"bytes"
	"os"
	"os/signal"
	"strconv"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// A command can leave a process behind that neither its process group
// (setsid) nor its environment (env -i) leads back to. Made a child
// subreaper, rally adopts such orphans of its descendants when their
// parents end, instead of init, and so finds them among its own children.
// Telling them from the commands rally started itself needs no list of
// those: every command rally starts leads a process group of its own in
// rally's session (Group), while an orphan is either in the group of the
// command that started it or, after setsid, in a session of its own.

// Subreaper makes this process, or on false stops it being, the reaper
// of its orphaned descendants (PR_SET_CHILD_SUBREAPER). One system call;
// calling it again is harmless. While it is one, the process must reap
// what it adopts (ReapAdopted): an adopted child that ends stays a zombie
// until then.
func Subreaper(on bool) error {
	v := uintptr(0)
	if on {
		v = 1
	}
	return unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, v, 0, 0, 0)
}

// adoption is the process's one subreaper state: being a subreaper is an
// attribute of the whole process, so the users of AdoptOrphans (every
// hooks runner of it) share one, counted, and the last to stop ends it.
var adoption struct {
	mu    sync.Mutex
	users int
	stop  func()
}

// AdoptOrphans makes this process a subreaper (Subreaper) and reaps what
// it adopts, on every SIGCHLD, until the returned function is called; the
// last such call stops the process being a subreaper. It returns false
// where the kernel refuses.
func AdoptOrphans() (stop func(), ok bool) {
	adoption.mu.Lock()
	defer adoption.mu.Unlock()
	if adoption.users == 0 {
		if Subreaper(true) != nil {
			return func() {}, false
		}
		sig := make(chan os.Signal, 1)
		signal.Notify(sig, syscall.SIGCHLD)
		done := make(chan struct{})
		var wg sync.WaitGroup
		wg.Go(func() {
			for {
				select {
				case <-sig:
					ReapAdopted()
				case <-done:
					return
				}
			}
		})
		adoption.stop = func() {
			signal.Stop(sig)
			close(done)
			wg.Wait()
			Subreaper(false)
			ReapAdopted()
		}
	}
	adoption.users++
	var once sync.Once
	return func() {
		once.Do(func() {
			adoption.mu.Lock()
			defer adoption.mu.Unlock()
			if adoption.users--; adoption.users == 0 {
				adoption.stop()
			}
		})
	}, true
}

// child is one child process as /proc/<pid>/stat shows it.
type child struct {
	pid, pgid, sid int
	zombie         bool
	comm           string
}

// self is this process as its children are compared with.
type self struct {
	pid, sid int
	comm     string
}

func readSelf() (self, bool) {
	c, ok := readStat(os.Getpid())
	return self{pid: c.pid, sid: c.sid, comm: c.comm}, ok
}

// readStat reads pid's /proc stat line.
func readStat(pid int) (child, bool) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return child{}, false
	}
	// pid (comm) state ppid pgrp session …; comm may hold spaces and ')'.
	open, end := bytes.IndexByte(b, '('), bytes.LastIndexByte(b, ')')
	if open < 0 || end < open {
		return child{}, false
	}
	f := bytes.Fields(b[end+1:])
	if len(f) < 4 {
		return child{}, false
	}
	c := child{pid: pid, comm: string(b[open+1 : end]), zombie: string(f[0]) == "Z"}
	c.pgid, _ = strconv.Atoi(string(f[2]))
	c.sid, _ = strconv.Atoi(string(f[3]))
	return c, true
}

// children lists the children of this process's main thread. That is
// where the kernel hands an adopted orphan (the subreaper's first live
// thread, and Go's main thread lives as long as the process); commands
// forked from other threads are not wanted here, and reading one file
// instead of every thread's keeps a hook run's cleanup cheap.
func children() []child {
	pid := strconv.Itoa(os.Getpid())
	b, err := os.ReadFile("/proc/" + pid + "/task/" + pid + "/children")
	if err != nil {
		return nil
	}
	var out []child
	for _, s := range bytes.Fields(b) {
		pid, err := strconv.Atoi(string(s))
		if err != nil {
			continue
		}
		if c, ok := readStat(pid); ok {
			out = append(out, c)
		}
	}
	return out
}

// adopted reports whether c is an orphan me adopted rather than a command
// me started: a command leads its own group in me's session. A child that
// still runs me's program is a command being started (forked, its group
// not yet set): never adopted.
func (me self) adopted(c child) bool {
	return c.comm != me.comm && !(c.pgid == c.pid && c.sid == me.sid)
}

// escaped reports an adopted child in a session of its own (setsid): no
// command's process group holds it.
func (me self) escaped(c child) bool { return me.adopted(c) && c.sid != me.sid }

// Escaped returns the adopted children that are in a session of their
// own now, for KillEscaped to leave alone: they were there before.
func Escaped() map[int]bool {
	me, ok := readSelf()
	if !ok {
		return nil
	}
	out := map[int]bool{}
	for _, c := range children() {
		if me.escaped(c) {
			out[c.pid] = true
		}
	}
	return out
}

// KillEscaped SIGKILLs the adopted children in a session of their own
// (setsid) other than those in before (Escaped, taken when the command
// started), with their process groups, reaps them, and repeats for the
// orphans their ends hand over in turn. It returns how many it killed.
// Orphans still in this process's session are left alone: they are in
// the group of the command that started them, which its owner kills (a
// tool's background server must outlive a hook that ran meanwhile).
func KillEscaped(before map[int]bool) int {
	me, ok := readSelf()
	if !ok {
		return 0
	}
	killed := 0
	for round := 0; round < 10; round++ {
		var dead []int
		for _, c := range children() {
			if !me.escaped(c) || before[c.pid] {
				continue
			}
			// The group first, for what it started with it. The group
			// holds c itself (setsid made it the leader), so c may be
			// dead, and reaped by AdoptOrphans' SIGCHLD reaper, before
			// the second kill, which then fails: either kill landing
			// counts.
			group := syscall.Kill(-c.pgid, syscall.SIGKILL)
			if own := syscall.Kill(c.pid, syscall.SIGKILL); own == nil || group == nil {
				dead = append(dead, c.pid)
			}
		}
		if len(dead) == 0 {
			break
		}
		killed += len(dead)
		for _, pid := range dead {
			reap(pid)
		}
	}
	return killed
}

// ReapAdopted reaps every adopted child that has ended.
func ReapAdopted() {
	me, ok := readSelf()
	if !ok {
		return
	}
	for _, c := range children() {
		if c.zombie && me.adopted(c) {
			var ws syscall.WaitStatus
			syscall.Wait4(c.pid, &ws, syscall.WNOHANG, nil)
		}
	}
}

// reapWait bounds how long reap waits for a killed process to end: a
// process in an uninterruptible sleep (a hung network mount) may take
// longer, and is then left to ReapAdopted.
const reapWait = time.Second

// reap waits for the killed child pid to end and reaps it; its own
// children are adopted by then, for the next round of KillEscaped.
func reap(pid int) {
	deadline := time.Now().Add(reapWait)
	for d := 100 * time.Microsecond; ; d = min(2*d, 10*time.Millisecond) {
		var ws syscall.WaitStatus
		got, err := syscall.Wait4(pid, &ws, syscall.WNOHANG, nil)
		if got == pid || err != nil || time.Now().After(deadline) {
			return
		}
		time.Sleep(d)
	}
}
