package podruntime

import (
	"errors"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"strings"

	corev1 "k8s.io/api/core/v1"
)

// Names under which the deployer is called: dc-deploy, and OpenShift's name
// for it, which old hook and custom-strategy scripts use.
const (
	DeployerCommand          = "dc-deploy"
	OpenShiftDeployerCommand = "openshift-deploy"
)

// runMode is how the runtime runs a container.
type runMode int

const (
	// modeInProcess runs the deployer's code in the runtime's process.
	modeInProcess runMode = iota + 1
	// modeProcess runs the container's command as a local process.
	modeProcess
)

// plan is what the runtime runs for a pod's container.
type plan struct {
	mode runMode
	// argv is the command and its arguments as the pod gives them, before
	// $(VAR) expansion; for modeInProcess, only the deployer's arguments.
	argv []string
}

// errNotRunnable explains why a container cannot run here; the container
// then fails to start, as one whose image cannot be run does.
var errNotRunnable = errors.New("cannot run this container locally")

// planContainer decides how to run a pod's container. deployerImages are
// the images whose entrypoint is dc-deploy: their container runs the
// deployer in-process when it gives no command.
func planContainer(pod *corev1.Pod, deployerImages []string) (plan, error) {
	if err := checkSupported(pod); err != nil {
		return plan{}, err
	}
	c := &pod.Spec.Containers[0]
	if len(c.Command) == 0 {
		if isDeployerImage(c.Image, deployerImages) {
			return plan{mode: modeInProcess, argv: c.Args}, nil
		}
		return plan{}, fmt.Errorf("%w: image %s would run its own entrypoint, which the local pod runtime cannot know: give the container a command", errNotRunnable, c.Image)
	}
	if isDeployerCommand(c.Command[0]) {
		argv := append(append([]string{}, c.Command[1:]...), c.Args...)
		return plan{mode: modeInProcess, argv: argv}, nil
	}
	argv := append(append([]string{}, c.Command...), c.Args...)
	return plan{mode: modeProcess, argv: argv}, nil
}

// checkSupported refuses what the runtime does not run: more than one
// container, and init containers. Deployer and hook pods have neither.
func checkSupported(pod *corev1.Pod) error {
	switch {
	case len(pod.Spec.Containers) != 1:
		return fmt.Errorf("%w: the local pod runtime runs pods of one container; this one has %d", errNotRunnable, len(pod.Spec.Containers))
	case len(pod.Spec.InitContainers) > 0:
		return fmt.Errorf("%w: the local pod runtime does not run init containers", errNotRunnable)
	}
	return nil
}

// isDeployerCommand reports whether a command runs the deployer, by its
// base name (also /usr/bin/dc-deploy).
func isDeployerCommand(command string) bool {
	base := path.Base(command)
	return base == DeployerCommand || base == OpenShiftDeployerCommand
}

// isDeployerImage reports whether image is one of the deployer images, by
// repository: any tag or digest of it counts.
func isDeployerImage(image string, deployerImages []string) bool {
	repo := imageRepository(image)
	for _, d := range deployerImages {
		if imageRepository(d) == repo {
			return true
		}
	}
	return false
}

// imageRepository strips an image reference's tag and digest:
// "registry:5000/app:1@sha256:..." is "registry:5000/app".
func imageRepository(image string) string {
	image, _, _ = strings.Cut(image, "@")
	slash := strings.LastIndexByte(image, '/')
	if colon := strings.LastIndexByte(image, ':'); colon > slash {
		image = image[:colon]
	}
	return image
}

// lookPath finds a command the way a shell does with the PATH the process
// gets (not the runtime's own PATH, which os/exec would search): a name with
// a slash is used as it is.
func lookPath(name, pathList string) (string, error) {
	if strings.Contains(name, "/") {
		if err := executable(name); err != nil {
			return "", fmt.Errorf("exec: %q: %w", name, err)
		}
		return name, nil
	}
	for _, dir := range filepath.SplitList(pathList) {
		if dir == "" {
			continue
		}
		candidate := filepath.Join(dir, name)
		if executable(candidate) == nil {
			return candidate, nil
		}
	}
	return "", fmt.Errorf("exec: %q: executable file not found in $PATH", name)
}

// executable checks that path is a file someone may execute.
func executable(path string) error {
	info, err := os.Stat(path)
	switch {
	case err != nil:
		return err
	case info.IsDir():
		return errors.New("is a directory")
	case info.Mode()&0o111 == 0:
		return errors.New("permission denied")
	}
	return nil
}

// searchPath is the PATH of local processes: the runtime's own directories
// (dc-deploy, openshift-deploy, kubectl) first, then the pod's PATH when it
// sets one, else the runtime's.
func searchPath(ownDirs []string, podPath, hostPath string) string {
	rest := podPath
	if rest == "" {
		rest = hostPath
	}
	parts := make([]string, 0, len(ownDirs)+1)
	for _, d := range ownDirs {
		if d != "" {
			parts = append(parts, d)
		}
	}
	if rest != "" {
		parts = append(parts, rest)
	}
	return strings.Join(parts, string(filepath.ListSeparator))
}
