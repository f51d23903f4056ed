package cli

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/spf13/cobra"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/validation"
	"sigs.k8s.io/controller-runtime/pkg/client"

	dcv1 "github.com/deployconfig/deployconfig/api/v1"
	"github.com/deployconfig/deployconfig/internal/deployment"
)

// nameArg accepts exactly one DeploymentConfig NAME (also written dc/NAME
// or deploymentconfig/NAME, as oc users do).
func nameArg(purpose string) cobra.PositionalArgs {
	return func(_ *cobra.Command, args []string) error {
		switch {
		case len(args) == 0:
			return fmt.Errorf("NAME is required: the DeploymentConfig to %s (see 'kubectl dc get')", purpose)
		case len(args) > 1:
			return fmt.Errorf("NAME: expected one DeploymentConfig name, got %d arguments: %s", len(args), strings.Join(args, " "))
		}
		_, err := parseName(args[0])
		return err
	}
}

// optionalNameArg accepts at most one NAME.
func optionalNameArg(_ *cobra.Command, args []string) error {
	if len(args) > 1 {
		return fmt.Errorf("NAME: expected at most one DeploymentConfig name, got %d arguments: %s", len(args), strings.Join(args, " "))
	}
	if len(args) == 1 {
		_, err := parseName(args[0])
		return err
	}
	return nil
}

// parseName returns the DeploymentConfig name of NAME, dc/NAME or
// deploymentconfig[s][.apps.deployconfig.io]/NAME.
func parseName(arg string) (string, error) {
	name := arg
	if kind, rest, ok := strings.Cut(arg, "/"); ok {
		switch kind {
		case "dc", "deploymentconfig", "deploymentconfigs", "deploymentconfig." + dcv1.GroupVersion.Group, "deploymentconfigs." + dcv1.GroupVersion.Group:
			name = rest
		default:
			return "", fmt.Errorf("NAME: expected a DeploymentConfig name or dc/NAME, got %q", arg)
		}
	}
	if len(validation.IsDNS1123Subdomain(name)) > 0 {
		return "", fmt.Errorf("NAME: %q is not a valid DeploymentConfig name: expected lower-case letters, digits, '-' and '.', starting and ending with a letter or digit", arg)
	}
	return name, nil
}

// getDC returns the named DeploymentConfig, or an error that says plainly
// that it does not exist in the namespace.
func getDC(ctx context.Context, c *Clients, name string) (*dcv1.DeploymentConfig, error) {
	dc := &dcv1.DeploymentConfig{}
	if err := c.DC.Get(ctx, client.ObjectKey{Namespace: c.Namespace, Name: name}, dc); err != nil {
		return nil, dcError(err, c.Namespace, name)
	}
	return dc, nil
}

// dcError turns an API error about a DeploymentConfig into a message for
// a user: a missing object, a missing API, or the server's own words.
func dcError(err error, namespace, name string) error {
	var status apierrors.APIStatus
	switch {
	case apierrors.IsNotFound(err) && errors.As(err, &status) && status.Status().Details != nil && status.Status().Details.Name == name:
		return fmt.Errorf("deploymentconfig %q not found in namespace %q", name, namespace)
	case apierrors.IsNotFound(err) || meta.IsNoMatchError(err):
		return fmt.Errorf("the DeploymentConfig API (%s) is not installed on this cluster: apply the CRD of config/crd first", dcv1.GroupVersion)
	}
	return fmt.Errorf("deploymentconfig %q in namespace %q: %w", name, namespace, err)
}

// listDCs returns the namespace's DeploymentConfigs (every namespace's when
// allNamespaces), sorted by namespace and name by the server.
func listDCs(ctx context.Context, c *Clients, allNamespaces bool, selector labels.Selector) ([]dcv1.DeploymentConfig, error) {
	list := &dcv1.DeploymentConfigList{}
	opts := []client.ListOption{client.MatchingLabelsSelector{Selector: selector}}
	if !allNamespaces {
		opts = append(opts, client.InNamespace(c.Namespace))
	}
	if err := c.DC.List(ctx, list, opts...); err != nil {
		if apierrors.IsNotFound(err) || meta.IsNoMatchError(err) {
			return nil, fmt.Errorf("the DeploymentConfig API (%s) is not installed on this cluster: apply the CRD of config/crd first", dcv1.GroupVersion)
		}
		return nil, fmt.Errorf("list deploymentconfigs: %w", err)
	}
	return list.Items, nil
}

// listDeployments returns the DeploymentConfig's deployments
// (ReplicationControllers), oldest first.
func listDeployments(ctx context.Context, c *Clients, dc *dcv1.DeploymentConfig) ([]*corev1.ReplicationController, error) {
	selector := labels.SelectorFromSet(labels.Set{dcv1.DeploymentConfigLabel: dc.Name}).String()
	list, err := c.Kube.CoreV1().ReplicationControllers(dc.Namespace).List(ctx, metav1.ListOptions{LabelSelector: selector})
	if err != nil {
		return nil, fmt.Errorf("list the rollouts of deploymentconfig %q: %w", dc.Name, err)
	}
	rcs := make([]*corev1.ReplicationController, 0, len(list.Items))
	for i := range list.Items {
		rcs = append(rcs, &list.Items[i])
	}
	deployment.SortByVersion(rcs)
	return rcs, nil
}

// findVersion returns the deployment of a version, or nil.
func findVersion(rcs []*corev1.ReplicationController, version int64) *corev1.ReplicationController {
	for _, rc := range rcs {
		if deployment.Version(rc) == version {
			return rc
		}
	}
	return nil
}

// getLatest returns the DeploymentConfig's latest deployment, or nil when
// it has none yet (latestVersion 0, or the controller has not created it).
func getLatest(ctx context.Context, c *Clients, dc *dcv1.DeploymentConfig) (*corev1.ReplicationController, error) {
	if dc.Status.LatestVersion == 0 {
		return nil, nil
	}
	name := deployment.Name(dc.Name, dc.Status.LatestVersion)
	rc, err := c.Kube.CoreV1().ReplicationControllers(dc.Namespace).Get(ctx, name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("get rollout #%d of deploymentconfig %q: %w", dc.Status.LatestVersion, dc.Name, err)
	}
	if ref := metav1.GetControllerOf(rc); ref == nil || ref.UID != dc.UID {
		// An RC of that name that is not the DeploymentConfig's (left over,
		// another owner): the rollout's own RC is not created yet.
		return nil, nil
	}
	return rc, nil
}

// phaseWord is a deployment's phase as prose: "complete", "failed"...
func phaseWord(rc *corev1.ReplicationController) string {
	return strings.ToLower(string(deployment.Phase(rc)))
}

// openDC is how every command that changes one DeploymentConfig starts: it
// makes the clients, checks the output flags before anything changes, and
// reads the DeploymentConfig.
func (a *app) openDC(ctx context.Context, name string, out *outputFlags) (*Clients, *dcv1.DeploymentConfig, error) {
	c, err := a.clients()
	if err != nil {
		return nil, nil, err
	}
	if err := out.validate(c.Scheme); err != nil {
		return nil, nil, err
	}
	dc, err := getDC(ctx, c, name)
	if err != nil {
		return nil, nil, err
	}
	return c, dc, nil
}
