package main

import "testing"

// The request sample reads as `sort | uniq -c` prints it.
func TestFormatCounts(t *testing.T) {
	for _, tc := range []struct {
		name   string
		counts map[string]int
		want   string
	}{
		{name: "none", counts: map[string]int{}, want: ""},
		{name: "sorted by answer", counts: map[string]int{"hello from b version 2": 20, "hello from a version 1": 180}, want: "" +
			"    180 hello from a version 1\n" +
			"     20 hello from b version 2\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := formatCounts(tc.counts); got != tc.want {
				t.Errorf("formatCounts = %q, want %q", got, tc.want)
			}
		})
	}
}
