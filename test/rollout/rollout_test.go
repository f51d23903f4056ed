package rollout

import (
	"errors"
	"fmt"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"

	dcv1 "github.com/deployconfig/deployconfig/api/v1"
)

func TestNewDC(t *testing.T) {
	pre := ExecHook(dcv1.LifecycleHookFailurePolicyAbort, "echo pre")
	dc := NewDC("ns", "web", Options{Replicas: 2, Strategy: dcv1.DeploymentStrategyTypeRecreate, Hooks: map[string]*dcv1.LifecycleHook{"pre": pre}})
	if dc.Spec.Strategy.RecreateParams == nil || dc.Spec.Strategy.RecreateParams.Pre != pre || dc.Spec.Strategy.RollingParams != nil {
		t.Errorf("Recreate strategy = %+v", dc.Spec.Strategy)
	}
	spec := dc.Spec.Template.Spec
	if spec.SecurityContext == nil || spec.Containers[0].SecurityContext == nil {
		t.Error("the template is not restricted")
	}
	if open := NewDC("ns", "web", Options{Unrestricted: true}); open.Spec.Template.Spec.SecurityContext != nil {
		t.Error("an Unrestricted template has a security context")
	}
	rolling := NewDC("ns", "web", Options{MaxSurge: "50%", MaxUnavailable: "0"})
	if p := rolling.Spec.Strategy.RollingParams; p == nil || p.MaxSurge.String() != "50%" || p.MaxUnavailable.IntValue() != 0 {
		t.Errorf("Rolling params = %+v", p)
	}
	bumpRevision(dc)
	bumpRevision(dc)
	if got := dc.Spec.Template.Spec.Containers[0].Env[0]; got.Name != RevisionEnv || got.Value != "2" {
		t.Errorf("after two config changes, %s = %q", got.Name, got.Value)
	}
}

func TestTransient(t *testing.T) {
	gr := schema.GroupResource{Resource: "pods"}
	tests := []struct {
		err  error
		want bool
	}{
		{nil, false},
		{errors.New("dial tcp 127.0.0.1:1: connect: connection refused"), true},
		{apierrors.NewServiceUnavailable("starting"), true},
		{apierrors.NewTooManyRequests("busy", 1), true},
		{apierrors.NewNotFound(gr, "x"), false},
		{apierrors.NewForbidden(gr, "x", errors.New("no")), false},
		{fmt.Errorf("wrapped: %w", apierrors.NewConflict(gr, "x", errors.New("changed"))), false},
	}
	for _, tt := range tests {
		if got := Transient(tt.err); got != tt.want {
			t.Errorf("Transient(%v) = %t, want %t", tt.err, got, tt.want)
		}
	}
}
