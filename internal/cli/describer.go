package cli

import (
	"fmt"
	"io"
	"sort"
	"strings"
	"text/tabwriter"

	corev1 "k8s.io/api/core/v1"
)

// describer writes `kubectl describe`-style text: "Label:<tab>value" lines
// indented by level, aligned by a tabwriter.
type describer struct {
	tw *tabwriter.Writer
}

func newDescriber(w io.Writer) *describer {
	return &describer{tw: tabwriter.NewWriter(w, 0, 8, 2, ' ', 0)}
}

// line writes "label:<tab>value" at an indentation level (two spaces each).
func (d *describer) line(level int, label, value string) {
	fmt.Fprintf(d.tw, "%s%s:\t%s\n", strings.Repeat("  ", level), label, value)
}

// linef is line with a formatted value.
func (d *describer) linef(level int, label, format string, args ...any) {
	d.line(level, label, fmt.Sprintf(format, args...))
}

// heading writes "label:" alone, for a nested section.
func (d *describer) heading(level int, label string) {
	fmt.Fprintf(d.tw, "%s%s:\n", strings.Repeat("  ", level), label)
}

// text writes a line as it is, indented.
func (d *describer) text(level int, s string) {
	fmt.Fprintf(d.tw, "%s%s\n", strings.Repeat("  ", level), s)
}

func (d *describer) flush() error {
	return d.tw.Flush()
}

// keyValues writes a map as "k=v" pairs sorted by key, "<none>" when empty.
func keyValues(m map[string]string) string {
	if len(m) == 0 {
		return "<none>"
	}
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	pairs := make([]string, 0, len(keys))
	for _, k := range keys {
		pairs = append(pairs, k+"="+m[k])
	}
	return strings.Join(pairs, ",")
}

// podTemplate writes a pod template: labels, containers with their image,
// ports, command, resources, probes, environment and mounts, and volumes.
func (d *describer) podTemplate(level int, t *corev1.PodTemplateSpec) {
	d.heading(level, "Pod Template")
	if t == nil {
		d.text(level+1, "<none>")
		return
	}
	d.line(level+1, "Labels", keyValues(t.Labels))
	if len(t.Annotations) > 0 {
		d.line(level+1, "Annotations", keyValues(t.Annotations))
	}
	if sa := t.Spec.ServiceAccountName; sa != "" {
		d.line(level+1, "Service Account", sa)
	}
	if len(t.Spec.InitContainers) > 0 {
		d.heading(level+1, "Init Containers")
		for i := range t.Spec.InitContainers {
			d.container(level+2, &t.Spec.InitContainers[i])
		}
	}
	d.heading(level+1, "Containers")
	for i := range t.Spec.Containers {
		d.container(level+2, &t.Spec.Containers[i])
	}
	d.volumes(level+1, t.Spec.Volumes)
}

func (d *describer) container(level int, c *corev1.Container) {
	d.heading(level, c.Name)
	image := c.Image
	if strings.TrimSpace(image) == "" {
		image = "<none>"
	}
	d.line(level+1, "Image", image)
	d.line(level+1, "Port", ports(c.Ports))
	d.list(level+1, "Command", c.Command)
	d.list(level+1, "Args", c.Args)
	if len(c.Resources.Limits) > 0 {
		d.line(level+1, "Limits", resources(c.Resources.Limits))
	}
	if len(c.Resources.Requests) > 0 {
		d.line(level+1, "Requests", resources(c.Resources.Requests))
	}
	if c.LivenessProbe != nil {
		d.line(level+1, "Liveness", probe(c.LivenessProbe))
	}
	if c.ReadinessProbe != nil {
		d.line(level+1, "Readiness", probe(c.ReadinessProbe))
	}
	d.env(level+1, c.Env, c.EnvFrom)
	d.mounts(level+1, c.VolumeMounts)
}

// list writes a command or args, one item a line.
func (d *describer) list(level int, label string, items []string) {
	if len(items) == 0 {
		return
	}
	d.heading(level, label)
	for _, item := range items {
		d.text(level+1, strings.ReplaceAll(strings.TrimRight(item, "\n"), "\n", "\n"+strings.Repeat("  ", level+1)))
	}
}

func (d *describer) env(level int, env []corev1.EnvVar, from []corev1.EnvFromSource) {
	if len(env) == 0 && len(from) == 0 {
		d.line(level, "Environment", "<none>")
		return
	}
	d.heading(level, "Environment")
	for _, e := range env {
		d.line(level+1, e.Name, envValue(e))
	}
	for _, f := range from {
		switch {
		case f.ConfigMapRef != nil:
			d.text(level+1, fmt.Sprintf("%sall keys of config map %q", f.Prefix, f.ConfigMapRef.Name))
		case f.SecretRef != nil:
			d.text(level+1, fmt.Sprintf("%sall keys of secret %q", f.Prefix, f.SecretRef.Name))
		}
	}
}

// envValue writes a variable's value, or where it comes from; secrets are
// never read.
func envValue(e corev1.EnvVar) string {
	src := e.ValueFrom
	switch {
	case src == nil:
		return e.Value
	case src.ConfigMapKeyRef != nil:
		return fmt.Sprintf("<set to the key '%s' of config map '%s'>", src.ConfigMapKeyRef.Key, src.ConfigMapKeyRef.Name)
	case src.SecretKeyRef != nil:
		return fmt.Sprintf("<set to the key '%s' in secret '%s'>", src.SecretKeyRef.Key, src.SecretKeyRef.Name)
	case src.FieldRef != nil:
		return fmt.Sprintf("(%s)", src.FieldRef.FieldPath)
	case src.ResourceFieldRef != nil:
		return fmt.Sprintf("(%s)", src.ResourceFieldRef.Resource)
	}
	return "<set>"
}

func (d *describer) mounts(level int, mounts []corev1.VolumeMount) {
	if len(mounts) == 0 {
		d.line(level, "Mounts", "<none>")
		return
	}
	d.heading(level, "Mounts")
	for _, m := range mounts {
		mode := "rw"
		if m.ReadOnly {
			mode = "ro"
		}
		path := m.MountPath
		if m.SubPath != "" {
			path += " (path " + m.SubPath + ")"
		}
		d.text(level+1, fmt.Sprintf("%s from %s (%s)", path, m.Name, mode))
	}
}

func (d *describer) volumes(level int, volumes []corev1.Volume) {
	if len(volumes) == 0 {
		d.line(level, "Volumes", "<none>")
		return
	}
	d.heading(level, "Volumes")
	for _, v := range volumes {
		d.line(level+1, v.Name, volumeSource(v.VolumeSource))
	}
}

// volumeSource names the kinds of volume the CLI's users meet most; others
// are named only by their kind.
func volumeSource(s corev1.VolumeSource) string {
	switch {
	case s.EmptyDir != nil:
		return "EmptyDir"
	case s.ConfigMap != nil:
		return fmt.Sprintf("ConfigMap %s", s.ConfigMap.Name)
	case s.Secret != nil:
		return fmt.Sprintf("Secret %s", s.Secret.SecretName)
	case s.PersistentVolumeClaim != nil:
		return fmt.Sprintf("PersistentVolumeClaim %s", s.PersistentVolumeClaim.ClaimName)
	case s.HostPath != nil:
		return fmt.Sprintf("HostPath %s", s.HostPath.Path)
	case s.Projected != nil:
		return "Projected"
	case s.DownwardAPI != nil:
		return "DownwardAPI"
	}
	return "EmptyDir"
}

func ports(ps []corev1.ContainerPort) string {
	if len(ps) == 0 {
		return "<none>"
	}
	out := make([]string, 0, len(ps))
	for _, p := range ps {
		proto := p.Protocol
		if proto == "" {
			proto = corev1.ProtocolTCP
		}
		out = append(out, fmt.Sprintf("%d/%s", p.ContainerPort, proto))
	}
	return strings.Join(out, ", ")
}

func resources(list corev1.ResourceList) string {
	names := make([]string, 0, len(list))
	for name := range list {
		names = append(names, string(name))
	}
	sort.Strings(names)
	out := make([]string, 0, len(names))
	for _, name := range names {
		q := list[corev1.ResourceName(name)]
		out = append(out, name+"="+q.String())
	}
	return strings.Join(out, ",")
}

// probe writes a probe's handler and the settings it has; the API server
// does not default probes inside a DeploymentConfig's template.
func probe(p *corev1.Probe) string {
	var b strings.Builder
	switch h := p.ProbeHandler; {
	case h.Exec != nil:
		fmt.Fprintf(&b, "exec [%s]", strings.Join(h.Exec.Command, " "))
	case h.HTTPGet != nil:
		scheme := strings.ToLower(string(h.HTTPGet.Scheme))
		if scheme == "" {
			scheme = "http"
		}
		fmt.Fprintf(&b, "http-get %s://%s:%s%s", scheme, h.HTTPGet.Host, h.HTTPGet.Port.String(), h.HTTPGet.Path)
	case h.TCPSocket != nil:
		fmt.Fprintf(&b, "tcp-socket %s:%s", h.TCPSocket.Host, h.TCPSocket.Port.String())
	case h.GRPC != nil:
		fmt.Fprintf(&b, "grpc :%d", h.GRPC.Port)
	default:
		b.WriteString("<unknown>")
	}
	for _, s := range []struct {
		name  string
		value int32
		unit  string
	}{
		{"delay", p.InitialDelaySeconds, "s"}, {"timeout", p.TimeoutSeconds, "s"}, {"period", p.PeriodSeconds, "s"},
		{"#success", p.SuccessThreshold, ""}, {"#failure", p.FailureThreshold, ""},
	} {
		if s.value != 0 {
			fmt.Fprintf(&b, " %s=%d%s", s.name, s.value, s.unit)
		}
	}
	return b.String()
}
