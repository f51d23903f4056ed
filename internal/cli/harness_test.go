package cli

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	kubefake "k8s.io/client-go/kubernetes/fake"
	clocktesting "k8s.io/utils/clock/testing"
	"sigs.k8s.io/controller-runtime/pkg/client"
	ctrlfake "sigs.k8s.io/controller-runtime/pkg/client/fake"

	dcv1 "github.com/deployconfig/deployconfig/api/v1"
	"github.com/deployconfig/deployconfig/internal/deployment"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/")

// now is the fixed time of every test: relative times in golden files do
// not change from one run to the next.
var now = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

// testServer is the API server address the fake clients report.
const testServer = "https://cluster.example:6443"

// fixture is a fake cluster: a clientset for core objects, a
// controller-runtime client for DeploymentConfigs, and the terminal.
type fixture struct {
	t        *testing.T
	scheme   *runtime.Scheme
	kube     *kubefake.Clientset
	dc       client.WithWatch
	stdin    string
	terminal bool
}

// newFixture starts a fake cluster holding objs: DeploymentConfigs go to
// the controller-runtime client, everything else to the clientset.
func newFixture(t *testing.T, objs ...runtime.Object) *fixture {
	t.Helper()
	scheme, err := NewScheme()
	if err != nil {
		t.Fatal(err)
	}
	var dcs []client.Object
	var core []runtime.Object
	for _, obj := range objs {
		switch o := obj.(type) {
		case *dcv1.DeploymentConfig, *dcv1.RolloutPolicy:
			dcs = append(dcs, o.(client.Object))
			continue
		}
		core = append(core, obj)
	}
	return &fixture{
		t:      t,
		scheme: scheme,
		kube:   kubefake.NewClientset(core...),
		dc: ctrlfake.NewClientBuilder().WithScheme(scheme).WithObjects(dcs...).
			WithStatusSubresource(&dcv1.DeploymentConfig{}, &dcv1.RolloutPolicy{}).Build(),
	}
}

func (f *fixture) factory(out, errOut io.Writer) *Factory {
	return &Factory{
		Streams:    genericiooptions.IOStreams{In: strings.NewReader(f.stdin), Out: out, ErrOut: errOut},
		Clock:      clocktesting.NewFakePassiveClock(now),
		IsTerminal: func(io.Writer) bool { return f.terminal },
		Connect: func(flags *genericclioptions.ConfigFlags) (*Clients, error) {
			ns := "default"
			if flags.Namespace != nil && *flags.Namespace != "" {
				ns = *flags.Namespace
			}
			return &Clients{Kube: f.kube, DC: f.dc, Scheme: f.scheme, Namespace: ns, Server: testServer}, nil
		},
	}
}

// result is what one run of kubectl-dc did.
type result struct {
	args           []string
	stdout, stderr string
	code           int
}

// run runs kubectl-dc with args to completion.
func (f *fixture) run(args ...string) result {
	return f.runContext(context.Background(), args...)
}

func (f *fixture) runContext(ctx context.Context, args ...string) result {
	var out, errOut bytes.Buffer
	code := Main(ctx, f.factory(&out, &errOut), args)
	return result{args: args, stdout: out.String(), stderr: errOut.String(), code: code}
}

// String renders a run for a golden file.
func (r result) String() string {
	return fmt.Sprintf("$ kubectl dc %s\n--- stdout\n%s--- stderr\n%s--- exit %d\n", strings.Join(r.args, " "), r.stdout, r.stderr, r.code)
}

// golden compares got with testdata/<test name>.golden, or rewrites it
// with -update.
func golden(t *testing.T, got string) {
	t.Helper()
	name := regexp.MustCompile(`[^A-Za-z0-9_/-]+`).ReplaceAllString(t.Name(), "_")
	path := filepath.Join("testdata", name+".golden")
	if *update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("read %s (run go test -update to create it): %v", path, err)
	}
	if got != string(want) {
		t.Errorf("output differs from %s (run go test -update to accept):\n--- got\n%s--- want\n%s", path, got, want)
	}
}

// getDC reads a DeploymentConfig from the fake cluster.
func (f *fixture) getDC(name string) *dcv1.DeploymentConfig {
	f.t.Helper()
	dc := &dcv1.DeploymentConfig{}
	if err := f.dc.Get(context.Background(), client.ObjectKey{Namespace: "default", Name: name}, dc); err != nil {
		f.t.Fatal(err)
	}
	return dc
}

// getRC reads a ReplicationController from the fake cluster.
func (f *fixture) getRC(name string) *corev1.ReplicationController {
	f.t.Helper()
	rc, err := f.kube.CoreV1().ReplicationControllers("default").Get(context.Background(), name, metav1.GetOptions{})
	if err != nil {
		f.t.Fatal(err)
	}
	return rc
}

// dcOption changes a test DeploymentConfig.
type dcOption func(*dcv1.DeploymentConfig)

// newDC returns a DeploymentConfig created 10 minutes ago with 3 replicas,
// a ConfigChange trigger, a Rolling strategy and the given latest version.
func newDC(name string, latest int64, opts ...dcOption) *dcv1.DeploymentConfig {
	dc := &dcv1.DeploymentConfig{
		TypeMeta: metav1.TypeMeta{APIVersion: dcv1.GroupVersion.String(), Kind: "DeploymentConfig"},
		ObjectMeta: metav1.ObjectMeta{
			Name: name, Namespace: "default", UID: types.UID("uid-dc-" + name),
			Generation:        1,
			Labels:            map[string]string{"app": name},
			CreationTimestamp: metav1.NewTime(now.Add(-10 * time.Minute)),
		},
		Spec: dcv1.DeploymentConfigSpec{
			Replicas: 3,
			Selector: map[string]string{"app": name},
			Triggers: []dcv1.DeploymentTriggerPolicy{{Type: dcv1.DeploymentTriggerOnConfigChange}},
			Strategy: dcv1.DeploymentStrategy{
				Type: dcv1.DeploymentStrategyTypeRolling,
				RollingParams: &dcv1.RollingDeploymentStrategyParams{
					Pre: &dcv1.LifecycleHook{
						FailurePolicy: dcv1.LifecycleHookFailurePolicyAbort,
						ExecNewPod:    &dcv1.ExecNewPodHook{ContainerName: name, Command: []string{"/bin/echo", "pre"}},
					},
				},
			},
			Template: &corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": name}},
				Spec: corev1.PodSpec{Containers: []corev1.Container{{
					Name:  name,
					Image: "registry.example.com/" + name + ":" + strconv.FormatInt(max(latest, 1), 10),
					Ports: []corev1.ContainerPort{{ContainerPort: 8080, Protocol: corev1.ProtocolTCP}},
					Env:   []corev1.EnvVar{{Name: "MODE", Value: "production"}},
					ReadinessProbe: &corev1.Probe{ProbeHandler: corev1.ProbeHandler{
						HTTPGet: &corev1.HTTPGetAction{Path: "/healthz", Port: intstr.FromInt32(8080)},
					}},
				}}},
			},
		},
		Status: dcv1.DeploymentConfigStatus{
			LatestVersion:      latest,
			ObservedGeneration: 1,
			Details:            &dcv1.DeploymentDetails{Message: "config change", Causes: []dcv1.DeploymentCause{{Type: dcv1.DeploymentTriggerOnConfigChange}}},
		},
	}
	for _, opt := range opts {
		opt(dc)
	}
	return dc
}

func paused(dc *dcv1.DeploymentConfig) { dc.Spec.Paused = true }

// withImageTrigger adds an automatic DockerImage trigger on the container.
func withImageTrigger(dc *dcv1.DeploymentConfig) {
	dc.Spec.Triggers = append(dc.Spec.Triggers, dcv1.DeploymentTriggerPolicy{
		Type: dcv1.DeploymentTriggerOnImageChange,
		ImageChangeParams: &dcv1.DeploymentTriggerImageChangeParams{
			Automatic: true, ContainerNames: []string{dc.Name},
			From: dcv1.ImageTriggerSource{Kind: "DockerImage", Name: "registry.example.com/" + dc.Name + ":stable"},
		},
	})
}

func manualOnly(dc *dcv1.DeploymentConfig) { dc.Spec.Triggers = []dcv1.DeploymentTriggerPolicy{} }

// rcOption changes a test deployment.
type rcOption func(*corev1.ReplicationController)

// newRC returns the deployment of dc's version, as the controller makes
// it, in a phase, created age ago; the template is the one dc would have
// had at that version (image tag = version).
func newRC(t *testing.T, dc *dcv1.DeploymentConfig, version int64, phase dcv1.DeploymentPhase, age time.Duration, opts ...rcOption) *corev1.ReplicationController {
	t.Helper()
	at := dc.DeepCopy()
	at.Status.LatestVersion = version
	at.Spec.Template.Spec.Containers[0].Image = "registry.example.com/" + dc.Name + ":" + strconv.FormatInt(version, 10)
	if version == 2 {
		at.Status.Details = &dcv1.DeploymentDetails{Message: "image change"}
	}
	rc, err := deployment.New(at)
	if err != nil {
		t.Fatal(err)
	}
	rc.CreationTimestamp = metav1.NewTime(now.Add(-age))
	rc.Annotations[dcv1.DeploymentPhaseAnnotation] = string(phase)
	for _, opt := range opts {
		opt(rc)
	}
	return rc
}

// scaled sets the deployment's replicas and its pod counts.
func scaled(spec, current, ready, available int32) rcOption {
	return func(rc *corev1.ReplicationController) {
		rc.Spec.Replicas = &spec
		rc.Status.Replicas = current
		rc.Status.ReadyReplicas = ready
		rc.Status.AvailableReplicas = available
	}
}

func reason(r string) rcOption {
	return func(rc *corev1.ReplicationController) {
		rc.Annotations[dcv1.DeploymentStatusReasonAnnotation] = r
	}
}

func cancelled(rc *corev1.ReplicationController) {
	rc.Annotations[dcv1.DeploymentCancelledAnnotation] = "true"
	rc.Annotations[dcv1.DeploymentStatusReasonAnnotation] = dcv1.DeploymentCancelledByUser
}

// newPod returns a pod of a deployment in a phase.
func newPod(rc *corev1.ReplicationController, name string, phase corev1.PodPhase) *corev1.Pod {
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: rc.Namespace, Labels: rc.Spec.Selector},
		Status:     corev1.PodStatus{Phase: phase},
	}
}

// newDeployerPod returns a deployer (hookType "") or hook pod of a deployment.
func newDeployerPod(rc *corev1.ReplicationController, hookType string, phase corev1.PodPhase) *corev1.Pod {
	name := deployment.DeployerPodName(rc.Name)
	labels := map[string]string{dcv1.DeployerPodForDeploymentLabel: rc.Name}
	if hookType != "" {
		name = deployment.HookPodName(rc.Name, hookType)
		labels[dcv1.DeployerPodTypeLabel] = "hook-" + hookType
	}
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: rc.Namespace, Labels: labels},
		Status:     corev1.PodStatus{Phase: phase},
	}
}

// syncBuffer is an io.Writer that a test can read while a command writes.
type syncBuffer struct {
	mu   sync.Mutex
	buf  bytes.Buffer
	cond *sync.Cond
}

func newSyncBuffer() *syncBuffer {
	b := &syncBuffer{}
	b.cond = sync.NewCond(&b.mu)
	return b
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	n, err := b.buf.Write(p)
	b.cond.Broadcast()
	return n, err
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// waitFor waits until the output contains s, or fails the test.
func (b *syncBuffer) waitFor(t *testing.T, s string) {
	t.Helper()
	deadline := time.AfterFunc(10*time.Second, func() {
		b.mu.Lock()
		defer b.mu.Unlock()
		b.cond.Broadcast()
	})
	defer deadline.Stop()
	start := time.Now()
	b.mu.Lock()
	defer b.mu.Unlock()
	for !strings.Contains(b.buf.String(), s) {
		if time.Since(start) > 10*time.Second {
			t.Fatalf("timed out waiting for %q; output so far:\n%s", s, b.buf.String())
		}
		b.cond.Wait()
	}
}
