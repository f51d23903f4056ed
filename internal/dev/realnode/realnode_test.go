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
		{"registry hosts", registryHosts(RegistryHost), []string{`server = "http://10.88.0.1:5000"`, `[host."http://10.88.0.1:5000"]`}},
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

// Traefik serves the Gateway's listener on its entry point, calls nothing
// outside, and its role grants no write but status and nothing of
// cluster-admin's wildcards.
func TestGatewayConfiguration(t *testing.T) {
	args := strings.Join(traefikArgs("/bin"), " ")
	for _, want := range []string{
		"--global.checkNewVersion=false", "--global.sendAnonymousUsage=false",
		"--entryPoints.web.address=:8000", "--providers.kubernetesgateway=true",
		"--providers.kubernetesgateway.statusAddress.ip=10.88.0.1",
	} {
		if !strings.Contains(args, want) {
			t.Errorf("Traefik's arguments lack %q: %s", want, args)
		}
	}
	objects := map[string]map[string]any{}
	for _, doc := range strings.Split(gatewayManifest, "\n---\n") {
		var obj map[string]any
		if err := yaml.Unmarshal([]byte(doc), &obj); err != nil {
			t.Fatalf("the gateway manifest is not YAML: %v\n%s", err, doc)
		}
		objects[obj["kind"].(string)] = obj
	}
	listener := objects["Gateway"]["spec"].(map[string]any)["listeners"].([]any)[0].(map[string]any)
	if listener["port"] != float64(GatewayPort) || listener["protocol"] != "HTTP" {
		t.Errorf("the Gateway's listener is %v, want HTTP on %d", listener, GatewayPort)
	}
	if got := objects["GatewayClass"]["spec"].(map[string]any)["controllerName"]; got != "traefik.io/gateway-controller" {
		t.Errorf("the GatewayClass's controllerName is %v, want Traefik's", got)
	}
	for _, r := range objects["ClusterRole"]["rules"].([]any) {
		rule := r.(map[string]any)
		for _, v := range rule["verbs"].([]any) {
			if v == "*" || (v != "get" && v != "list" && v != "watch" && !allStatus(rule["resources"].([]any))) {
				t.Errorf("Traefik's role grants %v on %v; want reads, and updates of status only", v, rule["resources"])
			}
		}
	}
}

// allStatus reports whether every resource is a status subresource.
func allStatus(resources []any) bool {
	for _, r := range resources {
		if !strings.HasSuffix(r.(string), "/status") {
			return false
		}
	}
	return true
}
