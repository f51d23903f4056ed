package realnode

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/wait"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/client-go/kubernetes"
	"sigs.k8s.io/yaml"

	"github.com/deployconfig/deployconfig/internal/dev/imagebuild"
)

// Where config/default puts dc-controller.
const (
	ControllerNamespace  = "deployconfig-system"
	ControllerDeployment = "dc-controller"
)

// Controller says how to install dc-controller from config/default.
type Controller struct {
	// Root is the deployconfig checkout (config/default is kustomized
	// from it).
	Root string
	// Image and DeployerImage replace the images config/default names;
	// when empty, the project's images in the cluster's registry.
	Image, DeployerImage string
	// Args are added to the controller's arguments.
	Args []string
	// Timeout bounds waiting for every replica to be ready (2 minutes when
	// zero).
	Timeout time.Duration
}

// InstallController applies config/default as a user would (kubectl
// kustomize, then a server-side apply), with the images and arguments of
// ctl, and waits until every replica of the controller is ready.
func (c *Cluster) InstallController(ctx context.Context, bin string, ctl Controller) error {
	if ctl.Image == "" {
		ctl.Image = c.Image(imagebuild.ControllerImageName)
	}
	if ctl.DeployerImage == "" {
		ctl.DeployerImage = c.Image(imagebuild.DeployerImageName)
	}
	manifest, err := c.controllerManifest(ctx, bin, ctl)
	if err != nil {
		return err
	}
	path := c.path("dc-controller.yaml")
	if err := os.WriteFile(path, manifest, 0o644); err != nil {
		return fmt.Errorf("install dc-controller: %w", err)
	}
	if err := c.Kubectl(ctx, bin, "apply", "--server-side", "-f", path); err != nil {
		return fmt.Errorf("install dc-controller: %w", err)
	}
	return c.WaitControllerReady(ctx, ctl.Timeout)
}

// RemoveController deletes what InstallController applied, but for the
// CRDs (deleting them would delete every DeploymentConfig) and the
// namespace, and waits until it is gone, pods and all: another installation with the
// same names, the Helm chart's, can then take its place. InstallController
// brings it back.
func (c *Cluster) RemoveController(ctx context.Context, bin string) error {
	manifest, err := os.ReadFile(c.path("dc-controller.yaml"))
	if err != nil {
		return fmt.Errorf("remove dc-controller: %w", err)
	}
	var docs [][]byte
	reader := utilyaml.NewYAMLReader(bufioReader(manifest))
	for {
		doc, err := reader.Read()
		if err != nil {
			break
		}
		var meta metav1.TypeMeta
		if err := yaml.Unmarshal(doc, &meta); err != nil {
			return fmt.Errorf("remove dc-controller: %w", err)
		}
		if meta.Kind != "" && meta.Kind != "CustomResourceDefinition" && meta.Kind != "Namespace" {
			docs = append(docs, doc)
		}
	}
	path := c.path("dc-controller-removed.yaml")
	if err := os.WriteFile(path, bytes.Join(docs, []byte("\n---\n")), 0o644); err != nil {
		return fmt.Errorf("remove dc-controller: %w", err)
	}
	if err := c.Kubectl(ctx, bin, "delete", "--cascade=foreground", "--wait", "--ignore-not-found", "-f", path); err != nil {
		return fmt.Errorf("remove dc-controller: %w", err)
	}
	return nil
}

// Kubectl runs kubectl against the cluster as its administrator.
func (c *Cluster) Kubectl(ctx context.Context, bin string, args ...string) error {
	return run(ctx, append([]string{filepath.Join(bin, "kubectl"), "--kubeconfig", c.Kubeconfig}, args...)...)
}

// controllerManifest is config/default with ctl's images and arguments.
func (c *Cluster) controllerManifest(ctx context.Context, bin string, ctl Controller) ([]byte, error) {
	cmd := exec.CommandContext(ctx, filepath.Join(bin, "kubectl"), "kustomize", filepath.Join(ctl.Root, "config", "default"))
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("kubectl kustomize config/default: %v: %s", err, stderr.String())
	}
	reader := utilyaml.NewYAMLReader(bufioReader(out))
	var docs [][]byte
	for {
		doc, err := reader.Read()
		if err != nil {
			break
		}
		if len(bytes.TrimSpace(doc)) == 0 {
			continue
		}
		obj := &unstructured.Unstructured{}
		if err := yaml.Unmarshal(doc, &obj.Object); err != nil {
			return nil, fmt.Errorf("config/default: %w", err)
		}
		if obj.GetKind() == "Deployment" && obj.GetName() == ControllerDeployment {
			if doc, err = withImages(obj, ctl); err != nil {
				return nil, err
			}
		}
		docs = append(docs, doc)
	}
	return bytes.Join(docs, []byte("\n---\n")), nil
}

// withImages sets the controller container's image, the deployer image
// argument and ctl.Args on config/default's Deployment.
func withImages(obj *unstructured.Unstructured, ctl Controller) ([]byte, error) {
	d := &appsv1.Deployment{}
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(obj.Object, d); err != nil {
		return nil, fmt.Errorf("config/default's Deployment: %w", err)
	}
	if len(d.Spec.Template.Spec.Containers) != 1 {
		return nil, fmt.Errorf("config/default's Deployment has %d containers, want 1", len(d.Spec.Template.Spec.Containers))
	}
	container := &d.Spec.Template.Spec.Containers[0]
	container.Image = ctl.Image
	for i, arg := range container.Args {
		if strings.HasPrefix(arg, "--deployer-image=") {
			container.Args[i] = "--deployer-image=" + ctl.DeployerImage
		}
	}
	container.Args = append(container.Args, ctl.Args...)
	return yaml.Marshal(d)
}

// WaitControllerReady waits until every replica of dc-controller is
// ready and up to date.
func (c *Cluster) WaitControllerReady(ctx context.Context, timeout time.Duration) error {
	if timeout == 0 {
		timeout = 2 * time.Minute
	}
	cfg, err := c.RESTConfig()
	if err != nil {
		return err
	}
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return err
	}
	var last string
	err = wait.PollUntilContextTimeout(ctx, 500*time.Millisecond, timeout, true, func(ctx context.Context) (bool, error) {
		d, err := cs.AppsV1().Deployments(ControllerNamespace).Get(ctx, ControllerDeployment, metav1.GetOptions{})
		if err != nil {
			last = err.Error()
			return false, nil
		}
		want := int32(1)
		if d.Spec.Replicas != nil {
			want = *d.Spec.Replicas
		}
		s := d.Status
		last = fmt.Sprintf("%d/%d ready, %d updated, observed generation %d of %d", s.ReadyReplicas, want, s.UpdatedReplicas, s.ObservedGeneration, d.Generation)
		return s.ObservedGeneration >= d.Generation && s.ReadyReplicas == want && s.UpdatedReplicas == want && s.Replicas == want, nil
	})
	if err != nil {
		return fmt.Errorf("waiting for dc-controller to be ready (%s): %w", last, err)
	}
	return nil
}

func bufioReader(b []byte) *bufio.Reader { return bufio.NewReader(bytes.NewReader(b)) }
