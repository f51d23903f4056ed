package registry

import (
	"encoding/base64"
	"testing"

	"github.com/google/go-containerregistry/pkg/authn"
	"github.com/google/go-containerregistry/pkg/name"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func dockerConfigSecret(name, config string) corev1.Secret {
	return corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name},
		Type:       corev1.SecretTypeDockerConfigJson,
		Data:       map[string][]byte{corev1.DockerConfigJsonKey: []byte(config)},
	}
}

func basicAuth(user, pass string) string {
	return base64.StdEncoding.EncodeToString([]byte(user + ":" + pass))
}

func TestKeychainFromDockerConfigJSON(t *testing.T) {
	secrets := []corev1.Secret{
		dockerConfigSecret("first", `{"auths": {
			"registry.example.com": {"username": "host", "password": "p1"},
			"registry.example.com/team": {"auth": "`+basicAuth("team", "p2")+`"},
			"https://index.docker.io/v1/": {"username": "hub", "password": "p3"},
			"*.wild.example.com": {"username": "wild", "password": "p4"},
			"registry.example.com:5000": {"username": "port", "password": "p5"},
			"tokens.example.com": {"identitytoken": "refresh"}
		}}`),
		dockerConfigSecret("second", `{"auths": {
			"registry.example.com": {"username": "second", "password": "p6"},
			"other.example.com": {"username": "other", "password": "p7"}
		}}`),
		{
			ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "legacy"},
			Type:       corev1.SecretTypeDockercfg,
			Data:       map[string][]byte{corev1.DockerConfigKey: []byte(`{"legacy.example.com": {"auth": "` + basicAuth("old", "p8") + `"}}`)},
		},
		{
			ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "opaque"},
			Type:       corev1.SecretTypeOpaque,
			Data:       map[string][]byte{"password": []byte("ignored")},
		},
	}
	kc, err := NewKeychain(secrets)
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		repo     string
		wantUser string
		wantOK   bool
	}{
		{repo: "registry.example.com/app", wantUser: "host", wantOK: true},
		{repo: "registry.example.com/team/app", wantUser: "team", wantOK: true},
		{repo: "registry.example.com/team", wantUser: "team", wantOK: true},
		{repo: "registry.example.com/teamwork/app", wantUser: "host", wantOK: true},
		{repo: "registry.example.com:5000/app", wantUser: "port", wantOK: true},
		{repo: "REGISTRY.example.com/app", wantUser: "host", wantOK: true},
		{repo: "nginx", wantUser: "hub", wantOK: true},
		{repo: "docker.io/library/nginx", wantUser: "hub", wantOK: true},
		{repo: "a.wild.example.com/app", wantUser: "wild", wantOK: true},
		{repo: "a.b.wild.example.com/app", wantOK: false},
		{repo: "wild.example.com/app", wantOK: false},
		{repo: "other.example.com/app", wantUser: "other", wantOK: true},
		{repo: "legacy.example.com/app", wantUser: "old", wantOK: true},
		{repo: "registry.example.com:6000/app", wantOK: false},
		{repo: "unknown.example.com/app", wantOK: false},
	}
	for _, tt := range tests {
		t.Run(tt.repo, func(t *testing.T) {
			repo, err := name.NewRepository(tt.repo)
			if err != nil {
				t.Fatal(err)
			}
			cfg, ok := kc.Lookup(repo)
			if ok != tt.wantOK || cfg.Username != tt.wantUser {
				t.Errorf("Lookup = %q, %v; want %q, %v", cfg.Username, ok, tt.wantUser, tt.wantOK)
			}
			auth, err := kc.Resolve(repo)
			if err != nil {
				t.Fatal(err)
			}
			if (auth == authn.Anonymous) == tt.wantOK {
				t.Errorf("Resolve anonymous = %v, want %v", auth == authn.Anonymous, !tt.wantOK)
			}
		})
	}
}

func TestKeychainDecodesAuthAndTokens(t *testing.T) {
	kc, err := NewKeychain([]corev1.Secret{dockerConfigSecret("s", `{"auths": {
		"basic.example.com": {"auth": "`+basicAuth("user", "pa:ss")+`"},
		"token.example.com": {"identitytoken": "refresh-token"}
	}}`)})
	if err != nil {
		t.Fatal(err)
	}
	repo, _ := name.NewRepository("basic.example.com/app")
	cfg, _ := kc.Lookup(repo)
	if cfg.Username != "user" || cfg.Password != "pa:ss" {
		t.Errorf("auth decoded to %q/%q", cfg.Username, cfg.Password)
	}
	repo, _ = name.NewRepository("token.example.com/app")
	if cfg, _ := kc.Lookup(repo); cfg.IdentityToken != "refresh-token" {
		t.Errorf("identity token = %q", cfg.IdentityToken)
	}
}

func TestKeychainRefusesMalformedSecrets(t *testing.T) {
	for _, s := range []corev1.Secret{
		dockerConfigSecret("bad-json", `{"auths": `),
		dockerConfigSecret("bad-auth", `{"auths": {"r.example.com": {"auth": "not base64!"}}}`),
	} {
		if _, err := NewKeychain([]corev1.Secret{s}); err == nil {
			t.Errorf("secret %s: no error", s.Name)
		}
	}
}

func TestFingerprintDependsOnlyOnTheCredential(t *testing.T) {
	a, _ := NewKeychain([]corev1.Secret{dockerConfigSecret("a", `{"auths": {"r.example.com": {"username": "u", "password": "p"}}}`)})
	same, _ := NewKeychain([]corev1.Secret{dockerConfigSecret("b", `{"auths": {"r.example.com": {"username": "u", "password": "p"}, "x.example.com": {"username": "x"}}}`)})
	other, _ := NewKeychain([]corev1.Secret{dockerConfigSecret("c", `{"auths": {"r.example.com": {"username": "u", "password": "q"}}}`)})
	repo, _ := name.NewRepository("r.example.com/app")
	elsewhere, _ := name.NewRepository("elsewhere.example.com/app")
	if a.Fingerprint(repo) != same.Fingerprint(repo) {
		t.Error("the same credential has two fingerprints")
	}
	if a.Fingerprint(repo) == other.Fingerprint(repo) {
		t.Error("two credentials share a fingerprint")
	}
	if got := a.Fingerprint(elsewhere); got != "anonymous" {
		t.Errorf("fingerprint without a credential = %q", got)
	}
	var none *Keychain
	if got := none.Fingerprint(repo); got != "anonymous" {
		t.Errorf("nil keychain fingerprint = %q", got)
	}
}
