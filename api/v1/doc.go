// Package v1 holds the DeploymentConfig API, group apps.deployconfig.io,
// version v1. Field names follow OpenShift's apps.openshift.io/v1 so that
// existing manifests convert by changing their apiVersion.
//
// +kubebuilder:object:generate=true
// +groupName=apps.deployconfig.io
package v1

import (
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/scheme"
)

var (
	// GroupVersion is the group and version of this API.
	GroupVersion = schema.GroupVersion{Group: "apps.deployconfig.io", Version: "v1"}

	// SchemeBuilder registers the API's types with a runtime.Scheme.
	SchemeBuilder = &scheme.Builder{GroupVersion: GroupVersion}

	// AddToScheme adds the API's types to a runtime.Scheme.
	AddToScheme = SchemeBuilder.AddToScheme
)

// Resource returns the group-qualified resource for a plural resource name.
func Resource(resource string) schema.GroupResource {
	return GroupVersion.WithResource(resource).GroupResource()
}
