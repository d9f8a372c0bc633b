package proctest

import (
	"os"
	"syscall"
	"testing"
)

// SmallDisk mounts a tmpfs of size ("64k") at a new directory and returns
// it: a disk that fills up, for tests of what a full disk does. Mounting
// needs root, which CI has: with CI=true a failure to mount fails the test,
// elsewhere it skips it.
func SmallDisk(t testing.TB, size string) string {
	t.Helper()
	dir := t.TempDir()
	if err := syscall.Mount("tmpfs", dir, "tmpfs", 0, "size="+size+",mode=0700"); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("mount a %s tmpfs for a full-disk test: %v", size, err)
		}
		t.Skipf("cannot mount a tmpfs here (%v); CI runs this test", err)
	}
	t.Cleanup(func() { syscall.Unmount(dir, syscall.MNT_DETACH) })
	return dir
}
