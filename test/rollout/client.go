package rollout

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os/exec"
	"path/filepath"
	"strconv"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"

	dcv1 "github.com/deployconfig/deployconfig/api/v1"
	"github.com/deployconfig/deployconfig/internal/deployment"
	"github.com/deployconfig/deployconfig/test/clusterenv"
)

// namespaceTimeout bounds how long a new namespace takes to be usable.
const namespaceTimeout = time.Minute

// Client drives DeploymentConfigs on a test cluster as its admin.
type Client struct {
	client     client.WithWatch
	clientset  kubernetes.Interface
	kubeconfig string
	binDir     string
}

// NewClient returns a Client for env's cluster.
func NewClient(env *clusterenv.Env) *Client {
	return NewClientFor(env.Client, env.Clientset(), env.Cluster.Kubeconfig, env.BinDir)
}

// NewClientFor returns a Client for any cluster: c and cs act as its admin,
// kubeconfig is the admin's kubeconfig for kubectl-dc, found in binDir.
func NewClientFor(c client.WithWatch, cs kubernetes.Interface, kubeconfig, binDir string) *Client {
	return &Client{client: c, clientset: cs, kubeconfig: kubeconfig, binDir: binDir}
}

// CreateNamespace creates a namespace named prefix plus a random suffix,
// with labels, and waits until pods can be created in it (its default
// service account exists).
func (c *Client) CreateNamespace(ctx context.Context, prefix string, labels map[string]string) (string, error) {
	cs := c.clientset
	ns, err := cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{
		ObjectMeta: metav1.ObjectMeta{GenerateName: prefix, Labels: labels},
	}, metav1.CreateOptions{})
	if err != nil {
		return "", fmt.Errorf("creating a namespace: %w", err)
	}
	err = Poll(ctx, namespaceTimeout, func(ctx context.Context) (bool, error) {
		_, err := cs.CoreV1().ServiceAccounts(ns.Name).Get(ctx, "default", metav1.GetOptions{})
		return err == nil, err
	})
	if err != nil {
		return ns.Name, fmt.Errorf("waiting for the default service account of %s: %w", ns.Name, err)
	}
	return ns.Name, nil
}

// DeleteNamespace deletes a namespace, without waiting.
func (c *Client) DeleteNamespace(ctx context.Context, ns string) error {
	return client.IgnoreNotFound(c.clientset.CoreV1().Namespaces().Delete(ctx, ns, metav1.DeleteOptions{}))
}

// Create creates a DeploymentConfig; its ConfigChange trigger rolls it
// out.
func (c *Client) Create(ctx context.Context, dc *dcv1.DeploymentConfig) error {
	return Retry(ctx, func() error {
		err := c.client.Create(ctx, dc.DeepCopy())
		if apierrors.IsAlreadyExists(err) {
			return nil
		}
		return err
	})
}

// Get reads a DeploymentConfig.
func (c *Client) Get(ctx context.Context, ns, name string) (*dcv1.DeploymentConfig, error) {
	dc := &dcv1.DeploymentConfig{}
	if err := c.client.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, dc); err != nil {
		return nil, err
	}
	return dc, nil
}

// Update changes a DeploymentConfig with mutate, retrying on conflicts and
// on an API server that is away.
func (c *Client) Update(ctx context.Context, ns, name string, mutate func(*dcv1.DeploymentConfig)) error {
	return Retry(ctx, func() error {
		dc, err := c.Get(ctx, ns, name)
		if err != nil {
			return err
		}
		mutate(dc)
		return c.client.Update(ctx, dc)
	})
}

// ChangeConfig bumps the template's REVISION variable: a config change,
// which the ConfigChange trigger rolls out.
func (c *Client) ChangeConfig(ctx context.Context, ns, name string) error {
	return c.Update(ctx, ns, name, bumpRevision)
}

// bumpRevision adds one to the REVISION variable of the template.
func bumpRevision(dc *dcv1.DeploymentConfig) {
	env := dc.Spec.Template.Spec.Containers[0].Env
	for i := range env {
		if env[i].Name == RevisionEnv {
			n, _ := strconv.Atoi(env[i].Value)
			env[i].Value = strconv.Itoa(n + 1)
		}
	}
}

// ChangeStrategy sets a new strategy and changes the config in one
// update, so that the next rollout is the first to use the strategy.
func (c *Client) ChangeStrategy(ctx context.Context, ns, name string, o Options) error {
	return c.Update(ctx, ns, name, func(dc *dcv1.DeploymentConfig) {
		dc.Spec.Strategy = Strategy(o)
		bumpRevision(dc)
	})
}

// Scale sets spec.replicas.
func (c *Client) Scale(ctx context.Context, ns, name string, replicas int32) error {
	return c.Update(ctx, ns, name, func(dc *dcv1.DeploymentConfig) { dc.Spec.Replicas = replicas })
}

// Deployments lists a DeploymentConfig's RCs, oldest first.
func (c *Client) Deployments(ctx context.Context, ns, name string) ([]*corev1.ReplicationController, error) {
	list, err := c.clientset.CoreV1().ReplicationControllers(ns).List(ctx, metav1.ListOptions{
		LabelSelector: dcv1.DeploymentConfigLabel + "=" + name,
	})
	if err != nil {
		return nil, err
	}
	rcs := make([]*corev1.ReplicationController, 0, len(list.Items))
	for i := range list.Items {
		rcs = append(rcs, &list.Items[i])
	}
	deployment.SortByVersion(rcs)
	return rcs, nil
}

// Latest returns a DeploymentConfig and the RC of its latestVersion (nil
// while there is none).
func (c *Client) Latest(ctx context.Context, ns, name string) (*dcv1.DeploymentConfig, *corev1.ReplicationController, error) {
	dc, err := c.Get(ctx, ns, name)
	if err != nil || dc.Status.LatestVersion == 0 {
		return dc, nil, err
	}
	rc, err := c.clientset.CoreV1().ReplicationControllers(ns).Get(ctx, deployment.Name(name, dc.Status.LatestVersion), metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return dc, nil, nil
	}
	return dc, rc, err
}

// KubectlDC runs kubectl-dc against the cluster in namespace ns and
// returns its output and error (an *exec.ExitError for a non-zero exit).
func (c *Client) KubectlDC(ctx context.Context, ns string, args ...string) (stdout, stderr string, err error) {
	args = append([]string{"--kubeconfig", c.kubeconfig, "-n", ns}, args...)
	cmd := exec.CommandContext(ctx, filepath.Join(c.binDir, "kubectl-dc"), args...)
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err = cmd.Run()
	return out.String(), errOut.String(), err
}

// Refused reports whether kubectl-dc exited with its failure code 1 (it
// ran, and refused or failed), as opposed to not running at all.
func Refused(err error) bool {
	var exit *exec.ExitError
	return errors.As(err, &exit) && exit.ExitCode() == 1
}

// Retry retries fn on conflicts and on errors of an API server that is
// restarting or busy, for up to a minute or so.
func Retry(ctx context.Context, fn func() error) error {
	backoff := wait.Backoff{Duration: 200 * time.Millisecond, Factor: 1.5, Steps: 25, Cap: 5 * time.Second}
	return retry.OnError(backoff, func(err error) bool {
		return ctx.Err() == nil && (apierrors.IsConflict(err) || Transient(err))
	}, fn)
}

// Transient reports errors that go away on their own: the API server is
// away, overloaded or timing out. An error that is no API status (a
// refused connection) counts too.
func Transient(err error) bool {
	if err == nil {
		return false
	}
	switch {
	case apierrors.IsServerTimeout(err), apierrors.IsTimeout(err), apierrors.IsTooManyRequests(err),
		apierrors.IsServiceUnavailable(err), apierrors.IsInternalError(err):
		return true
	}
	var status apierrors.APIStatus
	return !errors.As(err, &status)
}
