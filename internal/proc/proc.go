// Package proc starts commands as process groups of their own, so that
// rally can kill a command together with everything it started, and so
// that (on Linux) a command dies with rally however rally dies.
//
// It is shared by the bash tool and the hooks runner: both give a program
// the user configured, or a model wrote, a group of its own and kill the
// whole group when they are done with it.
package proc
