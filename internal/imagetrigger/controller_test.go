package imagetrigger

import (
	"context"
	"net"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/tools/events"
	clocktesting "k8s.io/utils/clock/testing"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	dcv1 "github.com/deployconfig/deployconfig/api/v1"
	"github.com/deployconfig/deployconfig/internal/registry"
	"github.com/deployconfig/deployconfig/internal/registry/registrytest"
)

// reconcilerFixture is a Reconciler on a fake API server, resolving
// against real (in-memory) registries, with its resolver driven by hand.
type reconcilerFixture struct {
	r        *Reconciler
	client   client.Client
	recorder *events.FakeRecorder
}

func newFixture(t *testing.T, objs ...client.Object) *reconcilerFixture {
	t.Helper()
	scheme := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	if err := dcv1.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	c := fake.NewClientBuilder().WithScheme(scheme).WithObjects(objs...).WithStatusSubresource(&dcv1.DeploymentConfig{}).Build()
	clk := clocktesting.NewFakeClock(epoch)
	recorder := events.NewFakeRecorder(100)
	resolver := NewResolver(ResolverOptions{Interval: time.Minute, Clock: clk, Rand: func() float64 { return 0 }})
	return &reconcilerFixture{
		r: &Reconciler{
			client: c, apiReader: c, recorder: recorder, resolver: resolver,
			creds: newCredentialCache(registry.ReaderFor(c), time.Minute, clk),
			clock: clk, interval: time.Minute, rand: func() float64 { return 0 },
		},
		client:   c,
		recorder: recorder,
	}
}

func (f *reconcilerFixture) reconcile(t *testing.T) reconcile.Result {
	t.Helper()
	res, err := f.r.Reconcile(context.Background(), reconcile.Request{NamespacedName: dcKey("web")})
	if err != nil {
		t.Fatalf("Reconcile: %v", err)
	}
	return res
}

// poll runs the resolver's due lookups.
func (f *reconcilerFixture) poll(t *testing.T) {
	t.Helper()
	pollDue(t, f.r.resolver)
}

func (f *reconcilerFixture) dc(t *testing.T) *dcv1.DeploymentConfig {
	t.Helper()
	dc := &dcv1.DeploymentConfig{}
	if err := f.client.Get(context.Background(), dcKey("web"), dc); err != nil {
		t.Fatal(err)
	}
	return dc
}

func (f *reconcilerFixture) events() []string {
	var out []string
	for {
		select {
		case e := <-f.recorder.Events:
			out = append(out, e)
		default:
			return out
		}
	}
}

// triggeredDC returns a DeploymentConfig whose container web follows ref.
func triggeredDC(ref string, automatic bool) *dcv1.DeploymentConfig {
	p := params(automatic, "web")
	p.From.Name = ref
	dc := testDC(p)
	dc.Spec.Template.Spec.Containers[0].Image = ref
	return dc
}

func TestReconcileWritesTheResolvedDigest(t *testing.T) {
	reg := registrytest.New(t)
	digest := reg.Push(t, "app:v1")
	f := newFixture(t, triggeredDC(reg.Ref("app:v1"), true))

	// The first sync subscribes; nothing is known yet.
	if res := f.reconcile(t); res.RequeueAfter != time.Minute {
		t.Errorf("requeue after %v, want the poll interval", res.RequeueAfter)
	}
	if got := f.dc(t).Spec.Template.Spec.Containers[0].Image; got != reg.Ref("app:v1") {
		t.Fatalf("image written before any lookup: %s", got)
	}
	f.poll(t)
	f.reconcile(t)
	want := reg.Ref("app@" + digest.String())
	dc := f.dc(t)
	if got := dc.Spec.Template.Spec.Containers[0].Image; got != want {
		t.Errorf("image %s, want %s", got, want)
	}
	if got := dc.Spec.Triggers[1].ImageChangeParams.LastTriggeredImage; got != want {
		t.Errorf("lastTriggeredImage %s, want %s", got, want)
	}
	if evs := f.events(); len(evs) != 1 || !strings.Contains(evs[0], ReasonImageTriggered) {
		t.Errorf("events %v", evs)
	}
	if c := findCondition(dc.Status.Conditions, dcv1.ImageTriggerFailure); c != nil {
		t.Errorf("condition %+v on success", c)
	}
}

func TestReconcileAnswersRequests(t *testing.T) {
	reg := registrytest.New(t)
	digest := reg.Push(t, "app:v1")
	dc := triggeredDC(reg.Ref("app:v1"), false)
	f := newFixture(t, dc)

	f.reconcile(t)
	if len(f.r.resolver.entries) != 0 {
		t.Error("a manual trigger was subscribed")
	}
	if got := f.dc(t).Spec.Template.Spec.Containers[0].Image; got != reg.Ref("app:v1") {
		t.Fatalf("a manual trigger wrote %s without a request", got)
	}

	current := f.dc(t)
	current.Annotations = map[string]string{dcv1.ImageTriggerRequestAnnotation: "2025-01-01T00:00:00Z"}
	if err := f.client.Update(context.Background(), current); err != nil {
		t.Fatal(err)
	}
	f.reconcile(t)
	got := f.dc(t)
	want := reg.Ref("app@" + digest.String())
	if img := got.Spec.Template.Spec.Containers[0].Image; img != want {
		t.Errorf("image %s, want %s", img, want)
	}
	if _, pending := got.Annotations[dcv1.ImageTriggerRequestAnnotation]; pending {
		t.Error("the request is still pending")
	}
	if got.Annotations[dcv1.ImageTriggerResponseAnnotation] != "2025-01-01T00:00:00Z" || got.Annotations[dcv1.ImageTriggerErrorAnnotation] != "" {
		t.Errorf("annotations %v", got.Annotations)
	}
}

func TestReconcileReportsRegistryFailures(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	unreachable := l.Addr().String() + "/app:v1"
	l.Close()
	f := newFixture(t, triggeredDC(unreachable, true))

	f.reconcile(t)
	f.poll(t)
	f.reconcile(t)
	dc := f.dc(t)
	c := findCondition(dc.Status.Conditions, dcv1.ImageTriggerFailure)
	if c == nil || c.Status != corev1.ConditionTrue || c.Reason != ReasonImageResolveFailed || !strings.Contains(c.Message, unreachable) {
		t.Fatalf("condition %+v", c)
	}
	if dc.Spec.Template.Spec.Containers[0].Image != unreachable || dc.Spec.Triggers[1].ImageChangeParams.LastTriggeredImage != "" {
		t.Error("a failed lookup changed the spec")
	}
	evs := f.events()
	if len(evs) != 1 || !strings.HasPrefix(evs[0], "Warning "+ReasonImageResolveFailed) {
		t.Errorf("events %v", evs)
	}
	// The same failure again records no new event.
	f.reconcile(t)
	if evs := f.events(); len(evs) != 0 {
		t.Errorf("repeated events %v", evs)
	}

	// A request fails with the same error, in the answer.
	dc.Annotations = map[string]string{dcv1.ImageTriggerRequestAnnotation: "t1"}
	if err := f.client.Update(context.Background(), dc); err != nil {
		t.Fatal(err)
	}
	f.reconcile(t)
	if got := f.dc(t).Annotations; got[dcv1.ImageTriggerResponseAnnotation] != "t1" || !strings.Contains(got[dcv1.ImageTriggerErrorAnnotation], unreachable) {
		t.Errorf("annotations %v", got)
	}
}

func TestReconcileForgetsDeletedAndUntriggeredConfigs(t *testing.T) {
	dc := triggeredDC("r.example.com/app:1", true)
	f := newFixture(t, dc)
	f.reconcile(t)
	if len(f.r.resolver.entries) != 1 {
		t.Fatal("not subscribed")
	}
	current := f.dc(t)
	current.Spec.Triggers = current.Spec.Triggers[:1]
	if err := f.client.Update(context.Background(), current); err != nil {
		t.Fatal(err)
	}
	current.Status.Conditions = []dcv1.DeploymentCondition{{Type: dcv1.ImageTriggerFailure, Status: corev1.ConditionTrue, Reason: ReasonImageResolveFailed, LastTransitionTime: metav1.Now()}}
	if err := f.client.Status().Update(context.Background(), current); err != nil {
		t.Fatal(err)
	}
	f.reconcile(t)
	if len(f.r.resolver.entries) != 0 {
		t.Error("still subscribed after the trigger was removed")
	}
	if c := findCondition(f.dc(t).Status.Conditions, dcv1.ImageTriggerFailure); c == nil || c.Status != corev1.ConditionFalse {
		t.Errorf("condition %+v after the trigger was removed", c)
	}
	if err := f.client.Delete(context.Background(), current); err != nil {
		t.Fatal(err)
	}
	f.reconcile(t)
}
