package controller

import (
	"context"
	"maps"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/events"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	dcv1 "github.com/deployconfig/deployconfig/api/v1"
	"github.com/deployconfig/deployconfig/internal/deployment"
)

// blueGreenDC is testDC with the BlueGreen strategy's Services web and
// web-preview.
func blueGreenDC(v int64) *dcv1.DeploymentConfig {
	return withVersion(testDC(func(dc *dcv1.DeploymentConfig) {
		dc.Spec.Strategy = dcv1.DeploymentStrategy{
			Type:            dcv1.DeploymentStrategyTypeBlueGreen,
			BlueGreenParams: &dcv1.BlueGreenDeploymentStrategyParams{ActiveService: "web", PreviewService: "web-preview"},
		}
	}), v)
}

// sel is the selector of deployment web-<v> of blueGreenDC.
func sel(rc string) map[string]string {
	return map[string]string{"app": "web", dcv1.DeploymentConfigSelectorLabel: "web", dcv1.DeploymentSelectorLabel: rc}
}

func TestSyncServices(t *testing.T) {
	const (
		C = dcv1.DeploymentPhaseComplete
		F = dcv1.DeploymentPhaseFailed
		R = dcv1.DeploymentPhaseRunning
	)
	type rcSpec struct {
		phase    dcv1.DeploymentPhase
		switched string
	}
	labelled := map[string]string{dcv1.ServiceOfLabel: "web"}
	for _, tc := range []struct {
		name                    string
		rcs                     []rcSpec // versions 1..n
		active, preview         map[string]string
		activeLabels            map[string]string
		wantActive, wantPreview map[string]string // nil: left as it was
		wantWrites              int
		// cached is how many of rcs the cache holds (0: all); version is
		// the DeploymentConfig's latestVersion (0: len(rcs)).
		cached, version int
	}{
		{name: "first rollout not finished: untouched",
			rcs: []rcSpec{{R, ""}}, active: map[string]string{"app": "web"}, preview: map[string]string{"app": "web"}},
		{name: "selector lost its deployment key",
			rcs: []rcSpec{{C, ""}}, active: map[string]string{"app": "web", "deploymentconfig": "web"}, preview: sel("web-1"),
			wantActive: sel("web-1"), wantPreview: sel("web-1"), wantWrites: 1},
		{name: "reset to {app: web} by a GitOps tool",
			rcs: []rcSpec{{C, ""}, {C, ""}}, active: map[string]string{"app": "web"}, activeLabels: labelled, preview: sel("web-2"),
			wantActive: sel("web-2"), wantPreview: sel("web-2"), wantWrites: 1},
		{name: "foreign keys go",
			rcs: []rcSpec{{C, ""}}, active: map[string]string{"app": "web", "deploymentconfig": "web", "deployment": "web-1", "tier": "x"}, activeLabels: labelled,
			wantActive: sel("web-1"), wantWrites: 1},
		{name: "already right: no write",
			rcs: []rcSpec{{C, ""}, {F, ""}}, active: sel("web-1"), activeLabels: labelled, preview: sel("web-1"),
			wantActive: sel("web-1"), wantWrites: 0},
		{name: "unlabelled but right: labelled once",
			rcs: []rcSpec{{C, ""}}, active: sel("web-1"), preview: sel("web-1"),
			wantActive: sel("web-1"), wantWrites: 1},
		{name: "fall-back after a failed rollout",
			rcs: []rcSpec{{C, ""}, {F, ""}}, active: sel("web-2"), activeLabels: labelled, preview: sel("web-2"),
			wantActive: sel("web-1"), wantPreview: sel("web-1"), wantWrites: 2},
		{name: "a rollout cancelled after the switch keeps its deployment",
			rcs: []rcSpec{{C, ""}, {F, dcv1.SwitchedFinal}}, active: sel("web-1"), activeLabels: labelled, preview: sel("web-2"),
			wantActive: sel("web-2"), wantPreview: sel("web-2"), wantWrites: 1},
		{name: "a deployer dead during the trial: back to the live one",
			rcs: []rcSpec{{C, ""}, {F, dcv1.SwitchedTrial}}, active: sel("web-2"), activeLabels: labelled, preview: sel("web-2"),
			wantActive: sel("web-1"), wantPreview: sel("web-1"), wantWrites: 2},
		{name: "running on trial: the latest serves",
			rcs: []rcSpec{{C, ""}, {R, dcv1.SwitchedTrial}}, active: map[string]string{"app": "web"}, activeLabels: labelled, preview: map[string]string{"x": "y"},
			wantActive: sel("web-2"), wantWrites: 1},
		{name: "running: pinned to the live one, preview is the deployer's",
			rcs: []rcSpec{{C, ""}, {R, ""}}, active: map[string]string{"app": "web"}, activeLabels: labelled, preview: map[string]string{"x": "y"},
			wantActive: sel("web-1"), wantWrites: 1},
		{name: "running: the deployer's switch is not undone before its record shows",
			rcs: []rcSpec{{C, ""}, {R, ""}}, active: sel("web-2"), activeLabels: labelled,
			wantActive: sel("web-2"), wantWrites: 0},
		{name: "running: never a third deployment",
			rcs: []rcSpec{{C, ""}, {C, ""}, {R, ""}}, active: sel("web-1"), activeLabels: labelled,
			wantActive: sel("web-2"), wantWrites: 1},
		{name: "the cache lacks the running deployment: the deployer's preview is not undone",
			rcs: []rcSpec{{C, ""}, {R, ""}}, cached: 1, active: sel("web-1"), activeLabels: labelled, preview: sel("web-2"),
			wantActive: sel("web-1"), wantWrites: 0},
		{name: "the newest deployment is not created yet: the live one serves",
			rcs: []rcSpec{{C, ""}}, version: 2, active: sel("web-1"), activeLabels: labelled, preview: sel("web-0"),
			wantActive: sel("web-1"), wantPreview: sel("web-1"), wantWrites: 1},
		{name: "running after the final switch: the latest serves",
			rcs: []rcSpec{{C, ""}, {R, dcv1.SwitchedFinal}}, active: sel("web-1"), activeLabels: labelled,
			wantActive: sel("web-2"), wantWrites: 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			version := tc.version
			if version == 0 {
				version = len(tc.rcs)
			}
			dc := blueGreenDC(int64(version))
			var rcs []*corev1.ReplicationController
			objects := []client.Object{}
			for i, s := range tc.rcs {
				rc := rcOf(t, dc, int64(i+1), s.phase, 0)
				if s.switched != "" {
					switchTo(rc, deployment.Switch(s.switched))
				}
				objects = append(objects, rc.DeepCopy())
				// As cached: the selector is dropped once observed.
				rc.Spec.Selector = nil
				rcs = append(rcs, rc)
			}
			objects = append(objects, service("web", tc.active, tc.activeLabels))
			if tc.preview != nil {
				objects = append(objects, service("web-preview", tc.preview, labelled))
			}
			if tc.cached > 0 {
				rcs = rcs[:tc.cached]
			}
			r, c, writes := servicesReconciler(t, objects...)
			if err := r.syncServices(t.Context(), dc, rcs); err != nil {
				t.Fatal(err)
			}
			for name, want := range map[string]map[string]string{"web": tc.wantActive, "web-preview": tc.wantPreview} {
				svc := &corev1.Service{}
				if err := c.Get(t.Context(), types.NamespacedName{Namespace: "ns", Name: name}, svc); err != nil {
					continue
				}
				was := tc.active
				if name == "web-preview" {
					was = tc.preview
				}
				if want == nil {
					want = was
				}
				if !maps.Equal(svc.Spec.Selector, want) {
					t.Errorf("%s selects %v, want %v", name, svc.Spec.Selector, want)
				}
			}
			if *writes != tc.wantWrites {
				t.Errorf("%d Service writes, want %d", *writes, tc.wantWrites)
			}
		})
	}
}

// TestSyncServicesUsesTheRCsOwnSelector checks that a Service is pointed
// at the labels the deployment's pods carry when the DeploymentConfig's
// template labels changed since it was made (the cache dropped the RC's
// selector).
func TestSyncServicesUsesTheRCsOwnSelector(t *testing.T) {
	dc := blueGreenDC(1)
	rc := rcOf(t, dc, 1, dcv1.DeploymentPhaseComplete, 4)
	cached := rc.DeepCopy()
	cached.Spec.Selector = nil
	dc.Spec.Template.Labels = map[string]string{"app": "web", "tier": "front"}
	r, c, _ := servicesReconciler(t, rc, service("web", map[string]string{"app": "web"}, nil))
	if err := r.syncServices(t.Context(), dc, []*corev1.ReplicationController{cached}); err != nil {
		t.Fatal(err)
	}
	svc := &corev1.Service{}
	if err := c.Get(t.Context(), types.NamespacedName{Namespace: "ns", Name: "web"}, svc); err != nil {
		t.Fatal(err)
	}
	if !maps.Equal(svc.Spec.Selector, sel("web-1")) {
		t.Errorf("web selects %v, want the RC's own %v", svc.Spec.Selector, sel("web-1"))
	}
}

// TestSyncServicesMissingService checks that a missing Service is an
// event, not an error that would retry the sync for ever.
func TestSyncServicesMissingService(t *testing.T) {
	dc := blueGreenDC(1)
	rc := rcOf(t, dc, 1, dcv1.DeploymentPhaseComplete, 4)
	r, _, _ := servicesReconciler(t, rc)
	recorder := events.NewFakeRecorder(10)
	r.Recorder = recorder
	if err := r.syncServices(t.Context(), dc, []*corev1.ReplicationController{rc}); err != nil {
		t.Fatalf("syncServices = %v, want nil", err)
	}
	select {
	case e := <-recorder.Events:
		if !strings.Contains(e, EventServiceMissing) {
			t.Errorf("event %q, want %s", e, EventServiceMissing)
		}
	default:
		t.Error("no event")
	}
}

// TestFallBackKeepsASwitchedDeployment checks that the fall-back after a
// blue-green rollout cancelled past its final switch keeps the deployment
// the active Service selects, not the one it replaced.
func TestFallBackKeepsASwitchedDeployment(t *testing.T) {
	dc := blueGreenDC(2)
	old := rcOf(t, dc, 1, dcv1.DeploymentPhaseComplete, 4)
	switched := rcOf(t, dc, 2, dcv1.DeploymentPhaseFailed, 4)
	switchTo(switched, deployment.SwitchFinal)
	r, c, _ := servicesReconciler(t, old, switched)
	if err := r.scaleDeployments(t.Context(), dc, []*corev1.ReplicationController{old, switched}); err != nil {
		t.Fatal(err)
	}
	for name, want := range map[string]int32{"web-1": 0, "web-2": 4} {
		rc := &corev1.ReplicationController{}
		if err := c.Get(t.Context(), types.NamespacedName{Namespace: "ns", Name: name}, rc); err != nil {
			t.Fatal(err)
		}
		if got := deployment.Replicas(rc); got != want {
			t.Errorf("%s has %d replicas after the fall-back, want %d", name, got, want)
		}
	}
}

func service(name string, selector, labels map[string]string) *corev1.Service {
	return &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "ns", Labels: maps.Clone(labels)},
		Spec:       corev1.ServiceSpec{Selector: maps.Clone(selector)},
	}
}

// servicesReconciler returns a reconciler on a fake client holding
// objects, and a count of the writes to Services.
func servicesReconciler(t *testing.T, objects ...client.Object) (*DeploymentConfigReconciler, client.Client, *int) {
	t.Helper()
	scheme, err := NewScheme()
	if err != nil {
		t.Fatal(err)
	}
	writes := 0
	c := fake.NewClientBuilder().WithScheme(scheme).WithObjects(objects...).WithInterceptorFuncs(interceptor.Funcs{
		Patch: func(ctx context.Context, c client.WithWatch, obj client.Object, patch client.Patch, opts ...client.PatchOption) error {
			if _, ok := obj.(*corev1.Service); ok {
				writes++
			}
			return c.Patch(ctx, obj, patch, opts...)
		},
	}).Build()
	return &DeploymentConfigReconciler{Client: c, APIReader: c, Recorder: events.NewFakeRecorder(10)}, c, &writes
}

// switchTo records on rc, as its blue-green runner does, that the active
// Service was switched to it (on trial or for good).
func switchTo(rc *corev1.ReplicationController, s deployment.Switch) {
	p := deployment.ProgressOf(rc)
	p.Stage, p.Switch = deployment.StageSwitched, s
	deployment.SetProgress(rc, p)
}
