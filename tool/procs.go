package tool

import (
	"sync"
	"time"

	"github.com/rally-agent/rally/internal/proc"
)

// lingerPoll is how often Procs looks whether a group that outlived its
// command (a server started with &) has ended. A group id is free for
// reuse only once the group is empty, so checking often keeps Kill from
// ever hitting an unrelated group that took the number.
const lingerPoll = 500 * time.Millisecond

// Procs tracks the process groups that bash starts, so that a program can
// kill whatever is left of them when it exits, on every way out: normal
// exit, error, abort, signal. (When the program itself is killed with
// SIGKILL, Linux's parent-death signal still kills each command's shell;
// see Bash.) The zero Procs is ready to use and safe for concurrent use.
type Procs struct {
	mu     sync.Mutex
	groups map[int]bool
	done   chan struct{} // closed by Kill: ends the watchers
	closed bool
	wg     sync.WaitGroup
}

// start records the group led by pid. It reports false once Kill has run:
// the program is exiting, and the caller kills the group at once.
func (p *Procs) start(pid int) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return false
	}
	if p.groups == nil {
		p.groups = map[int]bool{}
		p.done = make(chan struct{})
	}
	p.groups[pid] = true
	return true
}

// exited is called when the command of group pid has ended. An empty
// group is forgotten; one that background processes keep alive is
// watched until it empties, and killed by Kill if it has not by then.
func (p *Procs) exited(pid int) {
	if !proc.GroupAlive(pid) {
		p.forget(pid)
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return
	}
	p.wg.Add(1)
	go func() {
		defer p.wg.Done()
		t := time.NewTicker(lingerPoll)
		defer t.Stop()
		for {
			select {
			case <-p.done:
				return
			case <-t.C:
				if !proc.GroupAlive(pid) {
					p.forget(pid)
					return
				}
			}
		}
	}()
}

func (p *Procs) forget(pid int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	delete(p.groups, pid)
}

// Kill sends SIGKILL to every group still tracked, stops the watchers and
// makes bash refuse new commands. It is safe to call more than once.
func (p *Procs) Kill() {
	p.mu.Lock()
	if !p.closed {
		p.closed = true
		for pid := range p.groups {
			proc.KillGroup(pid)
		}
		p.groups = nil
		if p.done != nil {
			close(p.done)
		}
	}
	p.mu.Unlock()
	p.wg.Wait()
}

// Len is the number of groups tracked, for tests and status lines.
func (p *Procs) Len() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.groups)
}
