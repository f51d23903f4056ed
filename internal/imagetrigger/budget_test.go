package imagetrigger

import (
	"context"
	"testing"
	"time"

	clocktesting "k8s.io/utils/clock/testing"

	dcv1 "github.com/deployconfig/deployconfig/api/v1"
	"github.com/deployconfig/deployconfig/internal/registry/registrytest"
)

func TestRequestBudget(t *testing.T) {
	b := newRequestBudget(2, 10*time.Second)
	now := epoch
	steps := []struct {
		ns      string
		advance time.Duration
		ok      bool
		wait    time.Duration
	}{
		{ns: "a", ok: true},
		{ns: "a", ok: true},
		{ns: "a", ok: false, wait: 10 * time.Second},
		{ns: "b", ok: true}, // another namespace has its own budget
		{ns: "a", advance: 4 * time.Second, ok: false, wait: 6 * time.Second},
		{ns: "a", advance: 6 * time.Second, ok: true},
		{ns: "a", advance: time.Hour, ok: true}, // refills up to the burst only
		{ns: "a", ok: true},
		{ns: "a", ok: false, wait: 10 * time.Second},
	}
	for i, s := range steps {
		now = now.Add(s.advance)
		ok, wait := b.take(s.ns, now)
		if ok != s.ok || wait != s.wait {
			t.Errorf("step %d (%s): take = %v, %v; want %v, %v", i, s.ns, ok, wait, s.ok, s.wait)
		}
	}
	var unlimited *requestBudget
	if ok, _ := unlimited.take("a", now); !ok {
		t.Error("a nil budget refused a request")
	}
}

// A namespace's requests beyond its budget wait their turn: the sync
// answers none, comes back when the budget allows, and answers then.
func TestReconcileRequestOverBudgetWaits(t *testing.T) {
	reg := registrytest.New(t)
	reg.Push(t, "app:v1")
	f := newFixture(t, triggeredDC(reg.Ref("app:v1"), false))
	f.r.budget = newRequestBudget(1, time.Minute)
	clk := f.r.clock.(*clocktesting.FakeClock)
	request := func(token string) {
		t.Helper()
		dc := f.dc(t)
		if dc.Annotations == nil {
			dc.Annotations = map[string]string{}
		}
		dc.Annotations[dcv1.ImageTriggerRequestAnnotation] = token
		if err := f.client.Update(context.Background(), dc); err != nil {
			t.Fatal(err)
		}
	}
	answered := func() string { return f.dc(t).Annotations[dcv1.ImageTriggerResponseAnnotation] }

	request("one")
	f.reconcile(t)
	if got := answered(); got != "one" {
		t.Fatalf("first request answered %q", got)
	}
	request("two")
	if res := f.reconcile(t); res.RequeueAfter != time.Minute {
		t.Errorf("over budget: requeue after %v, want 1m", res.RequeueAfter)
	}
	if got := answered(); got != "one" {
		t.Fatalf("a request over budget was answered: %q", got)
	}
	clk.Step(time.Minute)
	f.reconcile(t)
	if got := answered(); got != "two" {
		t.Errorf("after the wait: answered %q, want two", got)
	}
}
