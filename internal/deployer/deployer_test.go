package deployer

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/util/flowcontrol"
	"k8s.io/utils/ptr"

	dcv1 "github.com/deployconfig/deployconfig/api/v1"
	fc "github.com/deployconfig/deployconfig/internal/deployer/fakecluster"
	"github.com/deployconfig/deployconfig/internal/deployment"
	"github.com/deployconfig/deployconfig/internal/registry/registrytest"
)

const ns = "shop"

func execHook(policy dcv1.LifecycleHookFailurePolicy) *dcv1.LifecycleHook {
	return &dcv1.LifecycleHook{FailurePolicy: policy, ExecNewPod: &dcv1.ExecNewPodHook{Command: []string{"/bin/hook"}, ContainerName: "app"}}
}

func recreateStrategy() dcv1.DeploymentStrategy {
	abort := execHook(dcv1.LifecycleHookFailurePolicyAbort)
	return dcv1.DeploymentStrategy{
		Type:           dcv1.DeploymentStrategyTypeRecreate,
		RecreateParams: &dcv1.RecreateDeploymentStrategyParams{Pre: abort, Mid: abort, Post: abort, TimeoutSeconds: ptr.To[int64](5)},
	}
}

// rc makes deployment v of DeploymentConfig web with the given strategy,
// phase and replicas.
func rc(t *testing.T, v int64, s dcv1.DeploymentStrategy, phase dcv1.DeploymentPhase, replicas int32) *corev1.ReplicationController {
	t.Helper()
	dc := &dcv1.DeploymentConfig{
		ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: ns, UID: "dc-uid"},
		Spec: dcv1.DeploymentConfigSpec{
			Replicas: 3,
			Strategy: s,
			Template: &corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "web"}},
				Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Image: "web:1"}}},
			},
		},
		Status: dcv1.DeploymentConfigStatus{LatestVersion: v},
	}
	r, err := deployment.New(dc)
	if err != nil {
		t.Fatal(err)
	}
	r.UID = "rc-uid"
	r.Annotations[dcv1.DeploymentPhaseAnnotation] = string(phase)
	r.Spec.Replicas = &replicas
	r.Status.Replicas = replicas
	r.Status.AvailableReplicas = replicas
	return r
}

func script(c *fc.Cluster, rcName string, hooks ...string) {
	for _, h := range hooks {
		c.Script(deployment.HookPodName(rcName, h), h+" hook says hi\n",
			fc.Step{Phase: corev1.PodRunning}, fc.Step{Phase: corev1.PodSucceeded})
	}
}

func lines(s ...string) string { return strings.Join(s, "\n") + "\n" }

func TestRun(t *testing.T) {
	custom := dcv1.DeploymentStrategy{
		Type:         dcv1.DeploymentStrategyTypeCustom,
		CustomParams: &dcv1.CustomDeploymentStrategyParams{Command: []string{"/bin/sh", "-c", "dc-deploy"}},
	}
	failing := recreateStrategy()
	tests := []struct {
		name        string
		objects     func(t *testing.T) []runtime.Object
		deploy      string
		until       string
		setup       func(c *fc.Cluster)
		wantOut     string
		wantErr     string
		wantCreated []string
		wantScales  string
	}{
		{
			name: "first Recreate rollout with its three hooks",
			objects: func(t *testing.T) []runtime.Object {
				return []runtime.Object{rc(t, 1, recreateStrategy(), dcv1.DeploymentPhaseRunning, 0)}
			},
			deploy: "web-1",
			setup:  func(c *fc.Cluster) { script(c, "web-1", "pre", "mid", "post") },
			wantOut: lines(
				"--> pre: Running hook pod ...", "pre hook says hi", "--> pre: Success",
				"--> mid: Running hook pod ...", "mid hook says hi", "--> mid: Success",
				"--> Scaling web-1 to 3",
				"--> post: Running hook pod ...", "post hook says hi", "--> post: Success",
				"--> Success"),
			wantCreated: []string{"web-1-hook-pre", "web-1-hook-mid", "web-1-hook-post"},
			wantScales:  "web-1=3",
		},
		{
			name: "older deployments are scaled down, the last complete one is replaced",
			objects: func(t *testing.T) []runtime.Object {
				return []runtime.Object{
					rc(t, 1, recreateStrategy(), dcv1.DeploymentPhaseComplete, 0),
					rc(t, 2, recreateStrategy(), dcv1.DeploymentPhaseFailed, 2),
					rc(t, 3, recreateStrategy(), dcv1.DeploymentPhaseComplete, 3),
					rc(t, 4, recreateStrategy(), dcv1.DeploymentPhaseFailed, 1),
					rc(t, 5, recreateStrategy(), dcv1.DeploymentPhasePending, 0),
				}
			},
			deploy: "web-5",
			setup:  func(c *fc.Cluster) { script(c, "web-5", "pre", "mid", "post") },
			wantOut: lines(
				"--> Scaled older deployment web-2 down",
				"--> Scaled older deployment web-4 down",
				"--> pre: Running hook pod ...", "pre hook says hi", "--> pre: Success",
				"--> Scaling web-3 down to zero",
				"--> mid: Running hook pod ...", "mid hook says hi", "--> mid: Success",
				"--> Scaling web-5 to 1",
				"--> Scaling web-5 to 3",
				"--> post: Running hook pod ...", "post hook says hi", "--> post: Success",
				"--> Success"),
			wantCreated: []string{"web-5-hook-pre", "web-5-hook-mid", "web-5-hook-post"},
			wantScales:  "web-2=0 web-4=0 web-3=0 web-5=1 web-5=3",
		},
		{
			name: "until start",
			objects: func(t *testing.T) []runtime.Object {
				return []runtime.Object{
					rc(t, 1, recreateStrategy(), dcv1.DeploymentPhaseFailed, 2),
					rc(t, 2, recreateStrategy(), dcv1.DeploymentPhaseRunning, 0),
				}
			},
			deploy:     "web-2",
			until:      "start",
			wantOut:    lines("--> Scaled older deployment web-1 down", "--> Reached start"),
			wantScales: "web-1=0",
		},
		{
			name: "until pre",
			objects: func(t *testing.T) []runtime.Object {
				return []runtime.Object{rc(t, 1, recreateStrategy(), dcv1.DeploymentPhaseRunning, 0)}
			},
			deploy:      "web-1",
			until:       "pre",
			setup:       func(c *fc.Cluster) { script(c, "web-1", "pre") },
			wantOut:     lines("--> pre: Running hook pod ...", "pre hook says hi", "--> pre: Success", "--> Reached pre"),
			wantCreated: []string{"web-1-hook-pre"},
		},
		{
			name: "a failing pre hook fails the rollout",
			objects: func(t *testing.T) []runtime.Object {
				return []runtime.Object{rc(t, 1, failing, dcv1.DeploymentPhaseRunning, 0)}
			},
			deploy: "web-1",
			setup: func(c *fc.Cluster) {
				c.Script("web-1-hook-pre", "no database\n", fc.Step{Phase: corev1.PodRunning}, fc.Step{Phase: corev1.PodFailed, ExitCode: 1})
			},
			wantOut:     lines("--> pre: Running hook pod ...", "no database", "--> pre: Failed"),
			wantErr:     "pre hook failed: hook pod shop/web-1-hook-pre failed: exit code 1",
			wantCreated: []string{"web-1-hook-pre"},
		},
		{
			name: "a custom strategy calling dc-deploy gets a rolling rollout",
			objects: func(t *testing.T) []runtime.Object {
				return []runtime.Object{rc(t, 1, custom, dcv1.DeploymentPhaseRunning, 0)}
			},
			deploy:     "web-1",
			wantOut:    lines("--> Scaling web-1 to 3", "--> Success"),
			wantScales: "web-1=3",
		},
		{
			name: "a newer complete deployment exists",
			objects: func(t *testing.T) []runtime.Object {
				return []runtime.Object{
					rc(t, 1, recreateStrategy(), dcv1.DeploymentPhaseRunning, 0),
					rc(t, 2, recreateStrategy(), dcv1.DeploymentPhaseComplete, 3),
				}
			},
			deploy:  "web-1",
			wantErr: "deployment web-1 is older than the complete deployment web-2; not rolling back over it",
		},
		{
			name: "no desired replicas",
			objects: func(t *testing.T) []runtime.Object {
				r := rc(t, 1, recreateStrategy(), dcv1.DeploymentPhaseRunning, 0)
				delete(r.Annotations, dcv1.DesiredReplicasAnnotation)
				return []runtime.Object{r}
			},
			deploy:  "web-1",
			wantErr: "replicationcontroller shop/web-1 has no valid deployconfig.io/deployment.desired-replicas annotation",
		},
		{
			name: "no encoded config",
			objects: func(t *testing.T) []runtime.Object {
				r := rc(t, 1, recreateStrategy(), dcv1.DeploymentPhaseRunning, 0)
				delete(r.Annotations, dcv1.EncodedDeploymentConfigAnnotation)
				return []runtime.Object{r}
			},
			deploy:  "web-1",
			wantErr: "replicationcontroller shop/web-1 has no deployconfig.io/encoded-deployment-config annotation",
		},
		{
			name: "cancelled before it started",
			objects: func(t *testing.T) []runtime.Object {
				r := rc(t, 1, recreateStrategy(), dcv1.DeploymentPhasePending, 0)
				r.Annotations[dcv1.DeploymentCancelledAnnotation] = "true"
				return []runtime.Object{r}
			},
			deploy:  "web-1",
			wantErr: "deployment shop/web-1 was cancelled",
		},
		{
			name:    "no such deployment",
			objects: func(t *testing.T) []runtime.Object { return nil },
			deploy:  "web-9",
			wantErr: `get replicationcontroller shop/web-9: replicationcontrollers "web-9" not found`,
		},
		{
			name:    "bad until",
			objects: func(t *testing.T) []runtime.Object { return nil },
			deploy:  "web-1",
			until:   "later",
			wantErr: `invalid --until "later": want start, pre, mid or a percentage from 0% to 100%`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
			cluster := fc.New(ctx, fc.Options{}, tt.objects(t)...)
			defer cluster.Wait()
			defer cancel()
			if tt.setup != nil {
				tt.setup(cluster)
			}
			var out bytes.Buffer
			err := Run(ctx, Options{Namespace: ns, Name: tt.deploy, Until: tt.until, Out: &out, Client: cluster.Client})
			if tt.wantErr == "" && err != nil {
				t.Fatalf("unexpected error: %v\noutput:\n%s", err, out.String())
			}
			if tt.wantErr != "" && (err == nil || err.Error() != tt.wantErr) {
				t.Fatalf("err = %v, want %q", err, tt.wantErr)
			}
			if out.String() != tt.wantOut {
				t.Errorf("output:\n%s\nwant:\n%s", out.String(), tt.wantOut)
			}
			if got := strings.Join(cluster.Created(), ","); got != strings.Join(tt.wantCreated, ",") {
				t.Errorf("created pods %q, want %q", got, strings.Join(tt.wantCreated, ","))
			}
			var scales []string
			for _, s := range cluster.Scales() {
				scales = append(scales, fmt.Sprintf("%s=%d", s.RC, s.Replicas))
			}
			if got := strings.Join(scales, " "); got != tt.wantScales {
				t.Errorf("scales %q, want %q", got, tt.wantScales)
			}
		})
	}
}

// TestRunHookDeadline checks that a hook pod gets what is left of the
// strategy's active deadline, counted from the deployer pod's start.
func TestRunHookDeadline(t *testing.T) {
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	s := recreateStrategy()
	s.ActiveDeadlineSeconds = ptr.To[int64](1000)
	s.RecreateParams.Mid, s.RecreateParams.Post = nil, nil
	started := metav1.NewTime(time.Now().Add(-100 * time.Second))
	deployer := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "web-1-deploy", Namespace: ns},
		Status:     corev1.PodStatus{Phase: corev1.PodRunning, StartTime: &started},
	}
	cluster := fc.New(ctx, fc.Options{}, rc(t, 1, s, dcv1.DeploymentPhaseRunning, 0), deployer)
	defer cluster.Wait()
	defer cancel()
	script(cluster, "web-1", "pre")
	if err := Run(ctx, Options{Namespace: ns, Name: "web-1", Out: &bytes.Buffer{}, Client: cluster.Client}); err != nil {
		t.Fatal(err)
	}
	pod, err := cluster.Client.CoreV1().Pods(ns).Get(ctx, "web-1-hook-pre", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if d := pod.Spec.ActiveDeadlineSeconds; d == nil || *d < 895 || *d > 900 {
		t.Errorf("activeDeadlineSeconds %v, want about 900", d)
	}
	if len(pod.OwnerReferences) != 1 || pod.OwnerReferences[0].UID != "rc-uid" {
		t.Errorf("owner references %+v", pod.OwnerReferences)
	}
}

func TestNewClients(t *testing.T) {
	shared := flowcontrol.NewTokenBucketRateLimiter(1, 1)
	cfg := &rest.Config{Host: "https://127.0.0.1:6443", RateLimiter: shared}
	if _, _, err := newClients(Options{Config: cfg}); err != nil {
		t.Fatal(err)
	}
	if cfg.RateLimiter != shared {
		t.Error("newClients changed the caller's config")
	}
	if _, _, err := newClients(Options{}); err == nil {
		t.Error("no client and no config: want an error")
	}
}

func TestRunRequiresNames(t *testing.T) {
	err := Run(t.Context(), Options{Name: "web-1"})
	if err == nil || !strings.Contains(err.Error(), "DC_DEPLOYMENT_NAMESPACE") {
		t.Errorf("err = %v", err)
	}
}

// TestRunTagImagesPostHook runs a whole rollout whose post hook tags the
// deployed image in a registry: the tag is made once the new deployment is
// available, and a tag the registry refuses fails the rollout (Abort).
func TestRunTagImagesPostHook(t *testing.T) {
	reg := registrytest.New(t)
	digest := reg.Push(t, "web:1")
	image := reg.Ref("web@" + digest.String())
	// A registry the deployment has no credentials for.
	locked := registrytest.New(t, registrytest.WithBasicAuth("someone", "else"))
	tests := []struct {
		name    string
		target  string
		wantOut string
		wantErr string
	}{
		{
			name:    "tagged after the rollout",
			target:  reg.Ref("web:prod"),
			wantOut: lines("--> Scaling web-1 to 3", "--> post: Tagged "+image+" as "+reg.Ref("web:prod"), "--> Success"),
		},
		{
			name:    "a refused tag aborts",
			target:  locked.Ref("web:prod"),
			wantOut: lines("--> Scaling web-1 to 3", "--> post: Failed"),
			wantErr: `post hook failed: tag the image of container "app" as ` + locked.Ref("web:prod") + ": ",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
			s := dcv1.DeploymentStrategy{
				Type: dcv1.DeploymentStrategyTypeRecreate,
				RecreateParams: &dcv1.RecreateDeploymentStrategyParams{Post: &dcv1.LifecycleHook{
					FailurePolicy: dcv1.LifecycleHookFailurePolicyAbort,
					TagImages:     []dcv1.TagImageHook{{ContainerName: "app", To: corev1.ObjectReference{Kind: "DockerImage", Name: tt.target}}},
				}},
			}
			r := rc(t, 1, s, dcv1.DeploymentPhaseRunning, 0)
			r.Spec.Template.Spec.Containers[0].Image = image
			cluster := fc.New(ctx, fc.Options{}, r)
			defer cluster.Wait()
			defer cancel()
			var out bytes.Buffer
			err := Run(ctx, Options{Namespace: ns, Name: "web-1", Out: &out, Client: cluster.Client})
			if tt.wantErr == "" && err != nil {
				t.Fatalf("unexpected error: %v\noutput:\n%s", err, out.String())
			}
			if tt.wantErr != "" && (err == nil || !strings.HasPrefix(err.Error(), tt.wantErr)) {
				t.Fatalf("err = %v, want it to start with %q", err, tt.wantErr)
			}
			if out.String() != tt.wantOut {
				t.Errorf("output:\n%s\nwant:\n%s", out.String(), tt.wantOut)
			}
			if tt.wantErr == "" && reg.Digest(t, "web:prod") != digest {
				t.Errorf("web:prod does not point at %s", digest)
			}
		})
	}
}
