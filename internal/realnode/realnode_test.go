package realnode

import (
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/yaml"
)

func TestStatFields(t *testing.T) {
	for _, tc := range []struct {
		stat      string
		wantState string
		wantLen   int
	}{
		{stat: "42 (kube-apiserver) S 1 42 42 0 -1 4194560 1 2 3 4 5 6 7 8 20 0 1 0 12345 0", wantState: "S", wantLen: 21},
		// A command name with spaces and parentheses.
		{stat: "7 (a (b) c) Z 1 7 7 0 -1 4194560 1 2 3 4 5 6 7 8 20 0 1 0 99 0", wantState: "Z", wantLen: 21},
		{stat: "garbage", wantLen: 0},
	} {
		got := statFields(tc.stat)
		if len(got) != tc.wantLen || (tc.wantLen > 0 && got[0] != tc.wantState) {
			t.Errorf("statFields(%q) = %q; want %d fields starting with %q", tc.stat, got, tc.wantLen, tc.wantState)
		}
	}
	if got := statFields("42 (x) S 1 42 42 0 -1 4194560 1 2 3 4 5 6 7 8 20 0 1 0 12345 0"); got[19] != "12345" {
		t.Errorf("start time field = %q, want 12345", got[19])
	}
}

func TestUnescapeMount(t *testing.T) {
	for in, want := range map[string]string{
		"/var/lib/kubelet":        "/var/lib/kubelet",
		`/root/my\040dir/kubelet`: "/root/my dir/kubelet",
		`/a\134b`:                 `/a\b`,
	} {
		if got := unescapeMount(in); got != want {
			t.Errorf("unescapeMount(%q) = %q, want %q", in, got, want)
		}
	}
}

// The daemons' configurations carry the settings this kind of machine
// needs (REALNODE.md) and name only the cluster's own paths.
func TestConfigurations(t *testing.T) {
	s := &state{Dir: "/state", Netns: "dc-x"}
	containerd := s.containerdConfig("10.88.0.1:5000/deployconfig/pause:dev")
	kubelet := s.kubeletConfig()
	for _, tc := range []struct {
		name, text string
		want       []string
	}{
		{"containerd", containerd, []string{
			"restrict_oom_score_adj = true", "SystemdCgroup = false", `address = "/state/containerd/containerd.sock"`,
			`sandbox_image = "10.88.0.1:5000/deployconfig/pause:dev"`, "netns_mounts_under_state_dir = true",
			`bin_dir = "/usr/lib/cni"`,
		}},
		{"kubelet", kubelet, []string{"failCgroupV1: false", "cgroupDriver: cgroupfs", "failSwapOn: false", "containerRuntimeEndpoint: unix:///state/containerd/containerd.sock", `nodefs.available: "1%"`}},
		{"cni", s.cniConfig(), []string{`"subnet": "10.88.0.0/16"`, `"ipMasq": false`, `"dataDir": "/state/cni/ipam"`}},
		{"registry hosts", registryHosts(), []string{`server = "http://10.88.0.1:5000"`}},
	} {
		for _, w := range tc.want {
			if !strings.Contains(tc.text, w) {
				t.Errorf("%s configuration lacks %q:\n%s", tc.name, w, tc.text)
			}
		}
	}
	var parsed map[string]any
	if err := yaml.Unmarshal([]byte(kubelet), &parsed); err != nil {
		t.Errorf("the kubelet configuration is not YAML: %v", err)
	}
}

// withImages replaces config/default's images and adds arguments, and
// keeps everything else.
func TestWithImages(t *testing.T) {
	d := &appsv1.Deployment{}
	d.APIVersion, d.Kind, d.Name = "apps/v1", "Deployment", ControllerDeployment
	d.Spec.Template.Spec.Containers = []corev1.Container{{
		Name: "manager", Image: "ghcr.io/deployconfig/dc-controller:latest",
		Args: []string{"--leader-elect", "--deployer-image=ghcr.io/deployconfig/dc-deploy:latest"},
	}}
	obj, err := runtime.DefaultUnstructuredConverter.ToUnstructured(d)
	if err != nil {
		t.Fatal(err)
	}
	out, err := withImages(&unstructured.Unstructured{Object: obj}, Controller{Image: "r/c:1", DeployerImage: "r/d:1", Args: []string{"--image-poll-interval=2s"}})
	if err != nil {
		t.Fatal(err)
	}
	got := &appsv1.Deployment{}
	if err := yaml.Unmarshal(out, got); err != nil {
		t.Fatal(err)
	}
	c := got.Spec.Template.Spec.Containers[0]
	wantArgs := "--leader-elect --deployer-image=r/d:1 --image-poll-interval=2s"
	if c.Image != "r/c:1" || strings.Join(c.Args, " ") != wantArgs || got.Kind != "Deployment" {
		t.Errorf("got kind %q image %q args %q; want Deployment, r/c:1, %q", got.Kind, c.Image, c.Args, wantArgs)
	}
}
