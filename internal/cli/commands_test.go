package cli

import (
	"os"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	dcv1 "github.com/deployconfig/deployconfig/api/v1"
	"github.com/deployconfig/deployconfig/internal/deployment"
)

// namespaceOverview is a namespace with a DeploymentConfig in every state
// `status` and `get` show.
func namespaceOverview(t *testing.T) []runtime.Object {
	web := newDC("web", 3, withImageTrigger, func(dc *dcv1.DeploymentConfig) {
		dc.Status.Conditions = []dcv1.DeploymentCondition{
			{Type: dcv1.DeploymentAvailable, Status: corev1.ConditionTrue, Reason: dcv1.MinimumReplicasAvailableReason,
				Message: "Deployment config has minimum availability."},
			{Type: dcv1.DeploymentProgressing, Status: corev1.ConditionTrue, Reason: dcv1.ReplicationControllerUpdatedReason,
				Message: `replication controller "web-3" is progressing`},
			{Type: dcv1.ImageTriggerFailure, Status: corev1.ConditionTrue, Reason: "ImageResolveFailed",
				Message: "registry.example.com/web:stable: unauthorized"},
		}
	})
	api := newDC("api", 1, manualOnly)
	api.Spec.Replicas = 1
	smoke := newDC("smoke", 4, func(dc *dcv1.DeploymentConfig) { dc.Spec.Test = true })
	fresh := newDC("fresh", 0, func(dc *dcv1.DeploymentConfig) {
		dc.CreationTimestamp = metav1.NewTime(now.Add(-5 * time.Second))
		dc.Spec.Template.Spec.Containers[0].Image = " "
		withImageTrigger(dc)
	})
	other := newDC("elsewhere", 1)
	other.Namespace = "other"
	webOld := newRC(t, web, 1, dcv1.DeploymentPhaseFailed, 10*time.Minute, scaled(0, 0, 0, 0), reason("deployer pod no longer exists"))
	return []runtime.Object{
		web, api, smoke, fresh, other,
		webOld,
		newRC(t, web, 2, dcv1.DeploymentPhaseComplete, 5*time.Minute, scaled(3, 3, 3, 3)),
		newRC(t, web, 3, dcv1.DeploymentPhaseRunning, 2*time.Minute, scaled(1, 1, 1, 1)),
		newRC(t, api, 1, dcv1.DeploymentPhaseRunning, 90*time.Second, scaled(1, 1, 0, 0), cancelled),
		newRC(t, smoke, 4, dcv1.DeploymentPhaseComplete, time.Minute, scaled(0, 0, 0, 0)),
		&corev1.Event{
			ObjectMeta:     metav1.ObjectMeta{Name: "web.1", Namespace: "default"},
			InvolvedObject: corev1.ObjectReference{Kind: "DeploymentConfig", Name: "web", Namespace: "default"},
			Type:           corev1.EventTypeNormal, Reason: "DeploymentCreated",
			Message:        `Created new replication controller "web-3" for version 3`,
			Source:         corev1.EventSource{Component: "dc-controller"},
			FirstTimestamp: metav1.NewTime(now.Add(-2 * time.Minute)), LastTimestamp: metav1.NewTime(now.Add(-2 * time.Minute)), Count: 1,
		},
		&corev1.Event{
			ObjectMeta:     metav1.ObjectMeta{Name: "web.0", Namespace: "default"},
			InvolvedObject: corev1.ObjectReference{Kind: "ReplicationController", Name: "web-1", Namespace: "default"},
			Type:           corev1.EventTypeWarning, Reason: "DeploymentFailed",
			Message:        `Deployment "web-1" failed: deployer pod no longer exists`,
			Source:         corev1.EventSource{Component: "dc-controller"},
			FirstTimestamp: metav1.NewTime(now.Add(-12 * time.Minute)), LastTimestamp: metav1.NewTime(now.Add(-9 * time.Minute)), Count: 3,
		},
		&corev1.Event{
			ObjectMeta:     metav1.ObjectMeta{Name: "api.0", Namespace: "default"},
			InvolvedObject: corev1.ObjectReference{Kind: "DeploymentConfig", Name: "api", Namespace: "default"},
			Type:           corev1.EventTypeNormal, Reason: "Other", Message: "not web's",
		},
		newPod(webOld, "web-1-x", corev1.PodFailed),
	}
}

func TestGet(t *testing.T) {
	runCases(t, []commandCase{{
		name: "table",
		objs: namespaceOverview,
		args: []string{"get"},
	}, {
		name: "all namespaces",
		objs: namespaceOverview,
		args: []string{"get", "-A"},
	}, {
		name: "selector without headers",
		objs: namespaceOverview,
		args: []string{"get", "-l", "app=web", "--no-headers"},
	}, {
		name: "one",
		objs: namespaceOverview,
		args: []string{"get", "dc/api"},
	}, {
		name: "names",
		objs: namespaceOverview,
		args: []string{"get", "-o", "name"},
	}, {
		name: "yaml",
		objs: func(*testing.T) []runtime.Object { return []runtime.Object{newDC("web", 1)} },
		args: []string{"get", "web", "-o", "yaml"},
	}, {
		name: "json list",
		objs: func(*testing.T) []runtime.Object {
			return []runtime.Object{newDC("a", 1, manualOnly), newDC("b", 1, manualOnly)}
		},
		args: []string{"get", "-o", "jsonpath={.items[*].metadata.name}"},
	}, {
		name: "none",
		args: []string{"get"},
	}, {
		name: "unknown DC",
		args: []string{"get", "nope"},
	}, {
		name: "bad selector",
		args: []string{"get", "-l", "a=(b"},
	}})
}

func TestStatus(t *testing.T) {
	runCases(t, []commandCase{{
		name: "overview",
		objs: namespaceOverview,
		args: []string{"status"},
	}, {
		name: "empty namespace",
		args: []string{"status", "-n", "empty"},
	}, {
		name: "no arguments",
		args: []string{"status", "web"},
	}})
}

func TestDescribe(t *testing.T) {
	recreate := func(t *testing.T) []runtime.Object {
		dc := newDC("db", 1, manualOnly, func(dc *dcv1.DeploymentConfig) {
			timeout := int64(120)
			dc.Spec.Test = true
			dc.Spec.Paused = true
			dc.Spec.MinReadySeconds = 5
			dc.Spec.Strategy = dcv1.DeploymentStrategy{
				Type: dcv1.DeploymentStrategyTypeRecreate,
				RecreateParams: &dcv1.RecreateDeploymentStrategyParams{
					TimeoutSeconds: &timeout,
					Mid: &dcv1.LifecycleHook{FailurePolicy: dcv1.LifecycleHookFailurePolicyRetry, ExecNewPod: &dcv1.ExecNewPodHook{
						ContainerName: "db", Command: []string{"/bin/migrate"}, Volumes: []string{"data"},
						Env: []corev1.EnvVar{{Name: "TOKEN", ValueFrom: &corev1.EnvVarSource{SecretKeyRef: &corev1.SecretKeySelector{
							LocalObjectReference: corev1.LocalObjectReference{Name: "db"}, Key: "token"}}}},
					}},
					Post: &dcv1.LifecycleHook{FailurePolicy: dcv1.LifecycleHookFailurePolicyIgnore, TagImages: []dcv1.TagImageHook{{
						ContainerName: "db", To: corev1.ObjectReference{Kind: "DockerImage", Name: "registry.example.com/db:deployed"}}}},
				},
				CustomParams: &dcv1.CustomDeploymentStrategyParams{Image: "registry.example.com/deployer:1", Command: []string{"/bin/sh", "-c", "dc-deploy"}},
			}
			c := &dc.Spec.Template.Spec.Containers[0]
			c.Command = []string{"/bin/sh", "-c", "exec db\n--verbose"}
			c.VolumeMounts = []corev1.VolumeMount{{Name: "data", MountPath: "/var/lib/db", SubPath: "v1", ReadOnly: true}}
			dc.Spec.Template.Spec.Volumes = []corev1.Volume{{Name: "data", VolumeSource: corev1.VolumeSource{PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: "db-data"}}}}
		})
		return []runtime.Object{dc}
	}
	runCases(t, []commandCase{{
		name: "rolling with history and events",
		objs: namespaceOverview,
		args: []string{"describe", "web"},
	}, {
		name: "recreate with hooks, never rolled out",
		objs: recreate,
		args: []string{"describe", "db"},
	}, {
		name: "unknown DC",
		args: []string{"describe", "nope"},
	}, {
		name: "missing NAME",
		args: []string{"describe"},
	}})
}

func TestLogs(t *testing.T) {
	withPods := func(t *testing.T) []runtime.Object {
		objs := history3(dcv1.DeploymentPhaseRunning)(t)
		rc3 := objs[3].(*corev1.ReplicationController)
		rc1 := objs[1].(*corev1.ReplicationController)
		return append(objs, newDeployerPod(rc3, "", corev1.PodRunning), newDeployerPod(rc1, "", corev1.PodSucceeded))
	}
	// Rollouts 3 (running) and 1 (complete) ran in dc-controller, which
	// keeps their log on the RC.
	inController := func(t *testing.T) []runtime.Object {
		objs := history3(dcv1.DeploymentPhaseRunning)(t)
		for i, log := range map[int]string{1: "--> Scaling web-1 to 3\n--> Success\n", 3: "--> Waiting for promotion\n"} {
			rc := objs[i].(*corev1.ReplicationController)
			p := deployment.ProgressOf(rc)
			p.Runner, p.Log = deployment.Runner{Kind: deployment.RunnerController, Holder: "dc-controller"}, deployment.LogInAnnotation
			deployment.SetProgress(rc, p)
			rc.Annotations[dcv1.DeploymentLogAnnotation] = log
		}
		return objs
	}
	runCases(t, []commandCase{{
		name: "latest",
		objs: withPods,
		args: []string{"logs", "web"},
	}, {
		name: "run in the controller, complete",
		objs: inController,
		args: []string{"logs", "web", "--version", "1"},
	}, {
		name: "run in the controller, running",
		objs: inController,
		args: []string{"logs", "web"},
	}, {
		name: "a version, followed",
		objs: withPods,
		args: []string{"logs", "web", "--version", "1", "-f"},
	}, {
		name: "deployer pod gone",
		objs: withPods,
		args: []string{"logs", "web", "--version", "2"},
	}, {
		name: "future version",
		objs: withPods,
		args: []string{"logs", "web", "--version", "4"},
	}, {
		name: "negative version",
		args: []string{"logs", "web", "--version", "-2"},
	}, {
		name: "not rolled out",
		objs: func(*testing.T) []runtime.Object { return []runtime.Object{newDC("web", 0)} },
		args: []string{"logs", "web"},
	}, {
		name: "unknown DC",
		args: []string{"logs", "nope"},
	}})
}

func TestConvertCommand(t *testing.T) {
	const manifest = "testdata/convert/dc.yaml"
	dc, err := os.ReadFile(manifest)
	if err != nil {
		t.Fatal(err)
	}
	cases := []commandCase{{
		name: "file",
		args: []string{"convert", "-f", manifest},
	}, {
		name: "registry host",
		args: []string{"convert", "-f", manifest, "--image-registry", "registry.example.com:5000"},
	}, {
		name: "standard input as json",
		args: []string{"convert", "-f", "-", "-o", "json", "--image-registry=registry.example.com/team"},
		// The same manifest as a legacy v1 List.
		stdin: "apiVersion: v1\nkind: List\nitems:\n- " + indent(string(dc)),
	}, {
		name: "two files",
		args: []string{"convert", "-f", manifest, "-f", manifest},
	}, {
		name: "unreadable file",
		args: []string{"convert", "-f", "testdata/convert/missing.yaml"},
	}, {
		name: "not a manifest",
		args: []string{"convert", "-f", "-"},
		// A YAML sequence is not an object.
		stdin: "- a\n- b\n",
	}, {
		name: "missing -f",
		args: []string{"convert"},
	}, {
		name: "bad output",
		args: []string{"convert", "-f", manifest, "-o", "xml"},
	}, {
		name: "bad registry",
		args: []string{"convert", "-f", manifest, "--image-registry", "https://registry.example.com"},
	}, {
		// a-api.json and b-web.yaml in name order; README.txt and the
		// subdirectory are left out.
		name: "directory",
		args: []string{"convert", "-f", "testdata/convert/dir"},
	}, {
		// nested/worker.yml as well, after the files of dir.
		name: "directory recursive",
		args: []string{"convert", "-f", "testdata/convert/dir", "-R"},
	}, {
		name: "directory and file",
		args: []string{"convert", "--recursive", "-f", manifest, "-f", "testdata/convert/dir/nested"},
	}, {
		// b-broken.yaml fails: the error names it and nothing of
		// a-web.yaml, converted before, is written.
		name: "directory with a bad file",
		args: []string{"convert", "-f", "testdata/convert/bad"},
	}, {
		name: "directory without manifests",
		args: []string{"convert", "-f", "testdata/convert/no-manifests"},
	}}
	runCases(t, cases)
}

// indent indents every line but the first by two spaces, to nest a
// manifest as a list item.
func indent(s string) string {
	out := []byte{}
	for i := 0; i < len(s); i++ {
		out = append(out, s[i])
		if s[i] == '\n' && i+1 < len(s) {
			out = append(out, ' ', ' ')
		}
	}
	return string(out)
}

func TestCompletion(t *testing.T) {
	runCases(t, []commandCase{{
		name: "DC names",
		objs: namespaceOverview,
		args: []string{"__complete", "rollout", "latest", "a"},
	}, {
		name: "DC names of another namespace",
		objs: namespaceOverview,
		args: []string{"__complete", "-n", "other", "describe", ""},
	}, {
		name: "output formats",
		args: []string{"__complete", "get", "-o", "y"},
	}})
}
