package playground

import (
	"context"
	"errors"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"

	dcv1 "github.com/deployconfig/deployconfig/api/v1"
	"github.com/deployconfig/deployconfig/internal/deployment"
)

// rolloutPoll is how often WaitRollout looks at the deployment.
const rolloutPoll = 250 * time.Millisecond

// Rollout is where a DeploymentConfig's latest deployment stands.
type Rollout struct {
	// Version is the DeploymentConfig's latestVersion; 0 before its
	// first rollout is triggered.
	Version int64
	// RC is the deployment's ReplicationController, once it exists.
	RC *corev1.ReplicationController
	// DeployerPod reports whether the deployer pod exists (or existed).
	DeployerPod bool
}

// Phase is the deployment's phase; empty before its RC exists.
func (r Rollout) Phase() dcv1.DeploymentPhase {
	if r.RC == nil {
		return ""
	}
	return deployment.Phase(r.RC)
}

// Done reports whether the deployment has ended, well or not.
func (r Rollout) Done() bool {
	return r.RC != nil && deployment.IsTerminal(r.Phase())
}

// Started reports whether the deployment's RC and deployer pod exist: the
// controller has done its part.
func (r Rollout) Started() bool {
	return r.RC != nil && (r.DeployerPod || r.Done())
}

// errNoServer means that no dc-local serve runs, so that no rollout can
// make progress.
var errNoServer = errors.New("dc-local serve is not running")

// WaitRollout waits until done reports true of the latest deployment of a
// DeploymentConfig, and returns where it stands then (also on error). It
// fails at once when the cluster's dc-local serve stops running.
func (c *Cluster) WaitRollout(ctx context.Context, namespace, name string, timeout time.Duration, done func(Rollout) bool) (Rollout, error) {
	dyn, err := dynamic.NewForConfig(c.Config)
	if err != nil {
		return Rollout{}, fmt.Errorf("making a client: %w", err)
	}
	var last Rollout
	err = wait.PollUntilContextTimeout(ctx, rolloutPoll, timeout, true, func(ctx context.Context) (bool, error) {
		if _, running := serverRunning(c.opts); !running && !c.external {
			log, _ := c.opts.ServerLogPath()
			return false, fmt.Errorf("%w (its log: %s)", errNoServer, log)
		}
		r, err := latestRollout(ctx, dyn, c.Clientset, namespace, name)
		if err != nil {
			return false, err
		}
		last = r
		return done(r), nil
	})
	if err != nil {
		return last, fmt.Errorf("waiting for the rollout of deploymentconfig %s/%s: %w", namespace, name, err)
	}
	return last, nil
}

// latestRollout reads the DeploymentConfig's latest deployment.
func latestRollout(ctx context.Context, dyn dynamic.Interface, cs kubernetes.Interface, namespace, name string) (Rollout, error) {
	dc, err := dyn.Resource(dcv1.GroupVersion.WithResource("deploymentconfigs")).Namespace(namespace).Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		return Rollout{}, fmt.Errorf("reading deploymentconfig %s/%s: %w", namespace, name, err)
	}
	version, _, _ := unstructured.NestedInt64(dc.Object, "status", "latestVersion")
	r := Rollout{Version: version}
	if version == 0 {
		return r, nil
	}
	rcName := deployment.Name(name, version)
	rc, err := cs.CoreV1().ReplicationControllers(namespace).Get(ctx, rcName, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return r, nil
	}
	if err != nil {
		return r, fmt.Errorf("reading replicationcontroller %s/%s: %w", namespace, rcName, err)
	}
	r.RC = rc
	_, err = cs.CoreV1().Pods(namespace).Get(ctx, deployment.DeployerPodName(rcName), metav1.GetOptions{})
	if err != nil && !apierrors.IsNotFound(err) {
		return r, fmt.Errorf("reading the deployer pod of %s/%s: %w", namespace, rcName, err)
	}
	r.DeployerPod = err == nil
	return r, nil
}

// DeployerLog returns the log of a deployment's deployer pod.
func (c *Cluster) DeployerLog(ctx context.Context, namespace, rcName string) (string, error) {
	pod := deployment.DeployerPodName(rcName)
	data, err := c.Clientset.CoreV1().Pods(namespace).GetLogs(pod, &corev1.PodLogOptions{}).DoRaw(ctx)
	if err != nil {
		return "", fmt.Errorf("reading the log of pod %s/%s: %w", namespace, pod, err)
	}
	return string(data), nil
}

// ChangeTemplate makes a change to a DeploymentConfig's pod template (an
// annotation with the time), which its ConfigChange trigger rolls out; it
// returns the latestVersion before the change.
func (c *Cluster) ChangeTemplate(ctx context.Context, namespace, name string) (int64, error) {
	dyn, err := dynamic.NewForConfig(c.Config)
	if err != nil {
		return 0, fmt.Errorf("making a client: %w", err)
	}
	before, err := latestRollout(ctx, dyn, c.Clientset, namespace, name)
	if err != nil {
		return 0, err
	}
	patch := fmt.Sprintf(`{"spec":{"template":{"metadata":{"annotations":{%q:%q}}}}}`,
		dcv1.KeyPrefix+"playground-change", time.Now().UTC().Format(time.RFC3339Nano))
	_, err = dyn.Resource(dcv1.GroupVersion.WithResource("deploymentconfigs")).Namespace(namespace).
		Patch(ctx, name, types.MergePatchType, []byte(patch), metav1.PatchOptions{})
	if err != nil {
		return 0, fmt.Errorf("changing the template of deploymentconfig %s/%s: %w", namespace, name, err)
	}
	return before.Version, nil
}
