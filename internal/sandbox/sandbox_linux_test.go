package sandbox

import (
	"errors"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// need skips where the kernel has no Landlock, except in CI on a kernel
// that lists it among its security modules: there it must work.
func need(t *testing.T) {
	t.Helper()
	if _, err := Check(); err != nil {
		if Required() {
			t.Fatalf("the kernel has landlock, but: %v", err)
		}
		t.Skip(err)
	}
}

func run(t *testing.T, p *Policy, dir, script string) (string, error) {
	t.Helper()
	cmd := exec.Command("sh", "-c", script)
	cmd.Dir = dir
	var out strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &out
	wait, err := p.Start(cmd)
	if err != nil {
		t.Fatal(err)
	}
	err = wait()
	return out.String(), err
}

func TestPolicy(t *testing.T) {
	need(t)
	home, ws, other := t.TempDir(), t.TempDir(), t.TempDir()
	secret := filepath.Join(home, "auth.json")
	if err := os.WriteFile(secret, []byte(`{"key":"sk-SECRET"}`), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(home, "settings.json"), []byte(`{}`), 0o644); err != nil {
		t.Fatal(err)
	}
	p := &Policy{Hide: []string{secret}, Write: []string{ws}}
	tests := []struct {
		name, script string
		ok           bool
	}{
		{"read the secret", "cat " + secret, false},
		{"read beside it", "cat " + filepath.Join(home, "settings.json"), true},
		{"write in the workspace", "echo hi > out && cat out", true},
		{"write elsewhere", "echo hi > " + filepath.Join(other, "out"), false},
		{"hard link the secret", "ln " + secret + " stolen", false},
		{"symlink the secret", "ln -s " + secret + " link && cat link", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, err := run(t, p, ws, tt.script)
			if tt.ok != (err == nil) || strings.Contains(out, "sk-SECRET") {
				t.Fatalf("err %v, output %q; want ok=%v and no secret", err, out, tt.ok)
			}
		})
	}
	// rally itself is not confined.
	if _, err := os.ReadFile(secret); err != nil {
		t.Errorf("the test process lost access: %v", err)
	}
	if err := os.WriteFile(filepath.Join(other, "x"), nil, 0o600); err != nil {
		t.Errorf("the test process cannot write outside: %v", err)
	}
	var exit *exec.ExitError
	if _, err := run(t, p, ws, "exit 3"); !errors.As(err, &exit) || exit.ExitCode() != 3 {
		t.Errorf("exit status: %v", err)
	}
}

// TestNoNetwork: with NoNetwork a command cannot connect to a TCP server
// that the same command reaches without it.
func TestNoNetwork(t *testing.T) {
	need(t)
	if abi, _ := Check(); abi < 4 {
		t.Skipf("Landlock ABI %d has no network rules", abi)
	}
	bash, err := exec.LookPath("bash")
	if err != nil {
		t.Skip("no bash for /dev/tcp")
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			c.Close()
		}
	}()
	_, port, _ := net.SplitHostPort(l.Addr().String())
	script := "exec 3<>/dev/tcp/127.0.0.1/" + port
	for _, noNet := range []bool{false, true} {
		cmd := exec.Command(bash, "-c", script)
		var out strings.Builder
		cmd.Stdout, cmd.Stderr = &out, &out
		wait, err := (&Policy{Write: []string{t.TempDir()}, NoNetwork: noNet}).Start(cmd)
		if err != nil {
			t.Fatal(err)
		}
		if err := wait(); (err != nil) != noNet {
			t.Errorf("NoNetwork %v: err %v, output %q", noNet, err, out.String())
		}
	}
}
