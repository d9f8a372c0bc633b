package bench

import (
	"fmt"
	"io"
	"math"
	"strings"
)

// Write prints rows as a Markdown table: rally's median, range and p99, the
// compared agent's when there is one with the ratio (how many times
// better rally is: other ÷ rally for a cost, rally ÷ other for a rate),
// the target and whether rally met it.
func Write(w io.Writer, rows []Row, other string) error {
	var b strings.Builder
	head := "| group | measurement | unit | rally median | rally min–max | rally p99 |"
	rule := "| --- | --- | --- | ---: | ---: | ---: |"
	if other != "" {
		head += fmt.Sprintf(" %s median | %s min–max | %s p99 | rally advantage |", other, other, other)
		rule += " ---: | ---: | ---: | ---: |"
	}
	b.WriteString(head + " target | met | note |\n" + rule + " --- | --- | --- |\n")
	for _, r := range rows {
		fmt.Fprintf(&b, "| %s | %s | %s | %s |", r.Group, r.Name, r.Unit, cells(r.Rally))
		if other != "" {
			fmt.Fprintf(&b, " %s | %s |", cells(r.Other), ratio(r))
		}
		target, met := "", ""
		if r.Target != nil {
			target, met = r.Target.String(), "missed"
			if r.Target.Met(r.Rally) {
				met = "met"
			}
		}
		fmt.Fprintf(&b, " %s | %s | %s |\n", target, met, escape(r.Note))
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// cells is a stat's median, range and p99 cells (no range for a figure
// measured once), or its error and dashes.
func cells(s Stat) string {
	switch {
	case s.Err != "":
		return escape(shorten(s.Err)) + " | – | –"
	case s.N == 0:
		return "– | – | –"
	}
	spread := "–"
	if s.N > 1 {
		spread = num(s.Min) + "–" + num(s.Max)
	}
	return num(s.Median) + " | " + spread + " | " + num(s.P99)
}

func ratio(r Row) string {
	a, o := r.Rally, r.Other
	if a.N == 0 || o.N == 0 || a.Err != "" || o.Err != "" || a.Median == 0 || o.Median == 0 {
		return "–"
	}
	x := o.Median / a.Median
	if r.Higher {
		x = a.Median / o.Median
	}
	return num(x) + "×"
}

// num prints a figure with three significant digits, without exponents.
func num(v float64) string {
	switch a := math.Abs(v); {
	case a == 0:
		return "0"
	case a >= 1000:
		return fmt.Sprintf("%.0f", v)
	case a >= 100:
		return fmt.Sprintf("%.0f", v)
	case a >= 10:
		return fmt.Sprintf("%.1f", v)
	case a >= 1:
		return fmt.Sprintf("%.2f", v)
	}
	return fmt.Sprintf("%.3g", v)
}

func shorten(s string) string {
	if len(s) > 160 {
		return s[:160] + "…"
	}
	return s
}

func escape(s string) string {
	return strings.NewReplacer("|", `\|`, "\n", " ").Replace(s)
}
