package cli

import (
	"context"
	"fmt"
	"strings"

	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/cli-runtime/pkg/printers"

	dcv1 "github.com/deployconfig/deployconfig/api/v1"
)

type getOptions struct {
	allNamespaces bool
	selector      string
	noHeaders     bool
}

func newGetCommand(a *app) *cobra.Command {
	out := newOutputFlags()
	opts := getOptions{}
	cmd := &cobra.Command{
		Use:   "get [NAME]",
		Short: "List DeploymentConfigs, or show one",
		Long: `List the DeploymentConfigs of the namespace as a table like 'oc get dc':
NAME, REVISION, DESIRED, CURRENT, TRIGGERED BY and AGE.`,
		Example: `  kubectl dc get
  kubectl dc get web -o yaml
  kubectl dc get -A -l app=web`,
		Args:              optionalNameArg,
		ValidArgsFunction: a.completeDCName,
		RunE: func(cmd *cobra.Command, args []string) error {
			name := ""
			if len(args) == 1 {
				name, _ = parseName(args[0])
			}
			return a.get(cmd.Context(), name, opts, out)
		},
	}
	cmd.Flags().BoolVarP(&opts.allNamespaces, "all-namespaces", "A", false, "List the DeploymentConfigs of every namespace.")
	cmd.Flags().StringVarP(&opts.selector, "selector", "l", "", "Only those whose labels match this selector, e.g. app=web.")
	cmd.Flags().BoolVar(&opts.noHeaders, "no-headers", false, "Leave out the table's header line.")
	out.addFlags(cmd)
	return cmd
}

func (a *app) get(ctx context.Context, name string, opts getOptions, out *outputFlags) error {
	selector, err := labels.Parse(opts.selector)
	if err != nil {
		return fmt.Errorf("--selector: %w", err)
	}
	c, err := a.clients()
	if err != nil {
		return err
	}
	p, err := out.printer(c.Scheme, "")
	if err != nil {
		return err
	}
	var dcs []dcv1.DeploymentConfig
	if name != "" {
		dc, err := getDC(ctx, c, name)
		if err != nil {
			return err
		}
		dcs = []dcv1.DeploymentConfig{*dc}
	} else if dcs, err = listDCs(ctx, c, opts.allNamespaces, selector); err != nil {
		return err
	}
	if !out.human() {
		objs := make([]runtime.Object, 0, len(dcs))
		for i := range dcs {
			objs = append(objs, &dcs[i])
		}
		return out.printAll(p, c.Scheme, objs, a.Streams.Out)
	}
	if len(dcs) == 0 {
		where := fmt.Sprintf("%s namespace", c.Namespace)
		if opts.allNamespaces {
			where = "any namespace"
		}
		fmt.Fprintf(a.Streams.ErrOut, "No resources found in %s.\n", where)
		return nil
	}
	return a.printTable(dcs, opts)
}

// printTable writes the table of `oc get dc`.
func (a *app) printTable(dcs []dcv1.DeploymentConfig, opts getOptions) error {
	tw := printers.GetNewTabWriter(a.Streams.Out)
	if !opts.noHeaders {
		header := "NAME\tREVISION\tDESIRED\tCURRENT\tTRIGGERED BY\tAGE"
		if opts.allNamespaces {
			header = "NAMESPACE\t" + header
		}
		fmt.Fprintln(tw, header)
	}
	for i := range dcs {
		dc := &dcs[i]
		if opts.allNamespaces {
			fmt.Fprintf(tw, "%s\t", dc.Namespace)
		}
		fmt.Fprintf(tw, "%s\t%d\t%d\t%d\t%s\t%s\n", dc.Name, dc.Status.LatestVersion, dc.Spec.Replicas,
			dc.Status.Replicas, triggeredBy(dc), a.age(dc.CreationTimestamp.Time))
	}
	return tw.Flush()
}

// triggeredBy lists the triggers as oc does: "config,image(app:1)", or
// "manual" when there are none.
func triggeredBy(dc *dcv1.DeploymentConfig) string {
	var out []string
	for _, t := range dc.Spec.Triggers {
		switch {
		case t.Type == dcv1.DeploymentTriggerOnConfigChange:
			out = append(out, "config")
		case t.Type == dcv1.DeploymentTriggerOnImageChange && t.ImageChangeParams != nil:
			out = append(out, fmt.Sprintf("image(%s)", t.ImageChangeParams.From.Name))
		}
	}
	if len(out) == 0 {
		return "manual"
	}
	return strings.Join(out, ",")
}
