package sandbox

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"syscall"

	ll "github.com/landlock-lsm/go-landlock/landlock/syscall"
	"golang.org/x/sys/unix"
)

// Check returns the kernel's Landlock ABI version, or an error wrapping
// ErrUnavailable.
func Check() (abi int, err error) {
	abi, err = ll.LandlockGetABIVersion()
	if err != nil || abi < 1 {
		return 0, fmt.Errorf("%w: %v", ErrUnavailable, err)
	}
	return abi, nil
}

// Required reports whether Landlock must work here: in CI (CI=true) on a
// kernel that has it, that is one that lists it among its security
// modules or answers its system call with anything but ENOSYS (not built
// in). Tests fail, rather than skip, when Check fails where it is
// required.
func Required() bool {
	if os.Getenv("CI") != "true" {
		return false
	}
	lsm, _ := os.ReadFile("/sys/kernel/security/lsm")
	_, err := ll.LandlockGetABIVersion()
	return strings.Contains(string(lsm), "landlock") || !errors.Is(err, syscall.ENOSYS)
}

// Rights by ABI version: what the ruleset handles (so denies unless a rule
// grants it).
const (
	readRights = ll.AccessFSExecute | ll.AccessFSReadFile | ll.AccessFSReadDir
	fsV1       = 1<<13 - 1 // execute … make_sym
)

func handledFS(abi int) uint64 {
	r := uint64(fsV1)
	if abi >= 2 {
		r |= ll.AccessFSRefer
	}
	if abi >= 3 {
		r |= ll.AccessFSTruncate
	}
	if abi >= 5 {
		r |= ll.AccessFSIoctlDev
	}
	return r
}

// devices are the files under /dev any shell writes to.
var devices = []string{"/dev/null", "/dev/zero", "/dev/full", "/dev/tty", "/dev/pts", "/dev/ptmx", "/dev/random", "/dev/urandom"}

func (p *Policy) start(cmd *exec.Cmd) (func() error, error) {
	abi, err := Check()
	if err != nil {
		return nil, err
	}
	fd, err := p.ruleset(abi)
	if err != nil {
		return nil, fmt.Errorf("sandbox: %w", err)
	}
	started := make(chan error, 1)
	done := make(chan error, 1)
	go func() {
		// Never unlocked: when this goroutine returns, its thread, the
		// only one confined, ends with it. The command is forked from
		// this thread and waited for on it, so the parent-death signal
		// proc.Group sets (which follows the forking thread) fires only
		// when the command is done or rally is gone.
		runtime.LockOSThread()
		err := restrictThread(fd)
		syscall.Close(fd)
		if err != nil {
			started <- fmt.Errorf("sandbox: %w", err)
			return
		}
		if err := cmd.Start(); err != nil {
			started <- err
			return
		}
		started <- nil
		done <- cmd.Wait()
	}()
	if err := <-started; err != nil {
		return nil, err
	}
	return func() error { return <-done }, nil
}

// restrictThread confines the calling OS thread (no_new_privs first, as
// landlock_restrict_self demands of an unprivileged caller); both are
// per-thread without flags.
func restrictThread(fd int) error {
	if _, _, e := syscall.RawSyscall(syscall.SYS_PRCTL, unix.PR_SET_NO_NEW_PRIVS, 1, 0); e != 0 {
		return fmt.Errorf("no_new_privs: %w", e)
	}
	if err := ll.LandlockRestrictSelf(fd, 0); err != nil {
		return fmt.Errorf("landlock_restrict_self: %w", err)
	}
	return nil
}

// ruleset builds the ruleset of p: read and execute everywhere, write in
// p.Write and the usual devices, minus the hidden files, and no TCP with
// NoNetwork.
func (p *Policy) ruleset(abi int) (int, error) {
	fsAll := handledFS(abi)
	attr := ll.RulesetAttr{HandledAccessFS: fsAll}
	if p.NoNetwork {
		if abi < 4 {
			return -1, fmt.Errorf("no network needs Landlock ABI 4, the kernel has %d", abi)
		}
		attr.HandledAccessNet = ll.AccessNetBindTCP | ll.AccessNetConnectTCP
	}
	fd, err := ll.LandlockCreateRuleset(&attr, 0)
	if err != nil {
		return -1, fmt.Errorf("landlock_create_ruleset: %w", err)
	}
	hide := realPaths(p.Hide)
	g := grants{fd: fd, hide: hide}
	g.grant("/", readRights)
	// Refer (moving files between directories) only where writes go;
	// hidden files never get it, so no hard link can reach them.
	write := fsAll
	for _, w := range realPaths(p.Write) {
		g.grant(w, write)
	}
	for _, d := range devices {
		g.grant(d, readRights|ll.AccessFSWriteFile|(fsAll&ll.AccessFSIoctlDev))
	}
	if g.err != nil {
		syscall.Close(fd)
		return -1, g.err
	}
	return fd, nil
}

// realPaths resolves symlinks in each path that exists (Landlock checks the
// file reached, so the rules must be about real paths).
func realPaths(paths []string) []string {
	var out []string
	for _, p := range paths {
		if abs, err := filepath.Abs(p); err == nil {
			p = abs
		}
		if real, err := filepath.EvalSymlinks(p); err == nil {
			p = real
		}
		out = append(out, filepath.Clean(p))
	}
	return out
}

type grants struct {
	fd   int
	hide []string
	err  error
}

// grant allows rights beneath path, except beneath the hidden files: a
// directory that holds one is granted entry by entry instead, down to the
// hidden file, which gets nothing to read with. Symlinks met on the way are skipped:
// what they point to is granted (or not) where it really is.
func (g *grants) grant(path string, rights uint64) {
	if slices.Contains(g.hide, path) {
		return
	}
	if !slices.ContainsFunc(g.hide, func(h string) bool { return within(h, path) }) {
		g.rule(path, rights)
		return
	}
	// The directory itself keeps every right that does not read a file,
	// so commands still create, write and delete in it: a hidden file
	// beneath can be overwritten then, never read. Its entries get the
	// rest, one by one.
	if r := rights &^ (ll.AccessFSReadFile | ll.AccessFSExecute); r != 0 {
		g.rule(path, r)
	}
	entries, err := os.ReadDir(path)
	if err != nil {
		return
	}
	for _, e := range entries {
		if e.Type()&os.ModeSymlink != 0 {
			continue
		}
		g.grant(filepath.Join(path, e.Name()), rights)
	}
}

func (g *grants) rule(path string, rights uint64) {
	f, err := syscall.Open(path, unix.O_PATH|unix.O_CLOEXEC, 0)
	if err != nil {
		return // gone, or not ours to reach: nothing to grant
	}
	defer syscall.Close(f)
	var st syscall.Stat_t
	if syscall.Fstat(f, &st) == nil && st.Mode&syscall.S_IFMT != syscall.S_IFDIR {
		rights &= fileRights
	}
	if err := ll.LandlockAddPathBeneathRule(g.fd, &ll.PathBeneathAttr{AllowedAccess: rights, ParentFd: f}, 0); err != nil && g.err == nil {
		g.err = fmt.Errorf("landlock_add_rule %s: %w", path, err)
	}
}

// fileRights are the rights that mean something on a file (the rest are
// about directories, and the kernel refuses them on a file).
const fileRights = ll.AccessFSExecute | ll.AccessFSWriteFile | ll.AccessFSReadFile | ll.AccessFSTruncate | ll.AccessFSIoctlDev

// within reports whether path is dir or beneath it.
func within(path, dir string) bool {
	return path == dir || strings.HasPrefix(path, strings.TrimSuffix(dir, "/")+"/")
}
