package registry

import (
	"context"
	"slices"
	"testing"

	"github.com/google/go-containerregistry/pkg/name"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	kubefake "k8s.io/client-go/kubernetes/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
)

func TestKeychainForPod(t *testing.T) {
	objects := func() []runtime.Object {
		pull := dockerConfigSecret("pod-pull", `{"auths": {"r.example.com": {"username": "pod", "password": "p"}}}`)
		saPull := dockerConfigSecret("sa-pull", `{"auths": {"r.example.com": {"username": "sa", "password": "p"}, "s.example.com": {"username": "sa", "password": "p"}}}`)
		return []runtime.Object{
			&pull, &saPull,
			&corev1.ServiceAccount{
				ObjectMeta:       metav1.ObjectMeta{Namespace: "ns", Name: "default"},
				ImagePullSecrets: []corev1.LocalObjectReference{{Name: "sa-pull"}, {Name: "missing"}},
			},
			&corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "bare"}},
		}
	}
	readers := map[string]func() ObjectReader{
		"controller-runtime": func() ObjectReader {
			return ReaderFor(fake.NewClientBuilder().WithRuntimeObjects(objects()...).Build())
		},
		"clientset": func() ObjectReader { return ClientsetReader(kubefake.NewClientset(objects()...)) },
	}
	tests := []struct {
		name      string
		spec      corev1.PodSpec
		wantNames []string
		wantUser  map[string]string
	}{
		{
			name:      "template secrets first, then the default account's",
			spec:      corev1.PodSpec{ImagePullSecrets: []corev1.LocalObjectReference{{Name: "pod-pull"}}},
			wantNames: []string{"pod-pull", "sa-pull", "missing"},
			wantUser:  map[string]string{"r.example.com/app": "pod", "s.example.com/app": "sa"},
		},
		{
			name:      "named account without secrets",
			spec:      corev1.PodSpec{ServiceAccountName: "bare"},
			wantNames: nil,
			wantUser:  map[string]string{"r.example.com/app": ""},
		},
		{
			name:      "account that does not exist",
			spec:      corev1.PodSpec{ServiceAccountName: "nobody", ImagePullSecrets: []corev1.LocalObjectReference{{Name: "pod-pull"}, {Name: "pod-pull"}}},
			wantNames: []string{"pod-pull"},
			wantUser:  map[string]string{"r.example.com/app": "pod"},
		},
	}
	for readerName, newReader := range readers {
		for _, tt := range tests {
			t.Run(readerName+"/"+tt.name, func(t *testing.T) {
				ctx := context.Background()
				r := newReader()
				names, err := PullSecretNames(ctx, r, "ns", &tt.spec)
				if err != nil || !slices.Equal(names, tt.wantNames) {
					t.Fatalf("PullSecretNames = %v, %v; want %v", names, err, tt.wantNames)
				}
				kc, err := KeychainForPod(ctx, r, "ns", &tt.spec)
				if err != nil {
					t.Fatal(err)
				}
				for repo, want := range tt.wantUser {
					ref, _ := name.NewRepository(repo)
					if cfg, _ := kc.Lookup(ref); cfg.Username != want {
						t.Errorf("%s: user %q, want %q", repo, cfg.Username, want)
					}
				}
			})
		}
	}
}
