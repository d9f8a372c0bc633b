//go:build !linux

package sandbox

import (
	"fmt"
	"os/exec"
	"runtime"
)

// Required is false: there is no Landlock to require here.
func Required() bool { return false }

// Check reports that there is no Landlock here.
func Check() (abi int, err error) {
	return 0, fmt.Errorf("%w on %s", ErrUnavailable, runtime.GOOS)
}

func (p *Policy) start(*exec.Cmd) (func() error, error) {
	_, err := Check()
	return nil, err
}
