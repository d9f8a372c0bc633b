package cli

import (
	"io"
	"os"
	"syscall"
)

// fSetPipeSz is F_SETPIPE_SZ (linux/fcntl.h), which package syscall lacks.
const fSetPipeSz = 1031

// growPipe raises the capacity of stdout, when it is a pipe, from the
// default 64 KiB to 1 MiB (the unprivileged maximum). A streamed answer
// is megabytes of message_update lines (each carries the partial message,
// twice); with a small pipe the writer and the reader take turns every
// 64 KiB, which cut throughput by about a third in BenchmarkDeltas. Best
// effort: failure changes nothing.
func growPipe(w io.Writer) {
	f, ok := w.(*os.File)
	if !ok {
		return
	}
	if st, err := f.Stat(); err != nil || st.Mode()&os.ModeNamedPipe == 0 {
		return
	}
	rc, err := f.SyscallConn()
	if err != nil {
		return
	}
	rc.Control(func(fd uintptr) {
		syscall.Syscall(syscall.SYS_FCNTL, fd, fSetPipeSz, 1<<20)
	})
}
