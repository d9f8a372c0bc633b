// Package tui is rally's terminal UI: a transcript that
// streams the model's answer, an editor, a status line, and the retry
// loader with its live countdown. Session events reach it through a
// subscription that sends them to the bubbletea program; Update does no
// I/O and never waits for the session.
package tui

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"sync"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/rally-agent/rally/session"
)

// ErrInterrupted is Run's error when a SIGINT ended the UI.
var ErrInterrupted = errors.New("tui: interrupted")

// subscriber is the part of *session.Session that Run needs beyond
// Session.
type subscriber interface {
	Subscribe(func(session.Event)) (unsubscribe func())
}

// RunOptions are what Run needs beyond the model's Options.
type RunOptions struct {
	// Confirmer, when set, is connected to the screen (tools.confirm).
	Confirmer *Confirmer
	// Alerts, when set, is connected to the status line (hook failures).
	Alerts *Alerts
	// Input and Output default to the terminal.
	Input  io.Reader
	Output io.Writer
	// Env is the environment for terminal detection (TERM, NO_COLOR);
	// nil means the process's.
	Env []string
}

// Run shows the UI until the user quits. The terminal is restored on
// every way out, a panic included (bubbletea recovers it and restores the
// terminal before Run returns the error). A run still going when the user
// quits is aborted, and Run waits briefly for it to stop.
func Run(ctx context.Context, opts Options, ro RunOptions) (err error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	opts.Context = ctx

	var p *tea.Program
	var ready sync.WaitGroup
	ready.Add(1)
	send := func(msg any) {
		ready.Wait()
		p.Send(msg)
	}
	opts.listen = func(s Session, gen int) func() {
		sub, ok := s.(subscriber)
		if !ok {
			return func() {}
		}
		return sub.Subscribe(func(e session.Event) {
			defer func() {
				// bubbletea recovers panics in Update, View and commands;
				// this goroutine is the session's, so end the UI from here
				// and let Run restore the terminal and report it.
				if r := recover(); r != nil {
					send(panicMsg{r})
				}
			}()
			if msg := translate(e, time.Now()); msg != nil {
				send(eventMsg{gen: gen, msg: msg})
			}
		})
	}
	m := New(opts)
	popts := []tea.ProgramOption{tea.WithContext(ctx)}
	if ro.Input != nil {
		popts = append(popts, tea.WithInput(ro.Input))
	}
	if ro.Output != nil {
		popts = append(popts, tea.WithOutput(ro.Output))
	}
	if ro.Env != nil {
		popts = append(popts, tea.WithEnvironment(ro.Env))
	}
	p = tea.NewProgram(m, popts...)
	ready.Done()
	if c := ro.Confirmer; c != nil {
		c.connect(send)
		defer c.connect(nil)
	}
	if a := ro.Alerts; a != nil {
		// Notices said before the UI started open its transcript; the
		// program reads no messages yet, so they are added here.
		for _, text := range a.start(send) {
			m.Update(noticeMsg{text})
		}
		defer a.end()
	}

	_, err = p.Run()
	m.shutdown()
	if m.panicked != nil {
		return fmt.Errorf("tui: panic handling a session event: %v", m.panicked)
	}
	// The UI drew on the alternate screen, which is gone now: print the
	// conversation on the normal one, so that it stays in the terminal's
	// scrollback as a shell command's output would (pi and Claude Code
	// users expect it there).
	out := ro.Output
	if out == nil {
		out = os.Stdout
	}
	io.WriteString(out, m.tr.text(max(m.width, 20)))
	switch {
	case errors.Is(err, tea.ErrProgramKilled) && ctx.Err() != nil:
		return ctx.Err()
	case errors.Is(err, tea.ErrInterrupted):
		return ErrInterrupted
	}
	if err != nil {
		return fmt.Errorf("tui: %w", err)
	}
	return nil
}

// shutdown aborts what still runs and waits a moment for it.
func (m *Model) shutdown() {
	if m.stop != nil {
		m.stop()
		m.stop = nil
	}
	if m.sess != nil {
		m.sess.Abort()
	}
	done := make(chan struct{})
	go func() { m.wg.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(3 * time.Second):
	}
}
