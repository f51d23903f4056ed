package controller

import (
	"context"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/version"

	dcv1 "github.com/deployconfig/deployconfig/api/v1"
	"github.com/deployconfig/deployconfig/internal/trafficrouting"
)

// The annotations the Gateway API's release bundle puts on its CRDs.
const (
	gatewayAPIBundleVersion = "gateway.networking.k8s.io/bundle-version"
	gatewayAPIChannel       = "gateway.networking.k8s.io/channel"
)

// crdKind is the kind of a CustomResourceDefinition.
func crdKind() schema.GroupVersionKind {
	return schema.GroupVersionKind{Group: "apiextensions.k8s.io", Version: "v1", Kind: "CustomResourceDefinition"}
}

// GatewayAPIError says the cluster's Gateway API CRDs cannot carry what
// trafficRouting writes. Installing or upgrading them lets the rollout
// start on a later retry.
type GatewayAPIError struct {
	// CRD is the CustomResourceDefinition's name.
	CRD string
	// Why says what is wrong with it.
	Why string
}

// Error names the CRD and the minimum.
func (e *GatewayAPIError) Error() string {
	return fmt.Sprintf("trafficRouting needs the Gateway API's CRDs at %s or later (%s of the experimental channel): %s %s; install them and the rollout starts",
		dcv1.MinGatewayAPIVersion, dcv1.MinGatewayAPIExperimental, e.CRD, e.Why)
}

// ConditionReason is the Progressing condition's reason for the error.
func (e *GatewayAPIError) ConditionReason() string { return dcv1.GatewayAPIUnsupportedReason }

// checkGatewayAPI reads the CRD of each kind of route the strategy's
// trafficRouting names (its metadata only) and refuses a version older
// than the documented minimum.
func (r *DeploymentConfigReconciler) checkGatewayAPI(ctx context.Context, dc *dcv1.DeploymentConfig) error {
	if dc.Spec.Strategy.RollingParams == nil {
		return nil
	}
	seen := map[string]bool{}
	for _, ref := range trafficrouting.Refs(dc.Spec.Strategy.RollingParams.TrafficRouting) {
		name := ref.Resource.Resource + "." + ref.Resource.Group
		if seen[name] {
			continue
		}
		seen[name] = true
		crd := &metav1.PartialObjectMetadata{}
		crd.SetGroupVersionKind(crdKind())
		err := r.APIReader.Get(ctx, types.NamespacedName{Name: name}, crd)
		if apierrors.IsNotFound(err) {
			return &GatewayAPIError{CRD: name, Why: "is not installed"}
		}
		if err != nil {
			return fmt.Errorf("read the customresourcedefinition %s: %w", name, err)
		}
		if err := gatewayAPIVersionError(name, crd.Annotations); err != nil {
			return err
		}
	}
	return nil
}

// gatewayAPIVersionError judges a Gateway API CRD by its bundle's
// annotations. A CRD without them (built by hand or by a vendor) is given
// the benefit of the doubt.
func gatewayAPIVersionError(crd string, annotations map[string]string) error {
	have, ok := annotations[gatewayAPIBundleVersion]
	if !ok {
		return nil
	}
	v, err := version.ParseSemantic(have)
	if err != nil {
		return &GatewayAPIError{CRD: crd, Why: fmt.Sprintf("has the unreadable %s %q", gatewayAPIBundleVersion, have)}
	}
	least := dcv1.MinGatewayAPIVersion
	if annotations[gatewayAPIChannel] == "experimental" {
		least = dcv1.MinGatewayAPIExperimental
	}
	if v.LessThan(version.MustParseSemantic(least)) {
		return &GatewayAPIError{CRD: crd, Why: fmt.Sprintf("is %s (%s channel)", have, annotations[gatewayAPIChannel])}
	}
	return nil
}
