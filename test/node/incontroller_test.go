package node

import (
	"context"
	"fmt"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	dcv1 "github.com/deployconfig/deployconfig/api/v1"
	"github.com/deployconfig/deployconfig/internal/deployment"
	"github.com/deployconfig/deployconfig/internal/dev/imagebuild"
	"github.com/deployconfig/deployconfig/internal/dev/realnode"
	"github.com/deployconfig/deployconfig/test/rollout"
)

// maxLogAnnotation is the most of a rollout's log dc-controller keeps on
// its deployment (DeploymentLogAnnotation).
const maxLogAnnotation = 16 << 10

// killCase is a strategy whose rollout dc-controller runs itself, killed
// in its middle by TestInControllerRolloutsSurviveTheLeader.
type killCase struct {
	name     string
	replicas int32
	// dc builds the DeploymentConfig "web" in ns.
	dc func(ns string) *dcv1.DeploymentConfig
	// waits is true for a middle that lasts until promote (a canary pause,
	// a blue-green promotion wait): such rollouts are brought there first
	// and promoted once the new leader leads. The others' middle is their
	// scaling, made long by minReadySeconds and updatePeriodSeconds.
	waits bool
	// middle reports whether rollout #2, to, is in its middle, replacing
	// from.
	middle func(from, to *corev1.ReplicationController) bool
	// log is what `kubectl dc logs web` shows of rollout #2, in order:
	// lines the new leader prints, whether or not the old one's were kept.
	log []string
	// service, if set, is the Service whose endpoints must serve #2.
	service string
}

// running reports whether a deployment is in phase Running.
func running(rc *corev1.ReplicationController) bool {
	return deployment.Phase(rc) == dcv1.DeploymentPhaseRunning
}

// killCases are the strategies dc-controller can run without a pod.
func killCases() []killCase {
	return []killCase{{
		name: "Recreate", replicas: 2,
		dc: func(ns string) *dcv1.DeploymentConfig {
			dc := appDC(ns, "web", rollout.Options{Replicas: 2, Strategy: dcv1.DeploymentStrategyTypeRecreate})
			// Each scale-up waits 12 s for its pods to count as available:
			// the killed leader leaves the rollout at web-2's first pod.
			dc.Spec.MinReadySeconds = 12
			return dc
		},
		middle: func(from, to *corev1.ReplicationController) bool {
			return running(to) && deployment.Replicas(from) == 0 && deployment.Replicas(to) == 1
		},
		log: []string{"--> Scaling web-2 to 2", "--> Success"},
	}, {
		name: "Rolling", replicas: 3,
		dc: func(ns string) *dcv1.DeploymentConfig {
			dc := appDC(ns, "web", rollout.Options{Replicas: 3, MaxSurge: "1", MaxUnavailable: "0"})
			// Three rounds, each waiting 6 s for the new pod to be available
			// and 2 s after the scale-up.
			dc.Spec.MinReadySeconds = 6
			dc.Spec.Strategy.RollingParams.UpdatePeriodSeconds = ptr.To(int64(2))
			return dc
		},
		middle: func(from, to *corev1.ReplicationController) bool {
			return running(to) && deployment.Replicas(to) >= 1 && deployment.Replicas(to) < 3 && deployment.Replicas(from) >= 1
		},
		log: []string{"--> Scaling up web-2 from", "scaling down web-1 from", "--> Success"},
	}, {
		name: "Canary", replicas: 2, waits: true,
		dc: func(ns string) *dcv1.DeploymentConfig {
			dc := appDC(ns, "web", rollout.Options{Replicas: 2, MaxSurge: "1", MaxUnavailable: "0"})
			dc.Spec.Strategy.RollingParams.Steps = []dcv1.RollingStep{{SetWeight: ptr.To(int32(50))}, {Pause: &dcv1.RolloutPause{}}}
			return dc
		},
		middle: func(_, to *corev1.ReplicationController) bool {
			p := deployment.ProgressOf(to)
			return running(to) && p.Stage == deployment.StageSteps && p.Step == 2 && p.Wait != nil
		},
		// The new leader resumes at the pause, not at step 1.
		log: []string{
			"--> Resuming at step 2 of 2: back to the weight of step 1 (setWeight 50%)",
			"--> Step 2 of 2: paused until 'kubectl dc rollout promote web'",
			"    Promoted",
			"--> Success",
		},
	}, {
		name: "BlueGreen", replicas: 2, waits: true, service: "web",
		dc: func(ns string) *dcv1.DeploymentConfig {
			dc := appDC(ns, "web", rollout.Options{Replicas: 2})
			dc.Spec.Strategy = dcv1.DeploymentStrategy{
				Type:            dcv1.DeploymentStrategyTypeBlueGreen,
				BlueGreenParams: &dcv1.BlueGreenDeploymentStrategyParams{ActiveService: "web", PreviewService: "web-preview"},
			}
			return dc
		},
		middle: func(_, to *corev1.ReplicationController) bool {
			w := deployment.ProgressOf(to).Wait
			return running(to) && w != nil && w.Gate == deployment.GatePromotion
		},
		log: []string{"    Promoted", "--> Service web now selects web-2", "--> Success"},
	}}
}

// inController marks a DeploymentConfig to have its rollouts run by
// dc-controller when they need no container (the suite's controller runs
// with the default, --deployer-mode=pod).
func inController(dc *dcv1.DeploymentConfig) *dcv1.DeploymentConfig {
	if dc.Annotations == nil {
		dc.Annotations = map[string]string{}
	}
	dc.Annotations[dcv1.DeployerModeAnnotation] = dcv1.DeployerModeControllerWhenPossible
	return dc
}

// In-controller rollouts on the real node: a rollout of each strategy that needs no
// container, on a DeploymentConfig annotated controller-when-possible, is
// run by the leading dc-controller with no deployer pod. The leader's pod
// is killed while all four are in their middle at once: Recreate and
// Rolling scaling (their middle made long by minReadySeconds and
// updatePeriodSeconds, not by the test waiting), a canary at its pause, a
// blue-green rollout waiting for promote. The other replica takes over,
// resumes each from what its RC records, and each ends Complete, with
// real pods of the new version serving, the RC marked as run by the
// controller, its log in `kubectl dc logs`, and no deployer pod ever
// created in its namespace. A rollout with an execNewPod hook or a Custom
// strategy, annotated alike, still gets a deployer pod.
func TestInControllerRolloutsSurviveTheLeader(t *testing.T) {
	if err := suite.cluster.WaitControllerReady(context.Background(), rolloutTimeout); err != nil {
		t.Fatalf("dc-controller has no standby to take over: %v", err)
	}
	cases := killCases()
	nss := make([]string, len(cases))
	pods := make([]*deployerPods, len(cases))
	for i, tc := range cases {
		nss[i] = namespace(t)
		pods[i] = watchDeployerPods(t, nss[i])
		if tc.service != "" {
			services(t, nss[i], "web", "web-preview")
		}
		create(t, inController(tc.dc(nss[i])))
	}
	podCases := startPodCases(t)
	for i := range cases {
		requireComplete(t, nss[i], "web", 1)
	}

	// The rollouts that wait for promote go first; then the scaling ones,
	// until all four are in their middle at the same time.
	var started []int
	for _, waits := range []bool{true, false} {
		for i, tc := range cases {
			if tc.waits == waits {
				setVersion(t, nss[i], "web", "2")
				started = append(started, i)
			}
		}
		waitMiddles(t, cases, nss, started)
	}
	leader := leaderPod(t)
	err := suite.clientset.CoreV1().Pods(realnode.ControllerNamespace).Delete(context.Background(), leader,
		metav1.DeleteOptions{GracePeriodSeconds: ptr.To(int64(0))})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("killed the leader %s with the four rollouts in their middle", leader)
	if next := leaderPod(t); next == leader {
		t.Fatalf("the leader is still %s, which was killed", leader)
	}
	for i, tc := range cases {
		if tc.waits {
			mustKubectlDC(t, nss[i], "rollout", "promote", "web")
		}
	}

	for i, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			requireInControllerComplete(t, tc, nss[i])
			pods[i].none(t)
		})
	}
	podCases.check(t)
	if err := suite.cluster.WaitControllerReady(context.Background(), rolloutTimeout); err != nil {
		t.Fatal(err)
	}
}

// waitMiddles waits until the rollout #2 of each of the cases at indices
// is in its middle, all at once.
func waitMiddles(t *testing.T, cases []killCase, nss []string, indices []int) {
	t.Helper()
	var outside []string
	err := rollout.Poll(context.Background(), rolloutTimeout, func(ctx context.Context) (bool, error) {
		outside = outside[:0]
		for _, i := range indices {
			tc := cases[i]
			rcs := suite.clientset.CoreV1().ReplicationControllers(nss[i])
			from, err := rcs.Get(ctx, "web-1", metav1.GetOptions{})
			if err != nil {
				return false, err
			}
			to, err := rcs.Get(ctx, "web-2", metav1.GetOptions{})
			if err != nil {
				return false, err
			}
			if deployment.IsTerminal(deployment.Phase(to)) {
				return false, rollout.Permanent(fmt.Errorf("%s: web-2 ended %s before the others reached their middle", tc.name, deployment.Phase(to)))
			}
			if !tc.middle(from, to) {
				outside = append(outside, fmt.Sprintf("%s (web-1 at %d, web-2 at %d, %s)", tc.name,
					deployment.Replicas(from), deployment.Replicas(to), deployment.Phase(to)))
			}
		}
		return len(outside) == 0, nil
	})
	if err != nil {
		t.Fatalf("waiting for every rollout to be in its middle: %v; last not there: %v", err, outside)
	}
}

// requireInControllerComplete checks how a case's rollout #2 ended: Complete,
// the new version's pods running and serving, both deployments run by the
// controller, its log kept on the RC and shown by `kubectl dc logs`.
func requireInControllerComplete(t *testing.T, tc killCase, ns string) {
	t.Helper()
	requireComplete(t, ns, "web", 2)
	waitRunning(t, ns, map[string]int{"web-1": 0, "web-2": int(tc.replicas)})
	assertPodsServe(t, ns, "web-2", "2")
	if tc.service != "" {
		assertServes(t, waitEndpoints(t, ns, tc.service, "web-2", int(tc.replicas)), "2")
	}
	for _, name := range []string{"web-1", "web-2"} {
		rc, err := suite.clientset.CoreV1().ReplicationControllers(ns).Get(context.Background(), name, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if runner := deployment.ProgressOf(rc).Runner; runner.Kind != deployment.RunnerController {
			t.Errorf("%s has the runner %+v, want %q", name, runner, deployment.RunnerController)
		}
		if log := rc.Annotations[dcv1.DeploymentLogAnnotation]; !strings.Contains(log, "--> Success") || len(log) > maxLogAnnotation {
			t.Errorf("%s's %s (%d bytes, at most %d) has no --> Success:\n%s", name, dcv1.DeploymentLogAnnotation, len(log), maxLogAnnotation, log)
		}
	}
	assertInOrder(t, deployerLog(t, ns, "web"), tc.log...)
}

// deployerPods records the names of the deployer and hook pods created in
// a namespace while a test runs.
type deployerPods struct {
	ns    string
	mu    sync.Mutex
	names []string
	// ended is set when the watch ended before the test did: it then
	// cannot tell that no pod was created.
	ended bool
}

// watchDeployerPods starts recording the pods labelled as deployer or
// hook pods in ns.
func watchDeployerPods(t *testing.T, ns string) *deployerPods {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	w, err := suite.clientset.CoreV1().Pods(ns).Watch(ctx, metav1.ListOptions{LabelSelector: dcv1.DeployerPodForDeploymentLabel})
	if err != nil {
		cancel()
		t.Fatalf("watching the deployer pods of %s: %v", ns, err)
	}
	dp := &deployerPods{ns: ns}
	done := make(chan struct{})
	go func() {
		defer close(done)
		for ev := range w.ResultChan() {
			if pod, ok := ev.Object.(*corev1.Pod); ok {
				dp.add(pod.Name)
			}
		}
		dp.mu.Lock()
		dp.ended = ctx.Err() == nil
		dp.mu.Unlock()
	}()
	t.Cleanup(func() {
		cancel()
		w.Stop()
		<-done
	})
	return dp
}

func (dp *deployerPods) add(name string) {
	dp.mu.Lock()
	defer dp.mu.Unlock()
	if !slices.Contains(dp.names, name) {
		dp.names = append(dp.names, name)
	}
}

// seen returns the pods recorded so far, and whether the watch still runs.
func (dp *deployerPods) seen() ([]string, bool) {
	dp.mu.Lock()
	defer dp.mu.Unlock()
	return slices.Clone(dp.names), !dp.ended
}

// none fails the test if a deployer or hook pod was created in the
// namespace, or if the watch ended too early to tell.
func (dp *deployerPods) none(t *testing.T) {
	t.Helper()
	names, watching := dp.seen()
	if len(names) > 0 {
		t.Errorf("deployer or hook pods were created in %s: %v", dp.ns, names)
	}
	if !watching {
		t.Errorf("the watch of %s's deployer pods ended early", dp.ns)
	}
}

// podCase is a DeploymentConfig annotated controller-when-possible whose
// rollout needs a container of its own.
type podCase struct {
	name, ns string
	pods     *deployerPods
}

// podCases are rollouts that must still run in a deployer pod.
type podCases []podCase

// startPodCases creates, annotated controller-when-possible, a Recreate
// DeploymentConfig with an execNewPod pre hook and one with a Custom
// strategy.
func startPodCases(t *testing.T) podCases {
	t.Helper()
	var cases podCases
	for _, name := range []string{"execNewPod hook", "Custom strategy"} {
		ns := namespace(t)
		pods := watchDeployerPods(t, ns)
		var dc *dcv1.DeploymentConfig
		if name == "Custom strategy" {
			dc = appDC(ns, "web", rollout.Options{Replicas: 1})
			dc.Spec.Strategy = dcv1.DeploymentStrategy{
				Type: dcv1.DeploymentStrategyTypeCustom,
				CustomParams: &dcv1.CustomDeploymentStrategyParams{
					Image:   suite.images[imagebuild.DeployerImageName],
					Command: []string{"/bin/sh", "-c", `echo "custom strategy of $DC_DEPLOYMENT_NAME" && dc-deploy`},
				},
			}
		} else {
			dc = appDC(ns, "web", rollout.Options{Replicas: 1, Strategy: dcv1.DeploymentStrategyTypeRecreate,
				Hooks: map[string]*dcv1.LifecycleHook{"pre": rollout.ExecHook(dcv1.LifecycleHookFailurePolicyAbort, `echo "pre hook of $DC_DEPLOYMENT_NAME"`)}})
		}
		create(t, inController(dc))
		cases = append(cases, podCase{name: name, ns: ns, pods: pods})
	}
	return cases
}

// check waits for each rollout to complete and checks that a deployer pod
// ran it and that its RC is not marked as run by the controller.
func (cases podCases) check(t *testing.T) {
	t.Helper()
	for _, pc := range cases {
		t.Run(pc.name, func(t *testing.T) {
			requireComplete(t, pc.ns, "web", 1)
			rc, err := suite.clientset.CoreV1().ReplicationControllers(pc.ns).Get(context.Background(), "web-1", metav1.GetOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if runner := deployment.ProgressOf(rc).Runner; runner.Kind != deployment.RunnerPod {
				t.Errorf("web-1, which needs a container, has the runner %+v", runner)
			}
			if names, _ := pc.pods.seen(); !slices.Contains(names, deployment.DeployerPodName("web-1")) {
				t.Errorf("no deployer pod %s was created; deployer and hook pods seen: %v", deployment.DeployerPodName("web-1"), names)
			}
			assertInOrder(t, deployerLog(t, pc.ns, "web"), "of web-1", "--> Success")
		})
	}
}

// The chart's deployerMode reaches dc-controller as --deployer-mode, left
// out at its default (pod, dc-controller's own), so that the default
// rendering stays config/default's; maxControllerRollouts likewise; the
// schema refuses other modes with the field named.
func TestHelmChartDeployerMode(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		set  []string
		want []string
		not  []string
	}{
		{nil, nil, []string{"--deployer-mode", "--max-controller-rollouts"}},
		{[]string{"deployerMode=pod"}, nil, []string{"--deployer-mode"}},
		{[]string{"deployerMode=controller-when-possible", "maxControllerRollouts=500"},
			[]string{"--deployer-mode=controller-when-possible", "--max-controller-rollouts=500"}, nil},
	} {
		args := []string{"template", "deployconfig", chartDir, "--show-only", "templates/deployment.yaml"}
		for _, s := range tc.set {
			args = append(args, "--set", s)
		}
		out, err := helmLocal(args...)
		if err != nil {
			t.Fatal(err)
		}
		for _, w := range tc.want {
			if !strings.Contains(out, "- "+w+"\n") {
				t.Errorf("helm template --set %v: no argument %s in\n%s", tc.set, w, out)
			}
		}
		for _, n := range tc.not {
			if strings.Contains(out, n) {
				t.Errorf("helm template --set %v: argument %s given, want it left to dc-controller's default", tc.set, n)
			}
		}
	}
	for _, set := range []string{"deployerMode=controller", "maxControllerRollouts=0"} {
		out, err := helmLocal("template", "deployconfig", chartDir, "--set", set)
		field := strings.SplitN(set, "=", 2)[0]
		if err == nil || !strings.Contains(out, "values don't meet the specifications of the schema") || !strings.Contains(out, field) {
			t.Errorf("helm template --set %s: want a schema error naming %s, got %v\n%s", set, field, err, out)
		}
	}
}

// helmLocal runs bin/helm without a cluster and returns its combined
// output.
func helmLocal(args ...string) (string, error) {
	out, err := exec.Command(filepath.Join(suite.binDir, "helm"), args...).CombinedOutput()
	if err != nil {
		return string(out), fmt.Errorf("helm %s: %w", strings.Join(args, " "), err)
	}
	return string(out), nil
}
