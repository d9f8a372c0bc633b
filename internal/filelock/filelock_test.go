package filelock

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestJSON(t *testing.T) {
	dir := t.TempDir()
	type doc struct{ N int }
	for _, tt := range []struct {
		name, content string // content "" with missing: no file
		missing       bool
		want          int
		err           string
	}{
		{name: "missing", missing: true, want: 7},
		{name: "empty", content: "  \n", want: 7},
		{name: "broken", content: "{nope", want: 7, err: "delete the file to start over"},
		{name: "ok", content: `{"N":3}`, want: 3},
	} {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(dir, tt.name+".json")
			if !tt.missing {
				if err := os.WriteFile(path, []byte(tt.content), 0o600); err != nil {
					t.Fatal(err)
				}
			}
			d := doc{N: 7}
			err := ReadJSON(path, &d)
			if (err != nil) != (tt.err != "") || err != nil && !strings.Contains(err.Error(), tt.err) || d.N != tt.want && tt.err == "" {
				t.Fatalf("ReadJSON: %+v, %v", d, err)
			}
		})
	}
	path := filepath.Join(dir, "sub", "w.json")
	if err := WriteJSON(path, doc{N: 42}); err != nil {
		t.Fatal(err)
	}
	var d doc
	if err := ReadJSON(path, &d); err != nil || d.N != 42 {
		t.Fatalf("round trip: %+v, %v", d, err)
	}
	if st, _ := os.Stat(path); st.Mode().Perm() != 0o600 {
		t.Errorf("mode %v, want 0600", st.Mode().Perm())
	}
}

func TestLockWaitsAndCancels(t *testing.T) {
	path := filepath.Join(t.TempDir(), "x.lock")
	unlock, err := Lock(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	if _, err := Lock(ctx, path); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("second lock while held: %v, want the deadline", err)
	}
	unlock()
	unlock2, err := Lock(context.Background(), path)
	if err != nil {
		t.Fatalf("lock after release: %v", err)
	}
	unlock2()
}
