package integration

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/util/retry"
	kstatus "sigs.k8s.io/cli-utils/pkg/kstatus/status"
	"sigs.k8s.io/yaml"

	dcv1 "github.com/deployconfig/deployconfig/api/v1"
	"github.com/deployconfig/deployconfig/internal/deployment"
)

// argoTestdata is where the Argo CD health check's test objects live: this
// test captures them from the controller, so they are what it writes.
// DC_UPDATE_TESTDATA=1 rewrites them; otherwise they must match.
var argoTestdata = filepath.Join("..", "..", "integrations", "argocd", "resource_customizations",
	"apps.deployconfig.io", "DeploymentConfig", "testdata")

// argoActionTestdata holds the actions' test objects: the inputs among
// them (actionInputs) are captured too.
var argoActionTestdata = filepath.Join(argoTestdata, "..", "actions", "testdata")

var actionInputs = map[string]bool{"healthy": true, "paused": true, "progressing": true, "degraded": true, "awaiting-promotion": true}

var dcResource = dcv1.GroupVersion.WithResource("deploymentconfigs")

// kstatusOf computes cli-utils' kstatus of a DeploymentConfig as served.
func kstatusOf(t *testing.T, u *unstructured.Unstructured) *kstatus.Result {
	t.Helper()
	res, err := kstatus.Compute(u)
	if err != nil {
		t.Fatalf("kstatus.Compute: %v", err)
	}
	return res
}

// getDCUnstructured reads a DeploymentConfig as a tool reads it.
func getDCUnstructured(ctx context.Context, t *testing.T, ns, name string) *unstructured.Unstructured {
	t.Helper()
	u, err := dynamic.NewForConfigOrDie(cluster.cfg).Resource(dcResource).Namespace(ns).Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		t.Fatalf("get dc %s: %v", name, err)
	}
	return u
}

// waitKstatus waits until kstatus says want with the kstatus conditions'
// reason, and returns the object it said it of.
func waitKstatus(t *testing.T, ns, name string, want kstatus.Status, reason string) *unstructured.Unstructured {
	t.Helper()
	var got *unstructured.Unstructured
	waitFor(t, fmt.Sprintf("dc %s kstatus %s (%s)", name, want, reason), func(ctx context.Context) (bool, string, error) {
		got = getDCUnstructured(ctx, t, ns, name)
		res := kstatusOf(t, got)
		ready := readyCondition(got)
		return res.Status == want && ready["reason"] == reason, fmt.Sprintf("%s %q, Ready %v", res.Status, res.Message, ready), nil
	})
	return got
}

// readyCondition returns the Ready condition of a served DeploymentConfig.
func readyCondition(u *unstructured.Unstructured) map[string]any {
	conds, _, _ := unstructured.NestedSlice(u.Object, "status", "conditions")
	for _, c := range conds {
		if m, ok := c.(map[string]any); ok && m["type"] == "Ready" {
			return m
		}
	}
	return nil
}

// kstatusRecorder watches a namespace's DeploymentConfigs and keeps the
// kstatus of every version of them, per generation.
type kstatusRecorder struct {
	mu   sync.Mutex
	seen map[int64][]kstatus.Status
	rv   string
	// last is the last version of each DeploymentConfig; conditionsOnly
	// the writes that changed nothing but the kstatus conditions, which
	// would be writes they added.
	last           map[string]*unstructured.Unstructured
	conditionsOnly []string
}

// withoutKstatusConditions is a DeploymentConfig without what changes on
// every write (resourceVersion, managedFields) and without the kstatus
// conditions.
func withoutKstatusConditions(u *unstructured.Unstructured) map[string]any {
	obj := u.DeepCopy().Object
	unstructured.RemoveNestedField(obj, "metadata", "resourceVersion")
	unstructured.RemoveNestedField(obj, "metadata", "managedFields")
	conds, _, _ := unstructured.NestedSlice(obj, "status", "conditions")
	var kept []any
	for _, c := range conds {
		switch c.(map[string]any)["type"] {
		case "Ready", "Reconciling", "Stalled":
		default:
			kept = append(kept, c)
		}
	}
	_ = unstructured.SetNestedSlice(obj, kept, "status", "conditions")
	return obj
}

// noteWrite records a write that changed only the kstatus conditions.
func (r *kstatusRecorder) noteWrite(u *unstructured.Unstructured) {
	prev := r.last[u.GetName()]
	r.last[u.GetName()] = u
	if prev != nil && equality.Semantic.DeepEqual(withoutKstatusConditions(prev), withoutKstatusConditions(u)) {
		r.conditionsOnly = append(r.conditionsOnly, fmt.Sprintf("%s at resourceVersion %s: %v", u.GetName(), u.GetResourceVersion(), readyCondition(u)))
	}
}

// checkNoAddedWrites fails the test if a status write changed nothing but
// the kstatus conditions: they must ride in the writes the controller
// makes anyway.
func (r *kstatusRecorder) checkNoAddedWrites(t *testing.T) {
	t.Helper()
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.conditionsOnly) > 0 {
		t.Errorf("status writes that changed only Ready/Reconciling/Stalled: %v", r.conditionsOnly)
	}
}

func recordKstatus(t *testing.T, ns string) *kstatusRecorder {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	w, err := dynamic.NewForConfigOrDie(cluster.cfg).Resource(dcResource).Namespace(ns).Watch(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatalf("watch dcs: %v", err)
	}
	rec := &kstatusRecorder{seen: map[int64][]kstatus.Status{}, last: map[string]*unstructured.Unstructured{}}
	go func() {
		defer w.Stop()
		for ev := range w.ResultChan() {
			u, ok := ev.Object.(*unstructured.Unstructured)
			if !ok || ev.Type == watch.Deleted {
				continue
			}
			res, err := kstatus.Compute(u)
			rec.mu.Lock()
			if err == nil {
				rec.seen[u.GetGeneration()] = append(rec.seen[u.GetGeneration()], res.Status)
			}
			rec.rv = u.GetResourceVersion()
			rec.noteWrite(u)
			rec.mu.Unlock()
		}
	}()
	return rec
}

// statuses returns what the recorder saw of a generation once it has seen
// the DeploymentConfig's current version.
func (r *kstatusRecorder) statuses(t *testing.T, ns, name string, generation int64) []kstatus.Status {
	t.Helper()
	rv := getDCUnstructured(context.Background(), t, ns, name).GetResourceVersion()
	var out []kstatus.Status
	waitFor(t, "the watch to catch up with "+rv, func(context.Context) (bool, string, error) {
		r.mu.Lock()
		defer r.mu.Unlock()
		out = append([]kstatus.Status(nil), r.seen[generation]...)
		return r.rv == rv, r.rv, nil
	})
	return out
}

// playRCManager reports an RC's pods as the RC manager would once they all
// run and are available.
func playRCManager(t *testing.T, ns, name string, replicas int32) {
	t.Helper()
	waitRC(t, ns, name, fmt.Sprintf("%d replicas", replicas), func(rc *corev1.ReplicationController) bool {
		return deployment.Replicas(rc) == replicas
	})
	setRCStatus(t, ns, name, func(rc *corev1.ReplicationController) {
		rc.Status = corev1.ReplicationControllerStatus{Replicas: replicas, FullyLabeledReplicas: replicas, ReadyReplicas: replicas,
			AvailableReplicas: replicas, ObservedGeneration: rc.Generation}
	})
}

// changeImage changes the DeploymentConfig's image and returns the object
// the API server stored, before any controller acted on it.
func changeImage(t *testing.T, ns, name, image string) *unstructured.Unstructured {
	t.Helper()
	var stored *unstructured.Unstructured
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		u := getDCUnstructured(context.Background(), t, ns, name)
		containers, _, _ := unstructured.NestedSlice(u.Object, "spec", "template", "spec", "containers")
		containers[0].(map[string]any)["image"] = image
		if err := unstructured.SetNestedSlice(u.Object, containers, "spec", "template", "spec", "containers"); err != nil {
			return err
		}
		var err error
		stored, err = dynamic.NewForConfigOrDie(cluster.cfg).Resource(dcResource).Namespace(ns).Update(context.Background(), u, metav1.UpdateOptions{})
		return err
	})
	if err != nil {
		t.Fatalf("change image of dc %s: %v", name, err)
	}
	return stored
}

// TestKstatusFollowsTheRollout drives a DeploymentConfig through its
// rollouts against the real API server and checks what cli-utils' kstatus
// (kubectl wait, Helm's watcher, Flux) makes of every version of it:
// InProgress from a spec change until its rollout is Complete, Current
// after, Failed when the rollout failed or was cancelled although the
// fall-back serves, InProgress while paused. It captures the Argo CD
// health check's testdata on the way.
func TestKstatusFollowsTheRollout(t *testing.T) {
	ns := newNamespace(t)
	rec := recordKstatus(t, ns)
	capture := newCapture(t, ns)

	mustCreate(t, newDC(ns, "web", nil))
	waitPhase(t, ns, "web-1", dcv1.DeploymentPhasePending)
	setPodPhase(t, ns, "web-1-deploy", corev1.PodRunning)
	waitKstatus(t, ns, "web", kstatus.InProgressStatus, dcv1.RolloutInProgressReason)
	setPodPhase(t, ns, "web-1-deploy", corev1.PodSucceeded)
	waitPhase(t, ns, "web-1", dcv1.DeploymentPhaseComplete)
	// Complete, but its pods are not there yet.
	waitKstatus(t, ns, "web", kstatus.InProgressStatus, dcv1.ReplicasNotReadyReason)
	if got := rec.statuses(t, ns, "web", 1); len(got) == 0 || got[0] != kstatus.InProgressStatus || contains(got, kstatus.CurrentStatus) {
		t.Errorf("kstatus of the first rollout before its pods ran: %v, want InProgress only, from its creation on", got)
	}
	playRCManager(t, ns, "web-1", 3)
	capture.save(t, "healthy", waitKstatus(t, ns, "web", kstatus.CurrentStatus, dcv1.RolloutCompleteReason))

	// A change that fails: Failed, though version 1 serves again.
	stored := changeImage(t, ns, "web", "registry.example.com/web:2")
	if res := kstatusOf(t, stored); res.Status != kstatus.InProgressStatus {
		t.Errorf("kstatus of the changed spec as stored: %s (%s), want InProgress", res.Status, res.Message)
	}
	capture.save(t, "not-observed", stored)
	waitPhase(t, ns, "web-2", dcv1.DeploymentPhasePending)
	setPodPhase(t, ns, "web-2-deploy", corev1.PodRunning)
	waitCondition(t, ns, "web", dcv1.DeploymentProgressing, corev1.ConditionTrue, dcv1.ReplicationControllerUpdatedReason)
	capture.save(t, "progressing", waitKstatus(t, ns, "web", kstatus.InProgressStatus, dcv1.RolloutInProgressReason))
	setPodPhase(t, ns, "web-2-deploy", corev1.PodFailed)
	waitPhase(t, ns, "web-2", dcv1.DeploymentPhaseFailed)
	waitRC(t, ns, "web-1", "serving again", func(rc *corev1.ReplicationController) bool { return deployment.Replicas(rc) == 3 })
	capture.save(t, "degraded", waitKstatus(t, ns, "web", kstatus.FailedStatus, dcv1.RolloutFailedReason))
	if got := rec.statuses(t, ns, "web", 2); contains(got, kstatus.CurrentStatus) {
		t.Errorf("kstatus of the failed change: %v, never Current", got)
	}

	// A change cancelled by its user: Failed too.
	changeImage(t, ns, "web", "registry.example.com/web:3")
	waitPhase(t, ns, "web-3", dcv1.DeploymentPhasePending)
	patchRC(t, ns, "web-3", func(rc *corev1.ReplicationController) {
		rc.Annotations[dcv1.DeploymentCancelledAnnotation] = "true"
		rc.Annotations[dcv1.DeploymentStatusReasonAnnotation] = dcv1.DeploymentCancelledByUser
	})
	capture.save(t, "cancelled", waitKstatus(t, ns, "web", kstatus.FailedStatus, dcv1.RolloutCancelledReason))

	// Paused: InProgress, whatever the spec says.
	updateDC(t, ns, "web", func(dc *dcv1.DeploymentConfig) { dc.Spec.Paused = true })
	capture.save(t, "paused", waitKstatus(t, ns, "web", kstatus.InProgressStatus, dcv1.PausedReason))

	// Resumed with a good change: InProgress until it is Complete and its
	// pods run, Current after.
	updateDC(t, ns, "web", func(dc *dcv1.DeploymentConfig) { dc.Spec.Paused = false })
	changeImage(t, ns, "web", "registry.example.com/web:4")
	last := getDCUnstructured(context.Background(), t, ns, "web").GetGeneration()
	waitPhase(t, ns, "web-4", dcv1.DeploymentPhasePending)
	setPodPhase(t, ns, "web-4-deploy", corev1.PodRunning)
	waitKstatus(t, ns, "web", kstatus.InProgressStatus, dcv1.RolloutInProgressReason)
	setPodPhase(t, ns, "web-4-deploy", corev1.PodSucceeded)
	waitPhase(t, ns, "web-4", dcv1.DeploymentPhaseComplete)
	playRCManager(t, ns, "web-1", 0)
	if got := rec.statuses(t, ns, "web", last); contains(got, kstatus.CurrentStatus) {
		t.Errorf("kstatus of version 4 before its pods ran: %v, never Current", got)
	}
	playRCManager(t, ns, "web-4", 3)
	waitKstatus(t, ns, "web", kstatus.CurrentStatus, dcv1.RolloutCompleteReason)
	rec.statuses(t, ns, "web", last)
	rec.checkNoAddedWrites(t)
}

// TestKstatusWaitsForTheFirstImage: a DeploymentConfig whose image trigger
// has not resolved an image yet is InProgress, from its creation on (the
// CRD defaults status.observedGeneration, so even the object the API
// server first stores is not Current).
func TestKstatusWaitsForTheFirstImage(t *testing.T) {
	ns := newNamespace(t)
	rec := recordKstatus(t, ns)
	capture := newCapture(t, ns)
	addr := closedAddress(t)
	capture.replace(addr, "registry.example.com")
	mustCreate(t, imageDC(ns, "web", addr+"/app:1", true, nil, "web"))
	waitCondition(t, ns, "web", dcv1.ImageTriggerFailure, corev1.ConditionTrue, "ImageResolveFailed")
	capture.save(t, "waiting-for-image", waitKstatus(t, ns, "web", kstatus.InProgressStatus, dcv1.WaitingForImageReason))
	got := rec.statuses(t, ns, "web", 1)
	if len(got) == 0 || contains(got, kstatus.CurrentStatus) {
		t.Errorf("kstatus of a DeploymentConfig waiting for its image: %v, want InProgress only", got)
	}
	rec.checkNoAddedWrites(t)
}

// canaryDC is a DeploymentConfig whose rollouts set a weight, then wait
// for `kubectl dc rollout promote` at a pause step without a duration.
func canaryDC(ns, name string) *dcv1.DeploymentConfig {
	return newDC(ns, name, func(dc *dcv1.DeploymentConfig) {
		dc.Spec.Strategy = dcv1.DeploymentStrategy{Type: dcv1.DeploymentStrategyTypeRolling, RollingParams: &dcv1.RollingDeploymentStrategyParams{
			Steps: []dcv1.RollingStep{{SetWeight: ptr(int32(50))}, {Pause: &dcv1.RolloutPause{}}}}}
	})
}

// pauseAt plays the runner of a canary reaching a pause step (with a
// duration, or without: waiting for a person) or an Inconclusive analysis.
func pauseAt(t *testing.T, ns, rc string, step int, reason dcv1.PauseReason, d time.Duration) {
	t.Helper()
	recordProgress(t, ns, rc, func(p *deployment.Progress) {
		p.Stage, p.Step, p.Steps = deployment.StageSteps, step, 2
		p.Wait = &deployment.Wait{Gate: deployment.StepGate(step), Reason: reason, Since: metav1.NewTime(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))}
		if d != 0 {
			p.Wait.Duration = &metav1.Duration{Duration: d}
		}
	})
}

// TestKstatusAwaitingPromotion: a rollout waiting for a person (a pause
// step without a duration, an Inconclusive analysis) is InProgress with
// the reason AwaitingPromotion and the command to run, which Argo CD
// shows as Suspended; a timed pause is InProgress as any running rollout.
// It captures the Argo CD testdata awaiting-promotion.
func TestKstatusAwaitingPromotion(t *testing.T) {
	ns := newNamespace(t)
	rec := recordKstatus(t, ns)
	capture := newCapture(t, ns)
	mustCreate(t, canaryDC(ns, "web"))
	runDeployer(t, ns, "web-1", corev1.PodSucceeded)
	playRCManager(t, ns, "web-1", 3)
	waitKstatus(t, ns, "web", kstatus.CurrentStatus, dcv1.RolloutCompleteReason)

	changeImage(t, ns, "web", "registry.example.com/web:2")
	waitPhase(t, ns, "web-2", dcv1.DeploymentPhasePending)
	setPodPhase(t, ns, "web-2-deploy", corev1.PodRunning)
	waitPhase(t, ns, "web-2", dcv1.DeploymentPhaseRunning)
	pauseAt(t, ns, "web-2", 2, dcv1.PauseReasonPause, 30*time.Second)
	waitKstatus(t, ns, "web", kstatus.InProgressStatus, dcv1.RolloutInProgressReason)

	pauseAt(t, ns, "web-2", 2, dcv1.PauseReasonPause, 0)
	waiting := waitKstatus(t, ns, "web", kstatus.InProgressStatus, dcv1.AwaitingPromotionReason)
	if msg, _ := readyCondition(waiting)["message"].(string); msg != "Rollout #2 is paused at step 2 of 2: promote it with 'kubectl dc rollout promote web' or abort it with 'kubectl dc rollout cancel web'" {
		t.Errorf("message %q", msg)
	}
	waitCondition(t, ns, "web", dcv1.DeploymentProgressing, corev1.ConditionTrue, dcv1.ReplicationControllerUpdatedReason)
	for _, c := range getDC(t, ns, "web").Status.Conditions {
		if c.Type == dcv1.DeploymentProgressing && !strings.Contains(c.Message, "'kubectl dc rollout promote web'") {
			t.Errorf("Progressing message %q does not say how to promote", c.Message)
		}
	}
	capture.save(t, "awaiting-promotion", waiting)

	pauseAt(t, ns, "web-2", 1, dcv1.PauseReasonInconclusive, 0)
	waitFor(t, "the Inconclusive analysis to be named", func(ctx context.Context) (bool, string, error) {
		msg, _ := readyCondition(getDCUnstructured(ctx, t, ns, "web"))["message"].(string)
		return strings.Contains(msg, "paused at step 1 of 2: an analysis was Inconclusive"), msg, nil
	})
	rec.checkNoAddedWrites(t)
}

// TestKstatusInvalidAnalysis: an analysis the controller refuses is
// Stalled (kstatus Failed), not InProgress for ever: nothing but a new
// spec rolls it out. It captures the Argo CD testdata invalid-analysis.
func TestKstatusInvalidAnalysis(t *testing.T) {
	ns := newNamespace(t)
	capture := newCapture(t, ns)
	mustCreate(t, newDC(ns, "web", func(dc *dcv1.DeploymentConfig) {
		dc.Spec.Strategy = dcv1.DeploymentStrategy{Type: dcv1.DeploymentStrategyTypeRolling, RollingParams: &dcv1.RollingDeploymentStrategyParams{
			Pre: &dcv1.LifecycleHook{FailurePolicy: dcv1.LifecycleHookFailurePolicyAbort,
				Analysis: analysisWith(func(m *dcv1.AnalysisMetric) { m.SuccessCondition = "value < 0.05" })}}}
	}))
	got := waitKstatus(t, ns, "web", kstatus.FailedStatus, dcv1.InvalidAnalysisReason)
	waitCondition(t, ns, "web", dcv1.DeploymentProgressing, corev1.ConditionFalse, dcv1.InvalidAnalysisReason)
	capture.save(t, "invalid-analysis", got)
}

func contains(statuses []kstatus.Status, s kstatus.Status) bool {
	for _, got := range statuses {
		if got == s {
			return true
		}
	}
	return false
}

// capture saves DeploymentConfigs as Argo CD test objects, stripped of what
// changes from run to run, or checks the committed ones still match.
type capture struct {
	ns       string
	replacer []string
}

func newCapture(t *testing.T, ns string) *capture {
	t.Helper()
	return &capture{ns: ns}
}

// replace makes the captured objects say new where the run said old.
func (c *capture) replace(old, new string) { c.replacer = append(c.replacer, old, new) }

func (c *capture) save(t *testing.T, name string, u *unstructured.Unstructured) {
	t.Helper()
	data, err := c.normalize(u)
	if err != nil {
		t.Fatalf("testdata %s: %v", name, err)
	}
	dirs := []string{argoTestdata}
	if actionInputs[name] {
		dirs = append(dirs, argoActionTestdata)
	}
	for _, dir := range dirs {
		path := filepath.Join(dir, name+".yaml")
		if os.Getenv("DC_UPDATE_TESTDATA") != "" {
			if err := os.WriteFile(path, data, 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		committed, err := os.ReadFile(path)
		if err != nil {
			t.Fatalf("testdata %s: %v (DC_UPDATE_TESTDATA=1 writes it)", name, err)
		}
		if string(committed) != string(data) {
			t.Errorf("%s differs from what the controller writes (DC_UPDATE_TESTDATA=1 rewrites it, then DC_UPDATE_TESTDATA=1 go test ./integrations/argocd/ the actions' expected objects); the controller wrote:\n%s", path, data)
		}
	}
}

// normalize drops what differs from run to run: identity, versions,
// timestamps, the namespace, and the words of errors that name addresses.
func (c *capture) normalize(u *unstructured.Unstructured) ([]byte, error) {
	obj := u.DeepCopy().Object
	for _, f := range []string{"uid", "resourceVersion", "creationTimestamp", "managedFields"} {
		unstructured.RemoveNestedField(obj, "metadata", f)
	}
	if err := unstructured.SetNestedField(obj, "default", "metadata", "namespace"); err != nil {
		return nil, err
	}
	conds, _, _ := unstructured.NestedSlice(obj, "status", "conditions")
	for _, cond := range conds {
		m := cond.(map[string]any)
		for _, f := range []string{"lastUpdateTime", "lastTransitionTime"} {
			if _, ok := m[f]; ok {
				m[f] = "2026-01-01T00:00:00Z"
			}
		}
		if m["type"] == string(dcv1.ImageTriggerFailure) {
			// The resolver's error words the network's answer.
			m["message"] = "resolve registry.example.com/app:1: the registry could not be reached"
		}
	}
	if conds != nil {
		if err := unstructured.SetNestedSlice(obj, conds, "status", "conditions"); err != nil {
			return nil, err
		}
	}
	data, err := yaml.Marshal(obj)
	if err != nil {
		return nil, err
	}
	return []byte(strings.NewReplacer(c.replacer...).Replace(string(data))), nil
}
