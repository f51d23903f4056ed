package podruntime

import (
	"context"
	"fmt"
	"math"
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/util/validation"
)

// objectSource reads the ConfigMaps and Secrets that env and envFrom refer
// to.
type objectSource interface {
	configMap(ctx context.Context, namespace, name string) (*corev1.ConfigMap, error)
	secret(ctx context.Context, namespace, name string) (*corev1.Secret, error)
}

// envVar is one variable of a container's environment.
type envVar struct {
	name, value string
}

// environment is an ordered set of variables: setting a variable again
// replaces its value in place, as the kubelet's map does, while keeping
// the order stable for tests and for the process.
type environment struct {
	vars  []envVar
	index map[string]int
}

func (e *environment) set(name, value string) {
	if e.index == nil {
		e.index = map[string]int{}
	}
	if i, ok := e.index[name]; ok {
		e.vars[i].value = value
		return
	}
	e.index[name] = len(e.vars)
	e.vars = append(e.vars, envVar{name: name, value: value})
}

func (e *environment) lookup(name string) (string, bool) {
	i, ok := e.index[name]
	if !ok {
		return "", false
	}
	return e.vars[i].value, true
}

// strings returns the variables as NAME=VALUE, for os/exec.
func (e *environment) strings() []string {
	out := make([]string, len(e.vars))
	for i, v := range e.vars {
		out[i] = v.name + "=" + v.value
	}
	return out
}

// podFacts are the values of a pod that fieldRef can read but that the pod
// object may not hold yet, such as the host IP the runtime is about to
// write.
type podFacts struct {
	hostIP string
	podIP  string
}

// containerEnv builds a container's environment as the kubelet does:
// envFrom sources in order, then env entries in order (a later one wins),
// with $(VAR) references to earlier variables expanded in env values. A
// value it cannot resolve (a missing ConfigMap, key or field that is not
// optional) is left out with a note, instead of keeping the container from
// starting as a kubelet would: the playground should rather run the hook
// and say so.
func containerEnv(ctx context.Context, pod *corev1.Pod, c *corev1.Container, src objectSource, facts podFacts) (*environment, []string) {
	env := &environment{}
	var notes []string
	for _, from := range c.EnvFrom {
		notes = append(notes, addEnvFrom(ctx, env, pod.Namespace, from, src)...)
	}
	for _, v := range c.Env {
		if v.ValueFrom == nil {
			env.set(v.Name, expand(v.Value, env.lookup))
			continue
		}
		value, ok, err := resolveValueFrom(ctx, pod, c, v.ValueFrom, src, facts)
		switch {
		case err != nil:
			notes = append(notes, fmt.Sprintf("env %s left out: %v", v.Name, err))
		case ok:
			env.set(v.Name, value)
		}
	}
	return env, notes
}

// addEnvFrom adds the variables of one envFrom source.
func addEnvFrom(ctx context.Context, env *environment, namespace string, from corev1.EnvFromSource, src objectSource) []string {
	data, what, optional, err := envFromData(ctx, namespace, from, src)
	if err != nil {
		if apierrors.IsNotFound(err) && optional {
			return nil
		}
		return []string{fmt.Sprintf("envFrom %s left out: %v", what, err)}
	}
	var notes []string
	for _, key := range sortedKeys(data) {
		name := from.Prefix + key
		if errs := validation.IsEnvVarName(name); len(errs) > 0 {
			notes = append(notes, fmt.Sprintf("envFrom %s: key %q skipped: not a valid variable name", what, key))
			continue
		}
		env.set(name, data[key])
	}
	return notes
}

// envFromData reads the data of an envFrom source.
func envFromData(ctx context.Context, namespace string, from corev1.EnvFromSource, src objectSource) (data map[string]string, what string, optional bool, err error) {
	switch {
	case from.ConfigMapRef != nil:
		ref := from.ConfigMapRef
		what = "configmap " + ref.Name
		cm, err := src.configMap(ctx, namespace, ref.Name)
		if err != nil {
			return nil, what, isTrue(ref.Optional), err
		}
		return cm.Data, what, false, nil
	case from.SecretRef != nil:
		ref := from.SecretRef
		what = "secret " + ref.Name
		s, err := src.secret(ctx, namespace, ref.Name)
		if err != nil {
			return nil, what, isTrue(ref.Optional), err
		}
		return secretStrings(s), what, false, nil
	}
	return nil, "source", false, fmt.Errorf("neither a configMapRef nor a secretRef")
}

// resolveValueFrom resolves one env valueFrom. ok is false, without an
// error, when an optional source is missing: the variable is then unset, as
// the kubelet leaves it.
func resolveValueFrom(ctx context.Context, pod *corev1.Pod, c *corev1.Container, from *corev1.EnvVarSource, src objectSource, facts podFacts) (value string, ok bool, err error) {
	switch {
	case from.ConfigMapKeyRef != nil:
		ref := from.ConfigMapKeyRef
		cm, err := src.configMap(ctx, pod.Namespace, ref.Name)
		if err != nil {
			return optionalMissing(err, ref.Optional)
		}
		return keyOf(cm.Data, ref.Key, "configmap "+ref.Name, ref.Optional)
	case from.SecretKeyRef != nil:
		ref := from.SecretKeyRef
		s, err := src.secret(ctx, pod.Namespace, ref.Name)
		if err != nil {
			return optionalMissing(err, ref.Optional)
		}
		return keyOf(secretStrings(s), ref.Key, "secret "+ref.Name, ref.Optional)
	case from.FieldRef != nil:
		v, err := podField(pod, from.FieldRef.FieldPath, facts)
		return v, err == nil, err
	case from.ResourceFieldRef != nil:
		v, err := containerResource(c, from.ResourceFieldRef)
		return v, err == nil, err
	}
	return "", false, fmt.Errorf("unsupported valueFrom")
}

// optionalMissing turns a failed lookup into "unset" when the source is
// optional and missing, and into an error otherwise.
func optionalMissing(err error, optional *bool) (string, bool, error) {
	if apierrors.IsNotFound(err) && isTrue(optional) {
		return "", false, nil
	}
	return "", false, err
}

// keyOf reads one key of a ConfigMap's or Secret's data.
func keyOf(data map[string]string, key, what string, optional *bool) (string, bool, error) {
	if v, ok := data[key]; ok {
		return v, true, nil
	}
	if isTrue(optional) {
		return "", false, nil
	}
	return "", false, fmt.Errorf("%s has no key %q", what, key)
}

// secretStrings returns a Secret's data as strings.
func secretStrings(s *corev1.Secret) map[string]string {
	out := make(map[string]string, len(s.Data)+len(s.StringData))
	for k, v := range s.Data {
		out[k] = string(v)
	}
	for k, v := range s.StringData {
		out[k] = v
	}
	return out
}

// podField resolves a fieldRef path, the ones the downward API offers.
func podField(pod *corev1.Pod, path string, facts podFacts) (string, error) {
	if key, ok := subscript(path, "metadata.labels"); ok {
		return pod.Labels[key], nil
	}
	if key, ok := subscript(path, "metadata.annotations"); ok {
		return pod.Annotations[key], nil
	}
	switch path {
	case "metadata.name":
		return pod.Name, nil
	case "metadata.namespace":
		return pod.Namespace, nil
	case "metadata.uid":
		return string(pod.UID), nil
	case "spec.nodeName":
		return pod.Spec.NodeName, nil
	case "spec.serviceAccountName":
		return pod.Spec.ServiceAccountName, nil
	case "status.hostIP", "status.hostIPs":
		return facts.hostIP, nil
	case "status.podIP", "status.podIPs":
		return facts.podIP, nil
	}
	return "", fmt.Errorf("unsupported fieldRef %q", path)
}

// subscript parses "prefix['key']" and returns key.
func subscript(path, prefix string) (string, bool) {
	rest, ok := strings.CutPrefix(path, prefix+"['")
	if !ok {
		return "", false
	}
	return strings.CutSuffix(rest, "']")
}

// containerResource resolves a resourceFieldRef from the container's own
// limits and requests. The kubelet falls back to the node's allocatable
// when there is no limit; the fake node's huge capacity would mislead a
// script, so such a variable is left out instead.
func containerResource(c *corev1.Container, ref *corev1.ResourceFieldSelector) (string, error) {
	kind, name, ok := strings.Cut(ref.Resource, ".")
	if !ok || (kind != "limits" && kind != "requests") {
		return "", fmt.Errorf("unsupported resourceFieldRef %q", ref.Resource)
	}
	list := c.Resources.Limits
	if kind == "requests" {
		list = c.Resources.Requests
	}
	q, ok := list[corev1.ResourceName(name)]
	if !ok {
		return "", fmt.Errorf("the container sets no %s", ref.Resource)
	}
	return divideQuantity(q, ref.Divisor), nil
}

// divideQuantity divides q by divisor (1 when zero) and rounds up, as the
// downward API does.
func divideQuantity(q, divisor resource.Quantity) string {
	if divisor.IsZero() {
		divisor = resource.MustParse("1")
	}
	v := math.Ceil(float64(q.MilliValue()) / float64(divisor.MilliValue()))
	return fmt.Sprintf("%d", int64(v))
}

// expand replaces $(VAR) references to variables lookup knows, and $$( with
// $(, the way the kubelet expands env values, commands and arguments.
// Unknown references are kept as they are.
func expand(s string, lookup func(string) (string, bool)) string {
	if !strings.Contains(s, "$") {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] != '$' || i+1 >= len(s) {
			b.WriteByte(s[i])
			continue
		}
		switch s[i+1] {
		case '$':
			b.WriteByte('$')
			i++
		case '(':
			end := strings.IndexByte(s[i+2:], ')')
			if end < 0 {
				b.WriteString(s[i:])
				return b.String()
			}
			name := s[i+2 : i+2+end]
			if v, ok := lookup(name); ok {
				b.WriteString(v)
			} else {
				b.WriteString(s[i : i+3+end])
			}
			i += 2 + end
		default:
			b.WriteByte('$')
		}
	}
	return b.String()
}

func isTrue(b *bool) bool { return b != nil && *b }

func sortedKeys(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// hostEnv is what the runtime adds to a local process's environment.
type hostEnv struct {
	// ownDirs come first on the PATH: dc-deploy, openshift-deploy, kubectl.
	ownDirs []string
	// hostPath is the runtime's own PATH, for pods that set none.
	hostPath string
	// home is HOME unless the pod sets it.
	home string
	// hostname is HOSTNAME unless the pod sets it.
	hostname string
	// kubeconfig is KUBECONFIG, always: the pod cannot know the cluster's.
	kubeconfig string
}

// processEnvironment is a local process's environment: the pod's
// variables, HOSTNAME and HOME unless the pod sets them, KUBECONFIG, and a
// PATH that starts with the runtime's directories. Nothing else of the
// runtime's environment leaks in, as nothing of the node's does into a
// container.
func processEnvironment(podEnv *environment, host hostEnv) []string {
	env := &environment{}
	for _, v := range podEnv.vars {
		env.set(v.name, v.value)
	}
	if _, ok := env.lookup("HOSTNAME"); !ok {
		env.set("HOSTNAME", host.hostname)
	}
	if _, ok := env.lookup("HOME"); !ok {
		env.set("HOME", host.home)
	}
	podPath, _ := env.lookup("PATH")
	env.set("PATH", searchPath(host.ownDirs, podPath, host.hostPath))
	env.set("KUBECONFIG", host.kubeconfig)
	return env.strings()
}

// lookupIn returns the value of a variable in a NAME=VALUE list.
func lookupIn(env []string, name string) string {
	for _, kv := range env {
		if k, v, ok := strings.Cut(kv, "="); ok && k == name {
			return v
		}
	}
	return ""
}
