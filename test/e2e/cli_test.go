package e2e

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	dcv1 "github.com/deployconfig/deployconfig/api/v1"
	"github.com/deployconfig/deployconfig/internal/deployment"
	"github.com/deployconfig/deployconfig/internal/dev/playground"
)

// simpleManifest is the corpus's plainest OpenShift DeploymentConfig.
var simpleManifest = filepath.Join(ownCorpusDir, "rolling-simple.yaml")

// statusWait is `kubectl dc rollout status NAME -w` with a bound, so that a
// rollout that never ends fails the test instead of hanging it.
func statusWait(name string) []string {
	return []string{"rollout", "status", name, "-w", "--timeout", rolloutTimeout.String()}
}

// requireRolledOut runs `kubectl dc rollout status -w` and fails the test
// unless it reports that rc rolled out and exits 0.
func requireRolledOut(t *testing.T, ns, name, rc string) {
	t.Helper()
	r := kubectlDC(t, ns, statusWait(name)...)
	if want := `replication controller "` + rc + `" successfully rolled out`; r.code != 0 || !strings.Contains(r.stdout, want) {
		t.Fatalf("kubectl dc rollout status %s -w: want %q and exit 0, got %s", name, want, r)
	}
}

// assertMatches checks that text matches every regular expression, each
// applied in multi-line mode.
func assertMatches(t *testing.T, what, text string, patterns ...string) {
	t.Helper()
	for _, p := range patterns {
		if !regexp.MustCompile("(?m)" + p).MatchString(text) {
			t.Errorf("%s does not match %q:\n%s", what, p, text)
		}
	}
}

// A DeploymentConfig's life through kubectl dc: status -w of its first
// rollout, a manual rollout, a config change, history, undo, and what get,
// status, describe and logs show of it.
func TestCLIRolloutLatestHistoryUndo(t *testing.T) {
	t.Parallel()
	ns := dcNamespace(t)
	createDC(t, ns, newDC("web", 2, rolling(intstr.FromString("25%"), intstr.FromString("25%"))))
	requireRolledOut(t, ns, "web", "web-1")

	if out := mustDC(t, ns, "rollout", "latest", "web"); out != "deploymentconfig.apps.deployconfig.io/web rolled out\n" {
		t.Errorf("kubectl dc rollout latest web: %q", out)
	}
	requireRolledOut(t, ns, "web", "web-2")

	kubectl(t, "patch", "dc", "web", "-n", ns, "--type=json",
		"-p", `[{"op":"replace","path":"/spec/template/spec/containers/0/image","value":"registry.k8s.io/pause:3.9"}]`)
	// status -w waits until the controller has seen the change.
	requireRolledOut(t, ns, "web", "web-3")
	if r := kubectlDC(t, ns, "rollout", "retry", "web"); r.code != 1 || !strings.Contains(r.stderr, "rollout #3 is complete; only failed deployments can be retried") {
		t.Errorf("retry of a complete rollout: want exit 1 and a refusal, got %s", r)
	}

	want := `deploymentconfig.apps.deployconfig.io/web
REVISION   STATUS     CAUSE
1          Complete   config change
2          Complete   manual change
3          Complete   config change
`
	if out := mustDC(t, ns, "rollout", "history", "web"); out != want {
		t.Errorf("kubectl dc rollout history web:\n%s\nwant:\n%s", out, want)
	}
	assertMatches(t, "rollout history --revision 3", mustDC(t, ns, "rollout", "history", "web", "--revision", "3"),
		`^deploymentconfig.apps.deployconfig.io/web with revision #3$`, `^\s+Image:\s+registry.k8s.io/pause:3.9$`)

	// Undo goes back to the last complete revision before the latest: #2,
	// with #1's template.
	if out := mustDC(t, ns, "rollout", "undo", "web"); out != "deploymentconfig.apps.deployconfig.io/web rolled back to revision 2\n" {
		t.Errorf("kubectl dc rollout undo web: %q", out)
	}
	requireRolledOut(t, ns, "web", "web-4")
	if image := getRC(t, ns, "web-4").Spec.Template.Spec.Containers[0].Image; image != pauseImage {
		t.Errorf("web-4 runs %s, want revision 2's %s", image, pauseImage)
	}
	waitScaled(t, ns, map[string]int32{"web-3": 0, "web-4": 2})
	waitDC(t, ns, "web", "2 available replicas of rollout #4", settled(2))

	assertMatches(t, "kubectl dc get web", mustDC(t, ns, "get", "web"),
		`^NAME\s+REVISION\s+DESIRED\s+CURRENT\s+TRIGGERED BY\s+AGE$`,
		`^web\s+4\s+2\s+2\s+config\s+\S+$`)
	assertMatches(t, "kubectl dc status", mustDC(t, ns, "status"),
		`^In namespace `+ns+` on server https://`,
		`^dc/web deploys registry.k8s.io/pause:3.10\n`+
			`  deployment #4 deployed .+ ago - 2 pods\n`+
			`  deployment #3 deployed .+ ago\n`+
			`  deployment #2 deployed .+ ago\n`)
	assertMatches(t, "kubectl dc describe web", mustDC(t, ns, "describe", "web"),
		`^Name:\s+web$`, `^Namespace:\s+`+ns+`$`, `^Latest Version:\s+4$`, `^Replicas:\s+2$`,
		`^Triggers:\s+Config$`, `^Strategy:\s+Rolling$`, `^\s+Max Surge:\s+25%$`,
		`^Deployment #4 \(latest\):\n\s+Name:\s+web-4\n.*\n\s+Status:\s+Complete\n\s+Replicas:\s+2 current / 2 desired\n\s+Pods Status:\s+2 Running / 0 Waiting / 0 Succeeded / 0 Failed$`,
		`^Deployment #3:\n\s+Name:\s+web-3\n`,
		`^Events:\n`, `\sDeploymentCreated\s+.*Created new replication controller "web-4" for version 4$`)

	assertInOrder(t, mustDC(t, ns, "logs", "web"),
		"--> Scaling up web-4 from 0 to 2, scaling down web-3 from 2 to 0", "Scaling web-4 up to 2", "--> Success")
	assertInOrder(t, mustDC(t, ns, "logs", "web", "--version", "1"), "--> Scaling web-1 to 2", "--> Success")
}

// A rollout stuck in its pre hook: a new one is refused while it runs;
// cancelling it fails it as cancelled, which `rollout status -w` reports
// with a non-zero exit; a retry of it starts a fresh deployer pod that
// completes.
func TestCLICancelAndRetry(t *testing.T) {
	t.Parallel()
	ns := dcNamespace(t)
	// The pre hook waits for a file the test creates: the local pod runtime
	// runs it on this machine.
	gate := filepath.Join(t.TempDir(), "gate")
	pre := shellHook(dcv1.LifecycleHookFailurePolicyAbort, `echo "waiting for the gate"; while [ ! -e "$GATE" ]; do sleep 0.1; done; echo "gate open"`)
	pre.ExecNewPod.Env = []corev1.EnvVar{{Name: "GATE", Value: gate}}
	createDC(t, ns, newDC("web", 1, recreate(pre, nil, nil)))
	waitPodRunning(t, ns, deployment.HookPodName("web-1", "pre"))
	if _, err := suite.cluster.WaitRollout(t.Context(), ns, "web", rolloutTimeout, func(r playground.Rollout) bool {
		return r.Phase() == dcv1.DeploymentPhaseRunning
	}); err != nil {
		t.Fatal(err)
	}
	firstDeployer := getPod(t, ns, deployment.DeployerPodName("web-1"))

	assertMatches(t, "kubectl dc status", mustDC(t, ns, "status"), `^  deployment #1 running for .+ - 0/1 pods$`)
	if r := kubectlDC(t, ns, "rollout", "latest", "web"); r.code != 1 || r.stderr != "error: #1 is already in progress (Running)\n" {
		t.Errorf("rollout latest while #1 runs: want exit 1 and a refusal, got %s", r)
	}
	if out := mustDC(t, ns, "rollout", "cancel", "web"); out != "deploymentconfig.apps.deployconfig.io/web cancelling rollout #1\n" {
		t.Errorf("kubectl dc rollout cancel web: %q", out)
	}
	r := kubectlDC(t, ns, statusWait("web")...)
	if r.code == 0 || !strings.Contains(r.stderr, `error: rollout #1 of deploymentconfig "web" was cancelled: `+dcv1.DeploymentCancelledByUser) {
		t.Errorf("rollout status -w of a cancelled rollout: want a non-zero exit and the reason, got %s", r)
	}
	rc := requirePhase(t, ns, "web", 1, dcv1.DeploymentPhaseFailed)
	if !deployment.IsCancelled(rc) || rc.Annotations[dcv1.DeploymentStatusReasonAnnotation] != dcv1.DeploymentCancelledByUser {
		t.Errorf("web-1 annotations %v, want cancelled by the user", rc.Annotations)
	}
	waitPodGone(t, ns, deployment.HookPodName("web-1", "pre"))
	waitPodGone(t, ns, deployment.DeployerPodName("web-1"))
	waitDC(t, ns, "web", "the cancellation in its conditions", func(dc *dcv1.DeploymentConfig) bool {
		return hasCondition(dc, dcv1.DeploymentProgressing, corev1.ConditionFalse, dcv1.RolloutCancelledReason)
	})
	assertMatches(t, "rollout history", mustDC(t, ns, "rollout", "history", "web"), `^1\s+Cancelled\s+config change$`)
	if r := kubectlDC(t, ns, "rollout", "cancel", "web"); r.code != 0 || !strings.HasPrefix(r.stderr, "No rollout is in progress (latest rollout #1 ") {
		t.Errorf("cancel with nothing in progress: want exit 0 and a note, got %s", r)
	}

	if err := os.WriteFile(gate, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if out := mustDC(t, ns, "rollout", "retry", "web"); out != "deploymentconfig.apps.deployconfig.io/web retrying rollout #1\n" {
		t.Errorf("kubectl dc rollout retry web: %q", out)
	}
	requireRolledOut(t, ns, "web", "web-1")
	if again := getPod(t, ns, deployment.DeployerPodName("web-1")); again.UID == firstDeployer.UID {
		t.Errorf("the retry reused the cancelled deployer pod")
	}
	assertInOrder(t, mustDC(t, ns, "logs", "web"), "--> pre: Running hook pod ...", "gate open", "--> pre: Success", "--> Success")
	waitScaled(t, ns, map[string]int32{"web-1": 1})
	assertMatches(t, "rollout history", mustDC(t, ns, "rollout", "history", "web"), `^1\s+Complete\s+config change$`)
}

// `rollout status -w` of a rollout that fails exits non-zero with the
// reason, and logs, status and describe show the failure.
func TestCLIFailedRollout(t *testing.T) {
	t.Parallel()
	ns := dcNamespace(t)
	pre := shellHook(dcv1.LifecycleHookFailurePolicyAbort, `echo "database unreachable"; exit 3`)
	createDC(t, ns, newDC("web", 1, recreate(pre, nil, nil)))

	r := kubectlDC(t, ns, statusWait("web")...)
	if r.code == 0 || !strings.Contains(r.stderr, `error: rollout #1 of deploymentconfig "web" failed: deployer pod failed`) ||
		!strings.Contains(r.stderr, "(see 'kubectl dc logs web --version 1')") {
		t.Errorf("rollout status -w of a failed rollout: want a non-zero exit and the reason, got %s", r)
	}
	assertInOrder(t, mustDC(t, ns, "logs", "web", "--version", "1"),
		"--> pre: Running hook pod ...", "database unreachable", "--> pre: Failed")
	assertMatches(t, "kubectl dc status", mustDC(t, ns, "status"), `^  deployment #1 failed .+ ago: deployer pod failed`)
	assertMatches(t, "kubectl dc describe web", mustDC(t, ns, "describe", "web"),
		`^Deployment #1 \(latest\):\n\s+Name:\s+web-1\n.*\n\s+Status:\s+Failed\n\s+Reason:\s+deployer pod failed`)
	assertMatches(t, "rollout history", mustDC(t, ns, "rollout", "history", "web"), `^1\s+Failed\s+config change$`)
}

// A paused DeploymentConfig refuses every rollout command with a clear
// message and does not roll out a config change until it is resumed.
func TestCLIPausedDeploymentConfig(t *testing.T) {
	t.Parallel()
	ns := dcNamespace(t)
	createDC(t, ns, newDC("web", 1, recreate(nil, nil, nil)))
	requireRolledOut(t, ns, "web", "web-1")

	if out := mustDC(t, ns, "rollout", "pause", "web"); out != "deploymentconfig.apps.deployconfig.io/web paused\n" {
		t.Errorf("kubectl dc rollout pause web: %q", out)
	}
	for _, tc := range []struct{ command, refusal string }{
		{"latest", "cannot deploy a paused deployment config"},
		{"cancel", "unable to cancel paused deployment"},
		{"retry", "unable to retry paused deployment"},
		{"undo", "cannot rollback a paused deployment config"},
	} {
		r := kubectlDC(t, ns, "rollout", tc.command, "web")
		want := "error: " + tc.refusal + ": resume it first with 'kubectl dc rollout resume web'\n"
		if r.code != 1 || r.stdout != "" || r.stderr != want {
			t.Errorf("rollout %s of a paused DC: want exit 1 and %q, got %s", tc.command, want, r)
		}
	}

	updateDC(t, ns, "web", func(dc *dcv1.DeploymentConfig) { setEnv(dc, "VERSION", "2") })
	dc := waitDC(t, ns, "web", "the change seen while paused", func(dc *dcv1.DeploymentConfig) bool {
		return dc.Status.ObservedGeneration >= dc.Generation &&
			hasCondition(dc, dcv1.DeploymentProgressing, corev1.ConditionUnknown, dcv1.PausedConfigReason)
	})
	if dc.Status.LatestVersion != 1 {
		t.Errorf("a paused DC rolled its change out as #%d", dc.Status.LatestVersion)
	}
	assertMatches(t, "kubectl dc status", mustDC(t, ns, "status"), `^dc/web deploys registry.k8s.io/pause:3.10 \(paused\)$`)

	if out := mustDC(t, ns, "rollout", "resume", "web"); out != "deploymentconfig.apps.deployconfig.io/web resumed\n" {
		t.Errorf("kubectl dc rollout resume web: %q", out)
	}
	requireRolledOut(t, ns, "web", "web-2")
	waitScaled(t, ns, map[string]int32{"web-1": 0, "web-2": 1})
}

// An OpenShift manifest converted by `kubectl dc convert` and piped to
// `kubectl apply -f -` rolls out.
func TestCLIConvertedManifestRollsOut(t *testing.T) {
	t.Parallel()
	ns := dcNamespaceAt(t, podSecurityPrivileged) // a user's OpenShift template
	converted := kubectlDC(t, ns, "convert", "-f", simpleManifest)
	// The manifest uses nothing that cannot carry over: no warning.
	if converted.code != 0 || converted.stderr != "" || !strings.Contains(converted.stdout, "apiVersion: apps.deployconfig.io/v1\n") {
		t.Fatalf("kubectl dc convert -f %s: %s", simpleManifest, converted)
	}
	applied := run(t, converted.stdout, "kubectl", "apply", "-n", ns, "-f", "-")
	if applied.code != 0 || applied.stdout != "deploymentconfig.apps.deployconfig.io/simple created\n" {
		t.Fatalf("kubectl apply -f -: %s", applied)
	}
	requireRolledOut(t, ns, "simple", "simple-1")
	waitScaled(t, ns, map[string]int32{"simple-1": 1})
}
