package settings

import (
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
)

// TestConcurrentSavesLoseNothing: savers that all read the same version
// of the real file save at once. Exactly one may write; every other one
// must get ErrChanged. Without the lock across compare and rename,
// several compared before any renamed, all reported success, and the
// file held one of their edits.
func TestConcurrentSavesLoseNothing(t *testing.T) {
	const savers = 16
	for round := range 5 {
		t.Run(fmt.Sprint("round ", round), func(t *testing.T) {
			src := layout(t, `{}`, "").Global
			files := make([]*File, savers)
			for i := range files {
				files[i] = readSource(t, src)
				if err := files[i].Set(fmt.Sprintf("providers.p%d.maxRetries", i), i); err != nil {
					t.Fatal(err)
				}
			}
			var wg sync.WaitGroup
			start := make(chan struct{})
			errs := make([]error, savers)
			for i, f := range files {
				wg.Go(func() {
					<-start
					errs[i] = f.Save(t.Context())
				})
			}
			close(start)
			wg.Wait()
			final := readSource(t, src)
			saved := 0
			for i, err := range errs {
				_, there := final.Get(fmt.Sprintf("providers.p%d.maxRetries", i))
				switch {
				case err == nil && !there:
					t.Errorf("saver %d reported success but its key is not in the file", i)
				case err == nil:
					saved++
				case !errors.Is(err, ErrChanged):
					t.Errorf("saver %d: %v, want ErrChanged", i, err)
				}
			}
			if saved != 1 {
				t.Errorf("%d savers wrote, want exactly 1", saved)
			}
		})
	}
}

// TestReadFileRefusesHuge: a settings file past MaxFileBytes is refused,
// not read (FIFOs and devices: internal/regfile and the CLI's
// TestSettingsFileNotRegular).
func TestReadFileRefusesHuge(t *testing.T) {
	src := layout(t, "", `{"agent": {}}`+strings.Repeat(" ", MaxFileBytes)).Project
	if _, err := ReadFile(src); err == nil || !strings.Contains(err.Error(), "the limit is 1048576") {
		t.Fatalf("ReadFile = %v, want the size refused", err)
	}
}
