package cli

import (
	"testing"
	"time"
)

func TestHumanDuration(t *testing.T) {
	cases := []struct {
		in   time.Duration
		want string
	}{
		{-time.Second, "0 seconds"},
		{0, "0 seconds"},
		{time.Second, "1 second"},
		{59 * time.Second, "59 seconds"},
		{time.Minute, "1 minute"},
		{2*time.Minute + 59*time.Second, "2 minutes"},
		{time.Hour, "1 hour"},
		{47 * time.Hour, "47 hours"},
		{48 * time.Hour, "2 days"},
		{400 * 24 * time.Hour, "400 days"},
	}
	for _, tc := range cases {
		if got := humanDuration(tc.in); got != tc.want {
			t.Errorf("humanDuration(%v) = %q, want %q", tc.in, got, tc.want)
		}
	}
}
