package convert

import (
	"fmt"
	"strings"
	"unicode"
)

// ImageRegistry is where the images of converted ImageStreams live. It has
// two forms:
//
//   - HOST (no slash), e.g. registry.example.com:5000: the ImageStreamTag
//     name:tag of namespace ns becomes HOST/ns/name:tag. This is the layout
//     of OpenShift's integrated registry (one repository per namespace and
//     stream), so a registry that mirrors it needs no other setting. The
//     namespace is the reference's own, else the DeploymentConfig's
//     metadata.namespace; without either the reference is not mapped.
//   - HOST/PATH, e.g. registry.example.com/team: every ImageStreamTag
//     name:tag becomes HOST/PATH/name:tag, whatever its namespace, for
//     images mirrored into one place.
type ImageRegistry struct {
	host string
	path string
}

// ParseImageRegistry parses the value of --image-registry.
func ParseImageRegistry(value string) (*ImageRegistry, error) {
	v := strings.TrimSpace(value)
	switch {
	case v == "":
		return nil, fmt.Errorf("expected HOST or HOST/PATH, e.g. registry.example.com/team, got an empty value")
	case strings.Contains(v, "://"):
		return nil, fmt.Errorf("expected HOST or HOST/PATH without a scheme, e.g. registry.example.com/team, got %q", value)
	case strings.ContainsAny(v, "@ \t") || strings.HasSuffix(v, "/") || strings.Contains(v, "//") ||
		strings.ContainsFunc(v, unicode.IsControl):
		return nil, fmt.Errorf("expected HOST or HOST/PATH, e.g. registry.example.com/team, got %q", value)
	}
	host, path, _ := strings.Cut(v, "/")
	if strings.Contains(path, ":") {
		return nil, fmt.Errorf("expected HOST or HOST/PATH without a tag, e.g. registry.example.com/team, got %q", value)
	}
	return &ImageRegistry{host: host, path: path}, nil
}

// Reference returns the registry reference of the ImageStreamTag name:tag
// (or ImageStreamImage name@digest) in namespace, and false when r is nil
// or the namespace it needs is unknown. A name without a tag means latest.
func (r *ImageRegistry) Reference(name, namespace string) (string, bool) {
	if r == nil || name == "" {
		return "", false
	}
	if !strings.ContainsAny(name, ":@") {
		name += ":latest"
	}
	if r.path != "" {
		return r.host + "/" + r.path + "/" + name, true
	}
	if namespace == "" {
		return "", false
	}
	return r.host + "/" + namespace + "/" + name, true
}

// String returns the registry as given to ParseImageRegistry.
func (r *ImageRegistry) String() string {
	if r.path == "" {
		return r.host
	}
	return r.host + "/" + r.path
}
