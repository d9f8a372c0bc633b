package hooks

import "syscall"

// pdeathsig has the kernel kill the hook when rally dies, however it
// dies (the hook's own children are reached by the group kill while rally
// lives).
func pdeathsig(a *syscall.SysProcAttr) { a.Pdeathsig = syscall.SIGKILL }
