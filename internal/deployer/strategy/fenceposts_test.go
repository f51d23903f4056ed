package strategy

import (
	"testing"

	"k8s.io/apimachinery/pkg/util/intstr"
)

func TestFenceposts(t *testing.T) {
	pct := func(s string) *intstr.IntOrString { v := intstr.FromString(s); return &v }
	num := func(n int) *intstr.IntOrString { v := intstr.FromInt32(int32(n)); return &v }
	tests := []struct {
		name            string
		surge, unavail  *intstr.IntOrString
		desired         int32
		wantSurge       int32
		wantUnavailable int32
		wantErr         bool
	}{
		{name: "defaults, 4 replicas", surge: pct("25%"), unavail: pct("25%"), desired: 4, wantSurge: 1, wantUnavailable: 1},
		{name: "surge rounds up, unavailable down", surge: pct("25%"), unavail: pct("25%"), desired: 3, wantSurge: 1, wantUnavailable: 0},
		{name: "10 replicas", surge: pct("25%"), unavail: pct("25%"), desired: 10, wantSurge: 3, wantUnavailable: 2},
		{name: "both round to 0: unavailable becomes 1", surge: pct("0%"), unavail: pct("25%"), desired: 3, wantSurge: 0, wantUnavailable: 1},
		{name: "1 replica, 10%", surge: pct("0%"), unavail: pct("10%"), desired: 1, wantSurge: 0, wantUnavailable: 1},
		{name: "numbers", surge: num(2), unavail: num(0), desired: 5, wantSurge: 2, wantUnavailable: 0},
		{name: "both numbers 0", surge: num(0), unavail: num(0), desired: 5, wantSurge: 0, wantUnavailable: 1},
		{name: "100% unavailable", surge: num(0), unavail: pct("100%"), desired: 5, wantSurge: 0, wantUnavailable: 5},
		{name: "surge above 100%", surge: pct("150%"), unavail: num(0), desired: 2, wantSurge: 3, wantUnavailable: 0},
		{name: "nil values", desired: 3, wantSurge: 0, wantUnavailable: 1},
		{name: "zero desired", surge: pct("25%"), unavail: pct("25%"), desired: 0, wantSurge: 0, wantUnavailable: 1},
		{name: "bad percentage", surge: pct("lots"), unavail: num(1), desired: 3, wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			surge, unavailable, err := Fenceposts(tt.surge, tt.unavail, tt.desired)
			if (err != nil) != tt.wantErr {
				t.Fatalf("err = %v, wantErr %t", err, tt.wantErr)
			}
			if surge != tt.wantSurge || unavailable != tt.wantUnavailable {
				t.Errorf("got surge %d unavailable %d, want %d and %d", surge, unavailable, tt.wantSurge, tt.wantUnavailable)
			}
		})
	}
}

func TestScaleUpTarget(t *testing.T) {
	tests := []struct {
		name                           string
		desired, surge, oldRep, newRep int32
		want                           int32
	}{
		{name: "start with surge room", desired: 4, surge: 1, oldRep: 4, newRep: 0, want: 1},
		{name: "no surge room", desired: 4, surge: 1, oldRep: 4, newRep: 1, want: 1},
		{name: "room after a scale-down", desired: 4, surge: 1, oldRep: 2, newRep: 1, want: 3},
		{name: "never past desired", desired: 4, surge: 3, oldRep: 2, newRep: 3, want: 4},
		{name: "old gone: all the way", desired: 4, surge: 0, oldRep: 0, newRep: 1, want: 4},
		{name: "already there", desired: 4, surge: 1, oldRep: 1, newRep: 4, want: 4},
		{name: "above desired comes back", desired: 2, surge: 1, oldRep: 1, newRep: 5, want: 2},
		{name: "big surge", desired: 3, surge: 3, oldRep: 3, newRep: 0, want: 3},
		{name: "old above desired+surge", desired: 2, surge: 1, oldRep: 5, newRep: 0, want: 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := scaleUpTarget(tt.desired, tt.surge, tt.oldRep, tt.newRep); got != tt.want {
				t.Errorf("scaleUpTarget = %d, want %d", got, tt.want)
			}
		})
	}
}

func TestScaleDownTarget(t *testing.T) {
	tests := []struct {
		name                                     string
		desired, minAvail, oldRep, newRep, newAv int32
		want                                     int32
	}{
		{name: "unavailable budget lets one go", desired: 4, minAvail: 3, oldRep: 4, newRep: 1, newAv: 0, want: 3},
		{name: "new pods available let more go", desired: 4, minAvail: 3, oldRep: 3, newRep: 3, newAv: 2, want: 1},
		{name: "no budget, no new available", desired: 3, minAvail: 3, oldRep: 3, newRep: 1, newAv: 0, want: 3},
		{name: "new complete and available: all go", desired: 3, minAvail: 2, oldRep: 2, newRep: 3, newAv: 3, want: 0},
		{name: "stale available above replicas is capped", desired: 3, minAvail: 3, oldRep: 3, newRep: 1, newAv: 5, want: 2},
		{name: "old already gone", desired: 3, minAvail: 3, oldRep: 0, newRep: 3, newAv: 0, want: 0},
		{name: "never below zero", desired: 2, minAvail: 0, oldRep: 1, newRep: 2, newAv: 1, want: 0},
		{name: "scale to zero desired", desired: 0, minAvail: 0, oldRep: 3, newRep: 0, newAv: 0, want: 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := scaleDownTarget(tt.desired, tt.minAvail, tt.oldRep, tt.newRep, tt.newAv); got != tt.want {
				t.Errorf("scaleDownTarget = %d, want %d", got, tt.want)
			}
		})
	}
}

func TestPercentOf(t *testing.T) {
	tests := []struct {
		replicas, desired int32
		want              int
	}{
		{0, 4, 0}, {1, 4, 25}, {2, 4, 50}, {2, 3, 66}, {3, 3, 100}, {0, 0, 100},
	}
	for _, tt := range tests {
		if got := percentOf(tt.replicas, tt.desired); got != tt.want {
			t.Errorf("percentOf(%d, %d) = %d, want %d", tt.replicas, tt.desired, got, tt.want)
		}
	}
}

func TestParseUntil(t *testing.T) {
	tests := []struct {
		in      string
		step    string
		pct     int
		isPct   bool
		wantErr bool
	}{
		{in: ""},
		{in: "start", step: "start"},
		{in: "pre", step: "pre"},
		{in: "mid", step: "mid"},
		{in: "0%", pct: 0, isPct: true},
		{in: "50%", pct: 50, isPct: true},
		{in: "100%", pct: 100, isPct: true},
		{in: "101%", wantErr: true},
		{in: "-1%", wantErr: true},
		{in: "50", wantErr: true},
		{in: "%", wantErr: true},
		{in: "050%", wantErr: true},
		{in: "post", wantErr: true},
	}
	for _, tt := range tests {
		u, err := ParseUntil(tt.in)
		if (err != nil) != tt.wantErr {
			t.Errorf("ParseUntil(%q) err = %v, wantErr %t", tt.in, err, tt.wantErr)
			continue
		}
		if tt.wantErr {
			continue
		}
		pct, isPct := u.Percent()
		if u.String() != tt.in || u.IsSet() != (tt.in != "") || (tt.step != "" && !u.Is(tt.step)) || pct != tt.pct || isPct != tt.isPct {
			t.Errorf("ParseUntil(%q) = %+v", tt.in, u)
		}
		if tt.step == "" && (u.Is("start") || u.Is("pre") || u.Is("mid")) {
			t.Errorf("ParseUntil(%q) matches a step", tt.in)
		}
	}
}
