package window

import (
	"context"
	"os"
	"path/filepath"
	"sync"
	"testing"
)

func TestFile(t *testing.T) {
	ctx := context.Background()
	f := &File{Path: Path(t.TempDir())}
	if n, err := f.Window(ctx, "local", "", "qwen3:8b"); n != 0 || err != nil {
		t.Fatalf("empty store: %d, %v", n, err)
	}
	must(t, f.Learn(ctx, "local", "", "qwen3:8b", 8192))
	must(t, f.Learn(ctx, "local", "", "other", 4096))
	must(t, f.Learn(ctx, "openai", "", "gpt-4.1", 1047576))
	// A later statement replaces an earlier one.
	must(t, f.Learn(ctx, "local", "", "qwen3:8b", 16384))
	for _, tt := range []struct {
		provider, model string
		want            int
	}{
		{"local", "qwen3:8b", 16384},
		{"local", "other", 4096},
		{"openai", "gpt-4.1", 1047576},
		{"openai", "qwen3:8b", 0},
	} {
		t.Run(tt.provider+"/"+tt.model, func(t *testing.T) {
			// A second File on the same path is another process.
			other := &File{Path: f.Path}
			if n, err := other.Window(ctx, tt.provider, "", tt.model); n != tt.want || err != nil {
				t.Fatalf("window %d, %v; want %d", n, err, tt.want)
			}
		})
	}
	must(t, f.Forget(ctx, "local", "qwen3:8b"))
	if n, _ := f.Window(ctx, "local", "", "qwen3:8b"); n != 0 {
		t.Fatalf("forgotten window still %d", n)
	}
	must(t, f.Forget(ctx, "", ""))
	if all, _ := f.All(ctx); len(all) != 0 {
		t.Fatalf("after forgetting all: %v", all)
	}
	if err := f.Learn(ctx, "", "", "m", 10); err == nil {
		t.Fatal("a window without a provider was recorded")
	}
}

// TestConcurrentLearners: writers in parallel lose nothing (the lock).
func TestConcurrentLearners(t *testing.T) {
	path := Path(t.TempDir())
	var wg sync.WaitGroup
	for i := range 16 {
		wg.Go(func() {
			f := &File{Path: path}
			if err := f.Learn(context.Background(), "p", "", string(rune('a'+i)), 1000+i); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	all, err := (&File{Path: path}).All(context.Background())
	if err != nil || len(all) != 16 {
		t.Fatalf("%d windows (%v), want 16", len(all), err)
	}
}

func TestBrokenFile(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "w.json")
	must(t, os.WriteFile(path, []byte("{not json"), 0o600))
	f := &File{Path: path}
	if _, err := f.Window(ctx, "p", "", "m"); err == nil {
		t.Fatal("a broken file read as empty without an error")
	}
	// Learning starts it over.
	must(t, f.Learn(ctx, "p", "", "m", 2048))
	if n, err := f.Window(ctx, "p", "", "m"); n != 2048 || err != nil {
		t.Fatalf("after starting over: %d, %v", n, err)
	}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
