package node

import (
	"context"
	"slices"
	"strings"
	"sync"
	"testing"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"

	dcv1 "github.com/deployconfig/deployconfig/api/v1"
	"github.com/deployconfig/deployconfig/internal/deployment"
	"github.com/deployconfig/deployconfig/test/rollout"
)

// activeWatch records, from its start to the end of the test, which
// deployments the active Service selected and which deployments' pods its
// EndpointSlices listed, in the order they changed.
type activeWatch struct {
	mu        sync.Mutex
	selectors []string
	endpoints []string
}

// watchActive starts recording the Service's selector and the pods of its
// EndpointSlices.
func watchActive(t *testing.T, ns, service string) *activeWatch {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	aw := &activeWatch{}
	svcs, err := suite.clientset.CoreV1().Services(ns).Watch(ctx, metav1.ListOptions{
		FieldSelector: fields.OneTermEqualSelector("metadata.name", service).String(),
	})
	if err != nil {
		cancel()
		t.Fatalf("watching service %s: %v", service, err)
	}
	sliceWatch, err := suite.clientset.DiscoveryV1().EndpointSlices(ns).Watch(ctx, metav1.ListOptions{
		LabelSelector: discoveryv1.LabelServiceName + "=" + service,
	})
	if err != nil {
		cancel()
		svcs.Stop()
		t.Fatalf("watching the endpoint slices of service %s: %v", service, err)
	}
	var wg sync.WaitGroup
	wg.Go(func() {
		for ev := range svcs.ResultChan() {
			if svc, ok := ev.Object.(*corev1.Service); ok {
				aw.add(&aw.selectors, svc.Spec.Selector[dcv1.DeploymentSelectorLabel])
			}
		}
	})
	wg.Go(func() {
		for ev := range sliceWatch.ResultChan() {
			s, ok := ev.Object.(*discoveryv1.EndpointSlice)
			if !ok {
				continue
			}
			for _, e := range s.Endpoints {
				if e.TargetRef != nil && e.TargetRef.Kind == "Pod" {
					aw.add(&aw.endpoints, deploymentOfPod(e.TargetRef.Name))
				}
			}
		}
	})
	t.Cleanup(func() {
		cancel()
		svcs.Stop()
		sliceWatch.Stop()
		wg.Wait()
	})
	return aw
}

// deploymentOfPod is the deployment (RC) a pod named <rc>-<suffix> is of.
func deploymentOfPod(pod string) string {
	if i := strings.LastIndex(pod, "-"); i > 0 {
		return pod[:i]
	}
	return pod
}

func (aw *activeWatch) add(list *[]string, v string) {
	aw.mu.Lock()
	defer aw.mu.Unlock()
	if n := len(*list); n == 0 || (*list)[n-1] != v {
		*list = append(*list, v)
	}
}

// neverBack fails the test when, from the first time the Service selected
// (or listed pods of) first on, it selected or listed any of old.
func (aw *activeWatch) neverBack(t *testing.T, first string, old ...string) {
	t.Helper()
	aw.mu.Lock()
	defer aw.mu.Unlock()
	for what, seen := range map[string][]string{"selected": aw.selectors, "listed the pods of": aw.endpoints} {
		i := slices.Index(seen, first)
		if i < 0 {
			t.Errorf("the active service never %s %s: %v", what, first, seen)
			continue
		}
		for _, s := range seen[i:] {
			if slices.Contains(old, s) {
				t.Errorf("after the switch to %s the active service %s %s: %v", first, what, s, seen)
			}
		}
	}
}

// waitSwitched waits until the deployer has switched the active Service
// to rc and waits out scaleDownDelaySeconds before it scales old down,
// and checks that it recorded the switch as final.
func waitSwitched(t *testing.T, ns, rc, old string) {
	t.Helper()
	waitEndpoints(t, ns, "web", rc, 2)
	want := "--> Keeping " + old + " for"
	var log string
	err := rollout.Poll(context.Background(), rolloutTimeout, func(context.Context) (bool, error) {
		log = deployerLog(t, ns, "web")
		return strings.Contains(log, want), nil
	})
	if err != nil {
		t.Fatalf("waiting for the deployer of %s to keep %s for scaleDownDelaySeconds: %v; log:\n%s", rc, old, err, log)
	}
	got, err := suite.clientset.CoreV1().ReplicationControllers(ns).Get(context.Background(), rc, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if mark := deployment.ProgressOf(got).Switch; mark != deployment.SwitchFinal {
		t.Errorf("%s is marked switched=%q after the switch, want %q", rc, mark, deployment.SwitchFinal)
	}
}

// waitRC waits until check holds for the RC.
func waitRC(t *testing.T, ns, rc, what string, check func(*corev1.ReplicationController) bool) {
	t.Helper()
	var last map[string]string
	err := rollout.Poll(context.Background(), rolloutTimeout, func(ctx context.Context) (bool, error) {
		got, err := suite.clientset.CoreV1().ReplicationControllers(ns).Get(ctx, rc, metav1.GetOptions{})
		if err != nil {
			return false, nil
		}
		last = got.Annotations
		return check(got), nil
	})
	if err != nil {
		t.Fatalf("waiting for %s: %s: %v; annotations %v\n%s", rc, what, err, last, deployerLog(t, ns, "web"))
	}
}

// The sequence on real containers: version 2 is promoted and
// serving, and version 3 arrives during scaleDownDelaySeconds. Version 2
// keeps serving (its pods answer "version 2" at the active Service's
// endpoints) until version 3 is promoted; version 1 goes to 0 and the
// active Service never selects it again.
func TestBlueGreenNewVersionDuringScaleDownDelayServes(t *testing.T) {
	t.Parallel()
	ns := namespace(t)
	services(t, ns, "web", "web-preview")
	dc := appDC(ns, "web", rollout.Options{Replicas: 2})
	delay, now := int32(60), int32(0)
	dc.Spec.Strategy = dcv1.DeploymentStrategy{
		Type: dcv1.DeploymentStrategyTypeBlueGreen,
		BlueGreenParams: &dcv1.BlueGreenDeploymentStrategyParams{
			ActiveService: "web", PreviewService: "web-preview",
			ScaleDownDelaySeconds: &delay, AutoPromotionSeconds: &now,
		},
	}
	create(t, dc)
	requireComplete(t, ns, "web", 1)
	assertServes(t, waitEndpoints(t, ns, "web", "web-1", 2), "1")
	active := watchActive(t, ns, "web")

	setVersion(t, ns, "web", "2")
	waitSwitched(t, ns, "web-2", "web-1")
	assertServes(t, waitEndpoints(t, ns, "web", "web-2", 2), "2")

	// Version 3 arrives during the delay; it waits for promote, so that
	// version 2 is seen serving beside it.
	err := suite.dcs.Update(context.Background(), ns, "web", func(dc *dcv1.DeploymentConfig) {
		setEnv(&dc.Spec.Template.Spec.Containers[0], versionEnv, "3")
		dc.Spec.Strategy.BlueGreenParams.ScaleDownDelaySeconds = nil
		dc.Spec.Strategy.BlueGreenParams.AutoPromotionSeconds = nil
	})
	if err != nil {
		t.Fatal(err)
	}
	waitRC(t, ns, "web-2", "Failed (cancelled by version 3)", func(rc *corev1.ReplicationController) bool {
		return rc.Annotations[dcv1.DeploymentPhaseAnnotation] == string(dcv1.DeploymentPhaseFailed)
	})
	waitPaused(t, ns, "web-3", 0)
	waitRunning(t, ns, map[string]int{"web-1": 0, "web-2": 2, "web-3": 2})
	assertServes(t, waitEndpoints(t, ns, "web", "web-2", 2), "2")
	assertServes(t, waitEndpoints(t, ns, "web-preview", "web-3", 2), "3")

	mustKubectlDC(t, ns, "rollout", "promote", "web")
	requireComplete(t, ns, "web", 3)
	assertServes(t, waitEndpoints(t, ns, "web", "web-3", 2), "3")
	waitRunning(t, ns, map[string]int{"web-1": 0, "web-2": 0, "web-3": 2})
	active.neverBack(t, "web-2", "web-1")
	assertInOrder(t, deployerLog(t, ns, "web"),
		"--> Service web now selects web-2",
		"--> Scaling web-3 to 2",
		"--> Service web-preview now selects web-3",
		"    Promoted",
		"--> Service web now selects web-3",
		"--> Scaling web-2 down to zero",
		"--> Success")
}
