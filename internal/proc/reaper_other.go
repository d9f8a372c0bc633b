//go:build !linux

package proc

// Subreaper does nothing where there is no PR_SET_CHILD_SUBREAPER (other
// systems than Linux): an orphan a command left in a session of its own
// goes to init, and only its process group and its mark (KillMarked,
// Linux too) lead back to it.
func Subreaper(bool) error { return nil }

// AdoptOrphans adopts nothing without a subreaper.
func AdoptOrphans() (stop func(), ok bool) { return func() {}, false }

// Escaped finds nothing without a subreaper.
func Escaped() map[int]bool { return nil }

// KillEscaped finds nothing without a subreaper.
func KillEscaped(map[int]bool) int { return 0 }

// ReapAdopted has nothing to reap without a subreaper.
func ReapAdopted() {}
