package playground

import (
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"

	dcv1 "github.com/deployconfig/deployconfig/api/v1"
)

// The traffic sample is the Services, the route on the given Gateway and a
// DeploymentConfig whose canary pauses at TrafficSampleWeight% of the
// requests through that route.
func TestTrafficSampleYAML(t *testing.T) {
	objs, err := DecodeManifests([]byte(TrafficSampleYAML("registry/app:1", "2", "gw-ns", "gw")))
	if err != nil {
		t.Fatal(err)
	}
	var kinds []string
	var dc dcv1.DeploymentConfig
	for _, obj := range objs {
		kinds = append(kinds, obj.GetKind()+"/"+obj.GetName())
		switch obj.GetKind() {
		case "DeploymentConfig":
			if err := runtime.DefaultUnstructuredConverter.FromUnstructured(obj.Object, &dc); err != nil {
				t.Fatal(err)
			}
		case "HTTPRoute":
			parents, _, _ := unstructured.NestedSlice(obj.Object, "spec", "parentRefs")
			if len(parents) != 1 || parents[0].(map[string]any)["name"] != "gw" || parents[0].(map[string]any)["namespace"] != "gw-ns" {
				t.Errorf("the route's parents are %v, want gw-ns/gw", parents)
			}
		}
	}
	want := []string{"Service/canary-stable", "Service/canary-canary", "HTTPRoute/canary", "DeploymentConfig/canary"}
	if len(kinds) != len(want) {
		t.Fatalf("objects %v, want %v", kinds, want)
	}
	for i := range want {
		if kinds[i] != want[i] {
			t.Errorf("object %d is %s, want %s", i, kinds[i], want[i])
		}
	}
	p := dc.Spec.Strategy.RollingParams
	if p == nil || p.TrafficRouting == nil || p.TrafficRouting.GatewayAPI == nil || p.TrafficRouting.GatewayAPI.HTTPRoute != TrafficSample {
		t.Fatalf("the DeploymentConfig routes no traffic through HTTPRoute %s: %+v", TrafficSample, p)
	}
	if len(p.Steps) != 3 || p.Steps[1].SetWeight == nil || *p.Steps[1].SetWeight != TrafficSampleWeight || p.Steps[2].Pause == nil {
		t.Errorf("steps %+v, want a header route, setWeight %d and a pause", p.Steps, TrafficSampleWeight)
	}
	c := dc.Spec.Template.Spec.Containers[0]
	if c.Image != "registry/app:1" || c.Env[0].Value != "2" {
		t.Errorf("container %s with %v, want registry/app:1 with VERSION=2", c.Image, c.Env)
	}
}
