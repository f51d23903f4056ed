// Package registry talks to container registries for deployconfig: it
// resolves an image tag to the digest it points at, copies an image to
// another tag, and authenticates with the credentials of Kubernetes image
// pull secrets, the way the kubelet would when it pulls the image.
package registry

import (
	"cmp"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/url"
	"path"
	"slices"
	"strings"

	"github.com/google/go-containerregistry/pkg/authn"
	corev1 "k8s.io/api/core/v1"
)

// dockerHub is how go-containerregistry names Docker Hub's registry; the
// other names people write in docker config files mean the same registry.
const dockerHub = "index.docker.io"

var _ authn.Keychain = (*Keychain)(nil)

// Keychain holds the registry credentials of a set of image pull secrets and
// hands out the one that applies to a repository. It is immutable once
// built, so one Keychain may serve concurrent lookups.
type Keychain struct {
	// credentials are ordered from the most to the least specific match.
	credentials []credential
}

// credential is one entry of a docker config file: a registry host (which
// may hold `*` wildcards per DNS label), an optional port and an optional
// repository path prefix.
type credential struct {
	host   string
	port   string
	path   string
	config authn.AuthConfig
	// order is the entry's position among all secrets, so that the first
	// secret wins among equally specific entries, as with the kubelet.
	order int
}

// dockerConfigJSON is the content of a kubernetes.io/dockerconfigjson
// secret; a kubernetes.io/dockercfg secret holds only the auths map.
type dockerConfigJSON struct {
	Auths map[string]authn.AuthConfig `json:"auths"`
}

// NewKeychain returns the keychain of the given secrets, earlier secrets
// winning over later ones. Secrets of types other than
// kubernetes.io/dockerconfigjson and kubernetes.io/dockercfg are ignored,
// as the kubelet ignores them.
func NewKeychain(secrets []corev1.Secret) (*Keychain, error) {
	kc := &Keychain{}
	for i := range secrets {
		auths, err := secretAuths(&secrets[i])
		if err != nil {
			return nil, err
		}
		// Map order is random; sort the keys so that the result does not depend on it.
		keys := make([]string, 0, len(auths))
		for k := range auths {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		for _, key := range keys {
			cred, ok := parseCredentialKey(key)
			if !ok {
				continue
			}
			cred.config = auths[key]
			cred.order = len(kc.credentials)
			kc.credentials = append(kc.credentials, cred)
		}
	}
	slices.SortStableFunc(kc.credentials, compareSpecificity)
	return kc, nil
}

// secretAuths decodes the registry entries of a pull secret.
func secretAuths(s *corev1.Secret) (map[string]authn.AuthConfig, error) {
	switch s.Type {
	case corev1.SecretTypeDockerConfigJson:
		var cfg dockerConfigJSON
		if err := json.Unmarshal(s.Data[corev1.DockerConfigJsonKey], &cfg); err != nil {
			return nil, fmt.Errorf("decode secret %s/%s: %w", s.Namespace, s.Name, err)
		}
		return cfg.Auths, nil
	case corev1.SecretTypeDockercfg:
		auths := map[string]authn.AuthConfig{}
		if err := json.Unmarshal(s.Data[corev1.DockerConfigKey], &auths); err != nil {
			return nil, fmt.Errorf("decode secret %s/%s: %w", s.Namespace, s.Name, err)
		}
		return auths, nil
	default:
		return nil, nil
	}
}

// parseCredentialKey splits a docker config key such as
// "https://index.docker.io/v1/", "registry.example.com:5000" or
// "*.example.com/team" into host, port and path.
func parseCredentialKey(key string) (credential, bool) {
	key = strings.TrimSpace(key)
	if key == "" {
		return credential{}, false
	}
	if !strings.Contains(key, "://") {
		key = "https://" + key
	}
	u, err := url.Parse(key)
	if err != nil || u.Host == "" {
		return credential{}, false
	}
	p := strings.Trim(u.Path, "/")
	// Docker writes the API version into keys; it names no repository.
	if p == "v1" || p == "v2" {
		p = ""
	}
	for _, prefix := range []string{"v1/", "v2/"} {
		p = strings.TrimPrefix(p, prefix)
	}
	return credential{host: normalizeHost(u.Hostname()), port: u.Port(), path: p}, true
}

// normalizeHost lower-cases a host and gives Docker Hub its one name.
func normalizeHost(host string) string {
	host = strings.ToLower(host)
	switch host {
	case "docker.io", "registry-1.docker.io", "registry.hub.docker.com":
		return dockerHub
	}
	return host
}

// compareSpecificity orders credentials: longer repository paths first,
// exact hosts before wildcards, then by the secrets' order.
func compareSpecificity(a, b credential) int {
	if c := cmp.Compare(len(b.path), len(a.path)); c != 0 {
		return c
	}
	aWild, bWild := strings.Contains(a.host, "*"), strings.Contains(b.host, "*")
	if aWild != bWild {
		if aWild {
			return 1
		}
		return -1
	}
	return cmp.Compare(a.order, b.order)
}

// Resolve implements authn.Keychain: the first matching credential, or
// anonymous access when none matches.
func (k *Keychain) Resolve(target authn.Resource) (authn.Authenticator, error) {
	cfg, ok := k.Lookup(target)
	if !ok {
		return authn.Anonymous, nil
	}
	return authn.FromConfig(cfg), nil
}

// Lookup returns the credential that applies to a registry or repository.
func (k *Keychain) Lookup(target authn.Resource) (authn.AuthConfig, bool) {
	if k == nil {
		return authn.AuthConfig{}, false
	}
	registry := target.RegistryStr()
	repo := strings.TrimPrefix(strings.TrimPrefix(target.String(), registry), "/")
	host, port := splitHostPort(registry)
	host = normalizeHost(host)
	for _, c := range k.credentials {
		if c.port == port && hostMatches(c.host, host) && pathMatches(c.path, repo) {
			return c.config, true
		}
	}
	return authn.AuthConfig{}, false
}

// Fingerprint identifies the credential that applies to a target without
// revealing it, so that lookups made with the same credential can be
// shared. Anonymous access has the fingerprint "anonymous".
func (k *Keychain) Fingerprint(target authn.Resource) string {
	cfg, ok := k.Lookup(target)
	if !ok {
		return "anonymous"
	}
	// Marshal cannot fail for a struct of strings; the fields are spelled
	// out so that the fingerprint never depends on AuthConfig's encoding.
	sum := sha256.Sum256([]byte(strings.Join([]string{cfg.Username, cfg.Password, cfg.Auth, cfg.IdentityToken, cfg.RegistryToken}, "\x00")))
	return hex.EncodeToString(sum[:12])
}

func splitHostPort(registry string) (string, string) {
	u, err := url.Parse("//" + registry)
	if err != nil {
		return registry, ""
	}
	return u.Hostname(), u.Port()
}

// hostMatches matches a host against a pattern whose labels may be globs,
// label by label, as the kubelet does: "*.example.com" matches
// "registry.example.com" but not "example.com" or "a.b.example.com".
func hostMatches(pattern, host string) bool {
	if !strings.Contains(pattern, "*") {
		return pattern == host
	}
	pl, hl := strings.Split(pattern, "."), strings.Split(host, ".")
	if len(pl) != len(hl) {
		return false
	}
	for i := range pl {
		if ok, err := path.Match(pl[i], hl[i]); err != nil || !ok {
			return false
		}
	}
	return true
}

// pathMatches reports whether a repository lies under a credential's path
// prefix, on a path-segment boundary.
func pathMatches(prefix, repo string) bool {
	return prefix == "" || repo == prefix || strings.HasPrefix(repo, prefix+"/")
}
