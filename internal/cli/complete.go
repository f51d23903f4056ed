package cli

import (
	"context"
	"strings"

	"github.com/spf13/cobra"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
)

// completeDCName completes the NAME argument with the DeploymentConfigs of
// the namespace the flags select.
func (a *app) completeDCName(cmd *cobra.Command, args []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
	if len(args) > 0 {
		return nil, cobra.ShellCompDirectiveNoFileComp
	}
	c, err := a.clients()
	if err != nil {
		return nil, cobra.ShellCompDirectiveNoFileComp
	}
	dcs, err := listDCs(commandContext(cmd), c, false, labels.Everything())
	if err != nil {
		return nil, cobra.ShellCompDirectiveNoFileComp
	}
	var names []cobra.Completion
	for _, dc := range dcs {
		if strings.HasPrefix(dc.Name, toComplete) {
			names = append(names, dc.Name)
		}
	}
	return names, cobra.ShellCompDirectiveNoFileComp
}

// registerNamespaceCompletion completes --namespace with the cluster's
// namespaces.
func registerNamespaceCompletion(root *cobra.Command, a *app) {
	_ = root.RegisterFlagCompletionFunc("namespace", func(cmd *cobra.Command, _ []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
		c, err := a.clients()
		if err != nil {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		list, err := c.Kube.CoreV1().Namespaces().List(commandContext(cmd), metav1.ListOptions{})
		if err != nil {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		var names []cobra.Completion
		for _, ns := range list.Items {
			if strings.HasPrefix(ns.Name, toComplete) {
				names = append(names, ns.Name)
			}
		}
		return names, cobra.ShellCompDirectiveNoFileComp
	})
}

// commandContext is the command's context; completion may run without one.
func commandContext(cmd *cobra.Command) context.Context {
	if ctx := cmd.Context(); ctx != nil {
		return ctx
	}
	return context.Background()
}
