package podruntime

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	dynamicfake "k8s.io/client-go/dynamic/fake"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

func logsPod() *corev1.Pod {
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "web-1-deploy", Namespace: "shop", UID: "u1"},
		Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "deployment"}}},
	}
}

// Each instance of a container logs to a file of its own; the current and
// previous links follow the instances.
func TestOpenInstanceLog(t *testing.T) {
	dir := newPodDir(t.TempDir(), logsPod())
	if filepath.Base(string(dir)) != "shop_web-1-deploy_u1" {
		t.Errorf("pod directory %s", dir)
	}
	write := func(n int32, text string) {
		f, err := dir.openInstanceLog("deployment", n)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		if _, err := f.WriteString(text); err != nil {
			t.Fatal(err)
		}
	}
	read := func(path string) string {
		data, err := os.ReadFile(path)
		if err != nil {
			return "error: " + err.Error()
		}
		return string(data)
	}
	tests := []struct {
		instance     int32
		text         string
		wantCurrent  string
		wantPrevious string
	}{
		{instance: 0, text: "zero\n", wantCurrent: "zero\n", wantPrevious: "error: "},
		{instance: 0, text: "again\n", wantCurrent: "zero\nagain\n", wantPrevious: "error: "},
		{instance: 1, text: "one\n", wantCurrent: "one\n", wantPrevious: "zero\nagain\n"},
		{instance: 2, text: "two\n", wantCurrent: "two\n", wantPrevious: "one\n"},
	}
	for _, tt := range tests {
		write(tt.instance, tt.text)
		if got := read(dir.currentLog("deployment")); got != tt.wantCurrent {
			t.Errorf("after instance %d: current log %q, want %q", tt.instance, got, tt.wantCurrent)
		}
		got := read(dir.previousLog("deployment"))
		if tt.wantPrevious == "error: " {
			if len(got) < 7 || got[:7] != "error: " {
				t.Errorf("after instance %d: previous log %q, want none", tt.instance, got)
			}
		} else if got != tt.wantPrevious {
			t.Errorf("after instance %d: previous log %q, want %q", tt.instance, got, tt.wantPrevious)
		}
	}
	if info, err := os.Stat(dir.home()); err != nil || !info.IsDir() {
		t.Errorf("no home directory: %v", err)
	}
}

func TestLogsObject(t *testing.T) {
	pod := logsPod()
	dir := podDir("/state/pods/shop_web-1-deploy_u1")
	obj := logsObject(pod, dir)
	if obj.GetKind() != "Logs" || obj.GetAPIVersion() != "kwok.x-k8s.io/v1alpha1" || obj.GetName() != "web-1-deploy" || obj.GetNamespace() != "shop" {
		t.Errorf("object %s %s %s/%s", obj.GetAPIVersion(), obj.GetKind(), obj.GetNamespace(), obj.GetName())
	}
	refs := obj.GetOwnerReferences()
	if len(refs) != 1 || refs[0].Kind != "Pod" || refs[0].UID != "u1" {
		t.Errorf("owner references %+v, want the pod", refs)
	}
	logs, _, _ := unstructured.NestedSlice(obj.Object, "spec", "logs")
	if len(logs) != 1 {
		t.Fatalf("logs %v", logs)
	}
	log := logs[0].(map[string]any)
	if log["logsFile"] != "/state/pods/shop_web-1-deploy_u1/deployment.log" ||
		log["previousLogsFile"] != "/state/pods/shop_web-1-deploy_u1/deployment.previous.log" ||
		len(log["containers"].([]any)) != 1 || log["containers"].([]any)[0] != "deployment" {
		t.Errorf("log %v", log)
	}
}

// kwok that keeps answering from a list cached without the pod's Logs
// object serves the log once the object is touched; one that never serves
// it ends the wait with an error after logsServedTimeout.
func TestWaitLogsServed(t *testing.T) {
	errNotServed := errors.New("no logs configured for the pod")
	tests := []struct {
		name        string
		servedAfter int // touches before kwok serves; -1: never
		wantTouches int
		wantErr     bool
	}{
		{name: "served at once", servedAfter: 0, wantTouches: 0},
		{name: "served once touched", servedAfter: 1, wantTouches: 1},
		{name: "never served", servedAfter: -1, wantTouches: 1, wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			touches := 0
			serve := logsServer{
				read: func(context.Context) error {
					if tt.servedAfter < 0 || touches < tt.servedAfter {
						return errNotServed
					}
					return nil
				},
				touch: func(_ context.Context, n int) error {
					touches++
					if n != touches {
						t.Errorf("touch %d numbered %d", touches, n)
					}
					return nil
				},
			}
			err := waitLogsServed(t.Context(), serve, 3*logsTouchEvery*logsServedPoll/2)
			if (err != nil) != tt.wantErr || (err != nil && !errors.Is(err, errNotServed)) {
				t.Errorf("error %v, want error %v naming kwok's answer", err, tt.wantErr)
			}
			// The last poll may or may not fall before the timeout.
			if touches < tt.wantTouches-1 || touches > tt.wantTouches {
				t.Errorf("%d touches, want %d", touches, tt.wantTouches)
			}
		})
	}
}

// A touch changes only the Logs object's touch count.
func TestKwokLogsTouch(t *testing.T) {
	pod := logsPod()
	scheme := runtime.NewScheme()
	objects := dynamicfake.NewSimpleDynamicClientWithCustomListKinds(scheme, map[schema.GroupVersionResource]string{logsResource: "LogsList"})
	if _, err := objects.Resource(logsResource).Namespace("shop").Create(t.Context(), logsObject(pod, podDir("/state/pods/p")), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	serve := kwokLogs(nil, objects, pod, "deployment")
	for n := 1; n <= 2; n++ {
		if err := serve.touch(t.Context(), n); err != nil {
			t.Fatal(err)
		}
	}
	got, err := objects.Resource(logsResource).Namespace("shop").Get(t.Context(), pod.Name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if a := got.GetAnnotations(); len(a) != 1 || a[logsTouchedAnnotation] != "2" {
		t.Errorf("annotations %v, want the touch count 2", a)
	}
	if !equality.Semantic.DeepEqual(got.Object["spec"], logsObject(pod, podDir("/state/pods/p")).Object["spec"]) {
		t.Errorf("spec changed: %v", got.Object["spec"])
	}
	if err := kwokLogs(nil, objects, logsPod2(), "deployment").touch(t.Context(), 1); err == nil || !strings.Contains(err.Error(), "web-2-deploy") {
		t.Errorf("touching a missing Logs object: %v, want an error naming its pod", err)
	}
}

func logsPod2() *corev1.Pod {
	pod := logsPod()
	pod.Name = "web-2-deploy"
	return pod
}

func TestDeployerConfig(t *testing.T) {
	base := &rest.Config{Host: "https://127.0.0.1:6443", QPS: 100, Burst: 200}
	tests := []struct {
		name           string
		serviceAccount string
		wantUser       string
	}{
		{name: "the playground's identity"},
		{name: "the pod's service account", serviceAccount: "deployer", wantUser: "system:serviceaccount:shop:deployer"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := deployerConfig(base, "web-1-deploy", tt.serviceAccount, "shop")
			if cfg.QPS != 5 || cfg.Burst != 10 || cfg.RateLimiter != nil || cfg.Host != base.Host {
				t.Errorf("QPS %v, burst %d, host %s; want client-go's defaults for the same server", cfg.QPS, cfg.Burst, cfg.Host)
			}
			if cfg.Impersonate.UserName != tt.wantUser {
				t.Errorf("acts as %q, want %q", cfg.Impersonate.UserName, tt.wantUser)
			}
			if base.QPS != 100 || base.Impersonate.UserName != "" {
				t.Error("the base configuration changed")
			}
		})
	}
}

func TestWritePodKubeconfig(t *testing.T) {
	dir := t.TempDir()
	src := filepath.Join(dir, "admin.yaml")
	admin := clientcmdapi.NewConfig()
	admin.Clusters["kwok"] = &clientcmdapi.Cluster{Server: "https://127.0.0.1:6443"}
	admin.AuthInfos["admin"] = &clientcmdapi.AuthInfo{Token: "t"}
	admin.Contexts["kwok"] = &clientcmdapi.Context{Cluster: "kwok", AuthInfo: "admin"}
	admin.CurrentContext = "kwok"
	if err := clientcmd.WriteToFile(*admin, src); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name, serviceAccount, wantUser string
	}{
		{name: "as the admin", serviceAccount: ""},
		{name: "as the service account", serviceAccount: "default", wantUser: "system:serviceaccount:shop:default"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dst := filepath.Join(t.TempDir(), "kubeconfig")
			if err := writePodKubeconfig(src, dst, "shop", tt.serviceAccount); err != nil {
				t.Fatal(err)
			}
			got, err := clientcmd.LoadFromFile(dst)
			if err != nil {
				t.Fatal(err)
			}
			if got.Contexts["kwok"].Namespace != "shop" || got.AuthInfos["admin"].Impersonate != tt.wantUser || got.Clusters["kwok"].Server != "https://127.0.0.1:6443" {
				t.Errorf("namespace %q, impersonate %q", got.Contexts["kwok"].Namespace, got.AuthInfos["admin"].Impersonate)
			}
		})
	}
}
