package cli

import (
	"context"
	"fmt"
	"sort"
	"strings"

	"github.com/spf13/cobra"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"

	dcv1 "github.com/deployconfig/deployconfig/api/v1"
	"github.com/deployconfig/deployconfig/internal/deployment"
)

// statusDeployments is how many of a DeploymentConfig's newest deployments
// `status` and `describe` show.
const statusDeployments = 3

func newStatusCommand(a *app) *cobra.Command {
	return &cobra.Command{
		Use:   "status",
		Short: "Show an overview of the namespace's DeploymentConfigs and their rollouts",
		Long: `Show, like 'oc status', every DeploymentConfig of the namespace with what it
deploys and its latest rollouts: running, deployed or failed, how long ago,
and how many pods are ready.`,
		Example: `  kubectl dc status
  kubectl dc status -n shop`,
		Args: func(_ *cobra.Command, args []string) error {
			if len(args) > 0 {
				return fmt.Errorf("status takes no NAME: it shows the whole namespace (for one DeploymentConfig: 'kubectl dc describe %s')", args[0])
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, _ []string) error {
			return a.status(cmd.Context())
		},
	}
}

func (a *app) status(ctx context.Context) error {
	c, err := a.clients()
	if err != nil {
		return err
	}
	dcs, err := listDCs(ctx, c, false, labels.Everything())
	if err != nil {
		return err
	}
	byDC, err := deploymentsByDC(ctx, c)
	if err != nil {
		return err
	}
	w := a.Streams.Out
	where := fmt.Sprintf("In namespace %s", c.Namespace)
	if c.Server != "" {
		where += " on server " + c.Server
	}
	fmt.Fprintln(w, where)
	if len(dcs) == 0 {
		fmt.Fprintf(w, "\nNo DeploymentConfigs in namespace %s. Convert an OpenShift manifest with 'kubectl dc convert -f FILE' and apply it.\n", c.Namespace)
		return nil
	}
	sort.Slice(dcs, func(i, j int) bool { return dcs[i].Name < dcs[j].Name })
	for i := range dcs {
		dc := &dcs[i]
		fmt.Fprintf(w, "\n%s\n", dcHeadline(dc))
		rcs := byDC[dc.Name]
		if len(rcs) == 0 {
			fmt.Fprintln(w, "  not rolled out yet")
			continue
		}
		for _, rc := range newest(rcs, statusDeployments) {
			fmt.Fprintf(w, "  %s\n", a.deploymentLine(dc, rc))
		}
	}
	return nil
}

// deploymentsByDC lists the namespace's deployments once, grouped by
// DeploymentConfig, oldest first.
func deploymentsByDC(ctx context.Context, c *Clients) (map[string][]*corev1.ReplicationController, error) {
	list, err := c.Kube.CoreV1().ReplicationControllers(c.Namespace).List(ctx, metav1.ListOptions{LabelSelector: dcv1.DeploymentConfigLabel})
	if err != nil {
		return nil, fmt.Errorf("list the rollouts of namespace %s: %w", c.Namespace, err)
	}
	out := map[string][]*corev1.ReplicationController{}
	for i := range list.Items {
		rc := &list.Items[i]
		name := rc.Labels[dcv1.DeploymentConfigLabel]
		out[name] = append(out[name], rc)
	}
	for _, rcs := range out {
		deployment.SortByVersion(rcs)
	}
	return out, nil
}

// newest returns up to n deployments, newest first.
func newest(rcs []*corev1.ReplicationController, n int) []*corev1.ReplicationController {
	out := make([]*corev1.ReplicationController, 0, n)
	for i := len(rcs) - 1; i >= 0 && len(out) < n; i-- {
		out = append(out, rcs[i])
	}
	return out
}

// dcHeadline is "dc/NAME deploys IMAGE[, IMAGE]" with "(manual)" for a
// DeploymentConfig without triggers, "test" and "paused" as they apply.
func dcHeadline(dc *dcv1.DeploymentConfig) string {
	line := fmt.Sprintf("dc/%s deploys %s", dc.Name, strings.Join(deployedImages(dc), ", "))
	var notes []string
	if len(dc.Spec.Triggers) == 0 {
		notes = append(notes, "manual")
	}
	if dc.Spec.Test {
		notes = append(notes, "test")
	}
	if dc.Spec.Paused {
		notes = append(notes, "paused")
	}
	if len(notes) > 0 {
		line += " (" + strings.Join(notes, ", ") + ")"
	}
	return line
}

// deployedImages lists each container's image; a container without one
// shows the image its trigger watches.
func deployedImages(dc *dcv1.DeploymentConfig) []string {
	if dc.Spec.Template == nil {
		return []string{"<no template>"}
	}
	watched := map[string]string{}
	for _, t := range dc.Spec.Triggers {
		if p := t.ImageChangeParams; p != nil {
			for _, name := range p.ContainerNames {
				watched[name] = p.From.Name
			}
		}
	}
	var images []string
	for _, c := range dc.Spec.Template.Spec.Containers {
		image := strings.TrimSpace(c.Image)
		if image == "" {
			image = watched[c.Name]
		}
		if image == "" {
			image = "<no image>"
		}
		images = append(images, image)
	}
	return images
}

// deploymentLine describes one deployment as `oc status` does:
// "deployment #3 running for 2 minutes - 1/3 pods".
func (a *app) deploymentLine(dc *dcv1.DeploymentConfig, rc *corev1.ReplicationController) string {
	what := fmt.Sprintf("deployment #%d", deployment.Version(rc))
	if dc.Spec.Test {
		what = "test " + what
	}
	cancelling := ""
	phase := deployment.Phase(rc)
	if deployment.IsCancelled(rc) && !deployment.IsTerminal(phase) {
		cancelling = " (cancelling)"
	}
	created := rc.CreationTimestamp.Time
	switch phase {
	case dcv1.DeploymentPhaseFailed:
		reason := rc.Annotations[dcv1.DeploymentStatusReasonAnnotation]
		if reason != "" {
			reason = ": " + reason
		}
		return fmt.Sprintf("%s failed %s%s%s", what, a.ago(created), reason, podSummary(rc, false))
	case dcv1.DeploymentPhaseComplete:
		if dc.Spec.Test {
			return fmt.Sprintf("%s deployed %s", what, a.ago(created))
		}
		latest := deployment.Version(rc) == dc.Status.LatestVersion
		return fmt.Sprintf("%s deployed %s%s", what, a.ago(created), podSummary(rc, latest))
	case dcv1.DeploymentPhaseRunning:
		return fmt.Sprintf("%s running%s for %s%s", what, cancelling, a.since(created), podSummary(rc, false))
	}
	return fmt.Sprintf("%s pending%s for %s", what, cancelling, a.since(created))
}

// podSummary is " - 3 pods" or " - 1/3 pods" (ready of wanted), empty for
// a deployment with no pods unless includeEmpty.
func podSummary(rc *corev1.ReplicationController, includeEmpty bool) string {
	ready := rc.Status.ReadyReplicas
	wanted := deployment.Replicas(rc)
	if deployment.Phase(rc) == dcv1.DeploymentPhaseRunning {
		if desired, ok := deployment.DesiredReplicas(rc); ok {
			wanted = desired
		}
	}
	if ready != wanted {
		return fmt.Sprintf(" - %d/%d pods", ready, wanted)
	}
	if ready == 0 && !includeEmpty {
		return ""
	}
	return " - " + plural(int64(ready), "pod")
}
