package playground

import (
	"context"
	"fmt"
	"io"
	"path/filepath"
	"slices"
	"time"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apiextensionsclient "k8s.io/apiextensions-apiserver/pkg/client/clientset/clientset"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/rest"
)

// crdEstablishedTimeout bounds how long the API server gets to serve a new
// or changed CRD.
const crdEstablishedTimeout = time.Minute

// InstallCRDs applies every CustomResourceDefinition in the YAML files of
// dir (config/crd/bases) and waits until the API server serves all of them.
// Progress goes to log, which may be nil.
func InstallCRDs(ctx context.Context, cfg *rest.Config, dir string, log io.Writer) error {
	if log == nil {
		log = io.Discard
	}
	files, err := filepath.Glob(filepath.Join(dir, "*.yaml"))
	if err != nil || len(files) == 0 {
		return fmt.Errorf("no CRD manifests in %s", dir)
	}
	slices.Sort(files)
	objs, err := ReadManifests(files...)
	if err != nil {
		return err
	}
	if err := checkCRDs(objs); err != nil {
		return err
	}
	a, err := NewApplier(cfg)
	if err != nil {
		return err
	}
	if _, err := a.Apply(ctx, "", objs...); err != nil {
		return err
	}
	client, err := apiextensionsclient.NewForConfig(cfg)
	if err != nil {
		return fmt.Errorf("making an apiextensions client: %w", err)
	}
	for _, obj := range objs {
		if err := waitEstablished(ctx, client, obj.GetName()); err != nil {
			return err
		}
		if err := waitDiscovered(ctx, client.Discovery(), obj); err != nil {
			return err
		}
		logf(log, "Installed CRD %s", obj.GetName())
	}
	return nil
}

// waitDiscovered waits until the API server's discovery, as a controller
// reads it (every group at once), lists a CRD's resource in each version
// it serves: an established CRD can be missing from discovery a moment
// longer, and a controller started then fails to map its kinds ("unable to
// retrieve the complete list of server APIs").
func waitDiscovered(ctx context.Context, d discovery.DiscoveryInterface, crd *unstructured.Unstructured) error {
	group, _, _ := unstructured.NestedString(crd.Object, "spec", "group")
	plural, _, _ := unstructured.NestedString(crd.Object, "spec", "names", "plural")
	versions, _, _ := unstructured.NestedSlice(crd.Object, "spec", "versions")
	var want []string
	for _, v := range versions {
		version, _ := v.(map[string]any)
		if name, _ := version["name"].(string); name != "" && version["served"] == true {
			want = append(want, group+"/"+name)
		}
	}
	var last error
	err := wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, crdEstablishedTimeout, true, func(context.Context) (bool, error) {
		_, lists, err := d.ServerGroupsAndResources()
		if last = err; err != nil {
			return false, nil
		}
		for _, gv := range want {
			if !slices.ContainsFunc(lists, func(l *metav1.APIResourceList) bool {
				return l.GroupVersion == gv && slices.ContainsFunc(l.APIResources, func(r metav1.APIResource) bool { return r.Name == plural })
			}) {
				return false, nil
			}
		}
		return true, nil
	})
	if err != nil {
		return fmt.Errorf("waiting for %s (%v) to be discovered: %w (last: %v)", plural, want, err, last)
	}
	return nil
}

// InstallCRDs applies the CRDs in dir to the cluster and waits until they
// are served.
func (c *Cluster) InstallCRDs(ctx context.Context, dir string) error {
	return InstallCRDs(ctx, c.Config, dir, c.opts.Log)
}

// checkCRDs refuses manifests that are not CRDs, so that a wrong directory
// does not get applied.
func checkCRDs(objs []*unstructured.Unstructured) error {
	for _, obj := range objs {
		gvk := obj.GroupVersionKind()
		if gvk.Group != apiextensionsv1.GroupName || gvk.Kind != "CustomResourceDefinition" {
			return fmt.Errorf("%s is not a CustomResourceDefinition", describe(obj))
		}
	}
	return nil
}

// waitEstablished waits until a CRD's names are accepted and it is
// established, i.e. its resource is served.
func waitEstablished(ctx context.Context, client apiextensionsclient.Interface, name string) error {
	err := wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, crdEstablishedTimeout, true, func(ctx context.Context) (bool, error) {
		crd, err := client.ApiextensionsV1().CustomResourceDefinitions().Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return false, nil
		}
		return crdCondition(crd, apiextensionsv1.Established) && crdCondition(crd, apiextensionsv1.NamesAccepted), nil
	})
	if err != nil {
		return fmt.Errorf("waiting for CRD %s to be established: %w", name, err)
	}
	return nil
}

// crdCondition reports whether a CRD condition is True.
func crdCondition(crd *apiextensionsv1.CustomResourceDefinition, t apiextensionsv1.CustomResourceDefinitionConditionType) bool {
	for _, c := range crd.Status.Conditions {
		if c.Type == t {
			return c.Status == apiextensionsv1.ConditionTrue
		}
	}
	return false
}
