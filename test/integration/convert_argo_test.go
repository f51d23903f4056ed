package integration

import (
	"os"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/deployconfig/deployconfig/internal/cli/convert"
)

// TestConvertedArgoRolloutsAreAccepted converts the Argo Rollouts manifests
// of kubectl dc convert's golden tests and creates every DeploymentConfig
// they give: the API server (schema and CEL rules) must accept them as they
// are.
func TestConvertedArgoRolloutsAreAccepted(t *testing.T) {
	ns := newNamespace(t)
	for _, file := range []string{"argo-canary.yaml", "argo-bluegreen.yaml", "argo-unsupported.yaml", "argo-analyses.yaml", "argo-gateway.yaml"} {
		t.Run(file, func(t *testing.T) {
			data, err := os.ReadFile("../../internal/cli/testdata/convert/" + file)
			if err != nil {
				t.Fatal(err)
			}
			res, err := convert.Convert(data, convert.Options{})
			if err != nil {
				t.Fatalf("convert %s: %v", file, err)
			}
			created := 0
			for _, doc := range res.Documents {
				if doc["kind"] != "DeploymentConfig" {
					continue
				}
				obj := &unstructured.Unstructured{Object: doc}
				obj.SetNamespace(ns)
				ctx := testContext(t, time.Minute)
				if err := cluster.client.Create(ctx, obj); err != nil {
					t.Errorf("the API server refused the DeploymentConfig %s converted from %s: %v", obj.GetName(), file, err)
				}
				created++
			}
			if created == 0 {
				t.Errorf("%s converted to no DeploymentConfig", file)
			}
		})
	}
}
