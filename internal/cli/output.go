package cli

import (
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/cli-runtime/pkg/printers"
)

// outputFlags are -o json|yaml|name (and kubectl's templates) for commands
// that return objects.
type outputFlags struct {
	print *genericclioptions.PrintFlags
}

func newOutputFlags() *outputFlags {
	return &outputFlags{print: genericclioptions.NewPrintFlags("")}
}

func (o *outputFlags) addFlags(cmd *cobra.Command) {
	o.print.AddFlags(cmd)
	_ = cmd.RegisterFlagCompletionFunc("output", func(_ *cobra.Command, _ []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
		var formats []cobra.Completion
		for _, f := range o.print.AllowedFormats() {
			if strings.HasPrefix(f, toComplete) {
				formats = append(formats, f)
			}
		}
		return formats, cobra.ShellCompDirectiveNoFileComp
	})
}

// human reports whether no -o was given: the command then writes its own
// human-readable output.
func (o *outputFlags) human() bool {
	return o.print.OutputFormat == nil || *o.print.OutputFormat == ""
}

// printer returns the printer for -o; without -o it writes
// "kind.group/name <operation>", as kubectl does after a change. Commands
// call it before they change anything, so a bad -o changes nothing.
func (o *outputFlags) printer(scheme *runtime.Scheme, operation string) (printers.ResourcePrinter, error) {
	o.print.NamePrintFlags.Operation = operation
	p, err := o.print.WithTypeSetter(scheme).ToPrinter()
	if err != nil {
		return nil, fmt.Errorf("-o: %w", err)
	}
	return p, nil
}

// validate checks -o before the command does anything.
func (o *outputFlags) validate(scheme *runtime.Scheme) error {
	_, err := o.printer(scheme, "")
	return err
}

// printAll prints objects one by one for -o name and operations, and as
// a v1 List for the other formats when there are several, as kubectl does.
func (o *outputFlags) printAll(p printers.ResourcePrinter, scheme *runtime.Scheme, objs []runtime.Object, w io.Writer) error {
	for _, obj := range objs {
		if err := setKind(scheme, obj); err != nil {
			return err
		}
	}
	if len(objs) == 1 || o.human() || *o.print.OutputFormat == "name" {
		for _, obj := range objs {
			if err := p.PrintObj(obj, w); err != nil {
				return fmt.Errorf("print: %w", err)
			}
		}
		return nil
	}
	list := &corev1.List{}
	for _, obj := range objs {
		list.Items = append(list.Items, runtime.RawExtension{Object: obj})
	}
	list.SetGroupVersionKind(schema.GroupVersionKind{Version: "v1", Kind: "List"})
	if err := p.PrintObj(list, w); err != nil {
		return fmt.Errorf("print: %w", err)
	}
	return nil
}

// setKind fills in an object's apiVersion and kind, which typed clients
// leave empty.
func setKind(scheme *runtime.Scheme, obj runtime.Object) error {
	gvks, _, err := scheme.ObjectKinds(obj)
	if err != nil || len(gvks) == 0 {
		return fmt.Errorf("unknown object type %T: %w", obj, err)
	}
	obj.GetObjectKind().SetGroupVersionKind(gvks[0])
	return nil
}
