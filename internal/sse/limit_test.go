package sse

import (
	"errors"
	"io"
	"runtime"
	"slices"
	"strings"
	"testing"
)

func TestMaxEvent(t *testing.T) {
	const max = 16
	data := func(n int) string { return strings.Repeat("x", n) }
	tests := []struct {
		name string
		in   string
		want []ev
		big  bool // ends with ErrEventTooLarge
	}{
		{"at the cap", "data: " + data(max) + "\n\n", []ev{{Data: data(max)}}, false},
		{"one line over", "data: a\n\ndata: " + data(max+1) + "\n\ndata: b\n\n", []ev{{Data: "a"}}, true},
		{"lines joined at the cap", "data: " + data(7) + "\ndata: " + data(8) + "\n\n", []ev{{Data: data(7) + "\n" + data(8)}}, false},
		{"lines joined over", "data: " + data(8) + "\ndata: " + data(8) + "\n\n", nil, true},
		{"last event without a blank line", "data: " + data(max+1), nil, true},
		{"long comment", ":" + data(max+fieldSlack+1) + "\ndata: a\n\n", nil, true},
		{"comments each short", strings.Repeat(": "+data(max)+"\n", 100) + "data: a\n\n", []ev{{Data: "a"}}, false},
		{"many small events", strings.Repeat("data: "+data(max)+"\n\n", 50), repeatEv(ev{Data: data(max)}, 50), false},
	}
	for _, tt := range tests {
		for rname, r := range readers(tt.in) {
			t.Run(tt.name+"/"+rname, func(t *testing.T) {
				d := NewDecoder(r)
				d.MaxEvent = max
				got, err := drain(d)
				if !slices.Equal(got, tt.want) {
					t.Errorf("events %q, want %q", got, tt.want)
				}
				if errors.Is(err, ErrEventTooLarge) != tt.big {
					t.Fatalf("error %v, too large = %v", err, tt.big)
				}
				if tt.big {
					if !strings.Contains(err.Error(), "event too large") {
						t.Errorf("error %q does not say so", err)
					}
					if _, again := d.Next(); again != err {
						t.Errorf("error not sticky: %v then %v", err, again)
					}
				}
			})
		}
	}
}

func TestDefaultMaxEvent(t *testing.T) {
	if got := NewDecoder(strings.NewReader("")).max(); got != 64<<20 || DefaultMaxEvent != 64<<20 {
		t.Errorf("default cap %d", got)
	}
}

func repeatEv(e ev, n int) []ev {
	out := make([]ev, n)
	for i := range out {
		out[i] = e
	}
	return out
}

// endless is a generated body: head, then fill repeated up to n bytes in
// all, never held in memory.
type endless struct {
	head  string
	chunk []byte
	n     int64
	read  int64
}

func newEndless(head, fill string, n int64) *endless {
	return &endless{head: head, chunk: []byte(strings.Repeat(fill, 64<<10/len(fill))), n: n}
}

func (e *endless) Read(p []byte) (int, error) {
	if e.read >= e.n {
		return 0, io.EOF
	}
	p = p[:min(int64(len(p)), e.n-e.read)]
	k := 0
	if e.read < int64(len(e.head)) {
		k = copy(p, e.head[e.read:])
	}
	for k < len(p) {
		k += copy(p[k:], e.chunk)
	}
	e.read += int64(k)
	return k, nil
}

// allocated runs f and returns the bytes it allocated in all: an upper
// bound of the heap it ever held.
func allocated(f func()) uint64 {
	runtime.GC()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	f()
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}

// TestHugeEventsStayBounded feeds the decoder the two inputs that used to
// take gigabytes (issue 12, item 7): a 300 MB event of many data lines and
// a 1 GiB line with no line end. Each fails as too large having read and
// allocated a few times the cap, here 1 MiB, and far less than the input.
func TestHugeEventsStayBounded(t *testing.T) {
	const max = 1 << 20
	tests := []struct {
		name string
		r    *endless
	}{
		{"300 MB event", newEndless("event: big\n", "data: "+strings.Repeat("y", 1018)+"\n", 300<<20)},
		{"1 GiB line", newEndless("data: ", "z", 1<<30)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := NewDecoder(tt.r)
			d.MaxEvent = max
			var err error
			heap := allocated(func() { _, err = d.Next() })
			if !errors.Is(err, ErrEventTooLarge) {
				t.Fatalf("error %v", err)
			}
			if heap > 4*max {
				t.Errorf("allocated %d bytes for a cap of %d", heap, max)
			}
			if tt.r.read > 2*max {
				t.Errorf("read %d bytes past a cap of %d", tt.r.read, max)
			}
			t.Logf("read %d bytes, allocated %d", tt.r.read, heap)
		})
	}
}

// TestHugeLineDefaultCap is the 1 GiB line against the default cap: the
// decoder stops at 64 MiB and never holds the rest.
func TestHugeLineDefaultCap(t *testing.T) {
	r := newEndless("data: ", "z", 1<<30)
	d := NewDecoder(r)
	var err error
	heap := allocated(func() { _, err = d.Next() })
	if !errors.Is(err, ErrEventTooLarge) {
		t.Fatalf("error %v", err)
	}
	if heap > 5*DefaultMaxEvent/2 || r.read > DefaultMaxEvent+2*fieldSlack+minBuf {
		t.Errorf("read %d bytes, allocated %d, for a cap of %d", r.read, heap, DefaultMaxEvent)
	}
	t.Logf("read %d bytes, allocated %d", r.read, heap)
}

// BenchmarkHugeEvent reports the peak heap (as bytes allocated) of
// decoding a 300 MB event under the default cap.
func BenchmarkHugeEvent(b *testing.B) {
	var heap uint64
	for b.Loop() {
		d := NewDecoder(newEndless("", "data: "+strings.Repeat("y", 1018)+"\n", 300<<20))
		heap = allocated(func() {
			if _, err := d.Next(); !errors.Is(err, ErrEventTooLarge) {
				b.Fatal(err)
			}
		})
	}
	b.ReportMetric(float64(heap)/(1<<20), "MiB-allocated/op")
}
