package v1

import "k8s.io/apimachinery/pkg/labels"

// PodSelector returns the labels that select every pod of the
// DeploymentConfig: its selector (the template's labels when it has none)
// plus deploymentconfig=<name>.
func (dc *DeploymentConfig) PodSelector() labels.Set {
	set := labels.Set{}
	selector := dc.Spec.Selector
	if len(selector) == 0 && dc.Spec.Template != nil {
		selector = dc.Spec.Template.Labels
	}
	for k, v := range selector {
		set[k] = v
	}
	set[DeploymentConfigSelectorLabel] = dc.Name
	return set
}

// ScaleSelector is PodSelector as a string, the form the scale subresource
// (status.selector) and an HPA read.
func (dc *DeploymentConfig) ScaleSelector() string {
	return dc.PodSelector().AsSelector().String()
}
