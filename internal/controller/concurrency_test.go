package controller

import (
	"slices"
	"testing"

	"k8s.io/apimachinery/pkg/types"
)

func TestDecideAdmitsInArrivalOrderUnderTheLimits(t *testing.T) {
	key := func(ns, name string) types.NamespacedName { return types.NamespacedName{Namespace: ns, Name: name} }
	waiters := []waiter{
		{key("a", "late"), 5}, {key("a", "first"), 1}, {key("b", "second"), 2}, {key("a", "third"), 3}, {key("c", "fourth"), 4},
	}
	tests := []struct {
		name   string
		limits RolloutLimits
		state  rolloutState
		want   []string
	}{
		{"no limits", RolloutLimits{}, rolloutState{}, []string{"a/first", "a/late", "a/third", "b/second", "c/fourth"}},
		{"cluster cap with two running", RolloutLimits{Max: 4}, rolloutState{total: 2, running: map[string]int{"z": 2}}, []string{"a/first", "b/second"}},
		{"cluster cap full", RolloutLimits{Max: 2}, rolloutState{total: 2, running: map[string]int{"z": 2}}, nil},
		{"namespace cap skips a full namespace, keeps order elsewhere", RolloutLimits{MaxPerNamespace: 1}, rolloutState{total: 1, running: map[string]int{"b": 1}},
			[]string{"a/first", "c/fourth"}},
		{"both caps", RolloutLimits{Max: 3, MaxPerNamespace: 1}, rolloutState{total: 1, running: map[string]int{"c": 1}}, []string{"a/first", "b/second"}},
		{"halted by another's failure", RolloutLimits{HaltOnFailure: true}, rolloutState{failed: []types.NamespacedName{key("a", "third")}}, []string{"a/third"}},
		{"halt off: a failure holds nothing", RolloutLimits{Max: 10}, rolloutState{failed: []types.NamespacedName{key("a", "third")}}, []string{"a/first", "a/late", "a/third", "b/second", "c/fourth"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := decide(tt.limits, tt.state, slices.Clone(waiters))
			var names []string
			for k := range got {
				names = append(names, k.String())
			}
			slices.Sort(names)
			if !slices.Equal(names, tt.want) {
				t.Fatalf("admitted %v, want %v", names, tt.want)
			}
		})
	}
}
