package cli

import (
	"context"
	"fmt"
	"io"

	"github.com/spf13/cobra"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/cli-runtime/pkg/printers"

	dcv1 "github.com/deployconfig/deployconfig/api/v1"
	"github.com/deployconfig/deployconfig/internal/deployment"
)

func newRolloutHistoryCommand(a *app) *cobra.Command {
	out := newOutputFlags()
	var revision, configDiff int64
	cmd := &cobra.Command{
		Use:   "history NAME [--revision N]",
		Short: "List the revisions of a DeploymentConfig, or show one",
		Long: `List the revisions (rollouts) of a DeploymentConfig with their status and
cause; with --revision, show that revision's pod template. With -o, print the
ReplicationControllers instead. With --revision and --config-diff, show how
the configuration (config snapshots) of the two revisions differs; Secret
values are never shown.`,
		Example: `  kubectl dc rollout history web
  kubectl dc rollout history web --revision 2
  kubectl dc rollout history web --revision 3 --config-diff 2`,
		Args:              nameArg("show the history of"),
		ValidArgsFunction: a.completeDCName,
		RunE: func(cmd *cobra.Command, args []string) error {
			name, _ := parseName(args[0])
			if configDiff != 0 {
				return a.configDiff(cmd.Context(), name, configDiff, revision)
			}
			return a.rolloutHistory(cmd.Context(), name, revision, out)
		},
	}
	cmd.Flags().Int64Var(&revision, "revision", 0, "Show the pod template of this revision.")
	cmd.Flags().Int64Var(&configDiff, "config-diff", 0, "With --revision, show how the configuration of --revision differs from this revision's.")
	out.addFlags(cmd)
	return cmd
}

func (a *app) rolloutHistory(ctx context.Context, name string, revision int64, out *outputFlags) error {
	if revision < 0 {
		return fmt.Errorf("--revision: expected a revision number of 1 or more, got %d", revision)
	}
	c, err := a.clients()
	if err != nil {
		return err
	}
	p, err := out.printer(c.Scheme, "")
	if err != nil {
		return err
	}
	dc, err := getDC(ctx, c, name)
	if err != nil {
		return err
	}
	rcs, err := listDeployments(ctx, c, dc)
	if err != nil {
		return err
	}
	if revision > 0 {
		rc := findVersion(rcs, revision)
		if rc == nil {
			return fmt.Errorf("--revision: deploymentconfig %q has no revision %d (see 'kubectl dc rollout history %s')", dc.Name, revision, dc.Name)
		}
		if !out.human() {
			return out.printAll(p, c.Scheme, []runtime.Object{rc}, a.Streams.Out)
		}
		return a.printRevision(dc, rc)
	}
	if !out.human() {
		objs := make([]runtime.Object, 0, len(rcs))
		for _, rc := range rcs {
			objs = append(objs, rc)
		}
		return out.printAll(p, c.Scheme, objs, a.Streams.Out)
	}
	return a.printHistory(dc, rcs)
}

func (a *app) printHistory(dc *dcv1.DeploymentConfig, rcs []*corev1.ReplicationController) error {
	w := a.Streams.Out
	if len(rcs) == 0 {
		fmt.Fprintf(w, "No rollout history found for deploymentconfig %q.\n", dc.Name)
		return nil
	}
	fmt.Fprintf(w, "deploymentconfig.%s/%s\n", dcv1.GroupVersion.Group, dc.Name)
	tw := printers.GetNewTabWriter(w)
	fmt.Fprintln(tw, "REVISION\tSTATUS\tCAUSE")
	for _, rc := range rcs {
		fmt.Fprintf(tw, "%d\t%s\t%s\n", deployment.Version(rc), statusWord(rc), cause(rc))
	}
	return tw.Flush()
}

func (a *app) printRevision(dc *dcv1.DeploymentConfig, rc *corev1.ReplicationController) error {
	w := a.Streams.Out
	fmt.Fprintf(w, "deploymentconfig.%s/%s with revision #%d\n", dcv1.GroupVersion.Group, dc.Name, deployment.Version(rc))
	template := rc.Spec.Template
	if encoded, err := deployment.DecodeConfig(rc); err == nil {
		template = encoded.Spec.Template
	}
	writeSnapshots(w, rc)
	return writePodTemplate(w, template)
}

// statusWord is a deployment's status for tables: its phase, or Cancelled
// for a failure a user or a newer rollout caused.
func statusWord(rc *corev1.ReplicationController) string {
	phase := deployment.Phase(rc)
	if phase == dcv1.DeploymentPhaseFailed && deployment.IsCancelled(rc) {
		return "Cancelled"
	}
	return string(phase)
}

// cause is why a deployment was made, as recorded in its encoded
// DeploymentConfig: "config change", "image change", "manual change".
func cause(rc *corev1.ReplicationController) string {
	encoded, err := deployment.DecodeConfig(rc)
	if err != nil || encoded.Status.Details == nil || encoded.Status.Details.Message == "" {
		return "<unknown>"
	}
	return encoded.Status.Details.Message
}

// writePodTemplate writes a pod template as `kubectl describe` does.
func writePodTemplate(w io.Writer, template *corev1.PodTemplateSpec) error {
	d := newDescriber(w)
	d.podTemplate(0, template)
	return d.flush()
}
