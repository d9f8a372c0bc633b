package bench

import "testing"

// TestStatRange: the range is the smallest and the largest run, whatever
// their order; a figure measured once has no range to print.
func TestStatRange(t *testing.T) {
	tests := []struct {
		name     string
		xs       []float64
		min, max float64
	}{
		{"one", []float64{3}, 3, 3},
		{"unordered", []float64{5, 1, 9, 3}, 1, 9},
		{"equal", []float64{2, 2}, 2, 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if s := stat(tt.xs); s.Min != tt.min || s.Max != tt.max {
				t.Fatalf("stat(%v) = %+v, want range %v–%v", tt.xs, s, tt.min, tt.max)
			}
		})
	}
	if got := cells(stat([]float64{7})); got != "7.00 | – | 7.00" {
		t.Errorf("cells of one run = %q", got)
	}
	if got := cells(stat([]float64{7, 1, 4})); got != "4.00 | 1.00–7.00 | 7.00" {
		t.Errorf("cells of three runs = %q", got)
	}
}

// TestAtMost: "≤" meets its value exactly, "<" does not.
func TestAtMost(t *testing.T) {
	s := stat([]float64{6})
	if !atMost(6).Met(s) || below(6).Met(s) || atMost(5.99).Met(s) {
		t.Fatal("≤ 6 or < 6 judged wrong for 6")
	}
	if got := atMost(6).String(); got != "≤ 6.00" {
		t.Errorf("String = %q", got)
	}
}
