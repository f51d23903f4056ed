package podruntime

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
)

// logsResource is kwok's Logs resource: it tells kwok, which answers the
// API server's pods/log requests for its fake nodes, which file holds a
// pod's container log.
var logsResource = schema.GroupVersionResource{Group: "kwok.x-k8s.io", Version: "v1alpha1", Resource: "logs"}

const (
	// logsServedTimeout bounds how long kwok gets to pick up a new Logs
	// object before the container starts anyway.
	logsServedTimeout = 10 * time.Second
	// logsServedPoll is how often the runtime asks whether it has.
	logsServedPoll = 50 * time.Millisecond
	// logsTouchEvery is how many unanswered requests (a second's worth)
	// pass before the Logs object is touched.
	logsTouchEvery = 20
	// logsTouchedAnnotation counts the touches of a Logs object.
	logsTouchedAnnotation = "podruntime.deployconfig.io/touched"
)

// podDir is where the runtime keeps one pod's files, named like the
// kubelet's /var/log/pods entries so that a pod recreated with the same
// name never meets its predecessor's files:
//
//	DIR/NAMESPACE_NAME_UID/
//	  CONTAINER.log           -> CONTAINER/N.log (the current instance)
//	  CONTAINER.previous.log  -> CONTAINER/N-1.log
//	  CONTAINER/N.log         the log of the N-th instance (CRI format)
//	  CONTAINER/N.pid         its process, while it runs
//	  home/                   HOME and working directory of processes
//
// kwok resolves the links whenever a log is requested, so the Logs object
// never changes, and a `kubectl logs -f` of an earlier instance is never
// switched to the next one's file.
type podDir string

func newPodDir(root string, pod *corev1.Pod) podDir {
	return podDir(filepath.Join(root, fmt.Sprintf("%s_%s_%s", pod.Namespace, pod.Name, pod.UID)))
}

func (d podDir) currentLog(container string) string {
	return filepath.Join(string(d), container+".log")
}

func (d podDir) previousLog(container string) string {
	return filepath.Join(string(d), container+".previous.log")
}

func (d podDir) instanceLog(container string, n int32) string {
	return filepath.Join(string(d), container, strconv.Itoa(int(n))+".log")
}

func (d podDir) instancePID(container string, n int32) string {
	return filepath.Join(string(d), container, strconv.Itoa(int(n))+".pid")
}

func (d podDir) home() string {
	return filepath.Join(string(d), "home")
}

// openInstanceLog opens (appending: the same instance may be opened again
// after a restart of the runtime) the log of instance n and points the
// current and previous links at it and its predecessor.
func (d podDir) openInstanceLog(container string, n int32) (*os.File, error) {
	if err := os.MkdirAll(filepath.Join(string(d), container), 0o755); err != nil {
		return nil, fmt.Errorf("making the log directory: %w", err)
	}
	if err := os.MkdirAll(d.home(), 0o755); err != nil {
		return nil, fmt.Errorf("making the home directory: %w", err)
	}
	f, err := os.OpenFile(d.instanceLog(container, n), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return nil, fmt.Errorf("opening the container log: %w", err)
	}
	err = relink(d.currentLog(container), filepath.Join(container, strconv.Itoa(int(n))+".log"))
	if err == nil && n > 0 {
		err = relink(d.previousLog(container), filepath.Join(container, strconv.Itoa(int(n-1))+".log"))
	}
	if err != nil {
		_ = f.Close()
		return nil, err
	}
	return f, nil
}

// relink points the symbolic link at path to target, atomically: a reader
// sees either the old target or the new one.
func relink(path, target string) error {
	tmp := path + ".tmp"
	_ = os.Remove(tmp)
	if err := os.Symlink(target, tmp); err != nil {
		return fmt.Errorf("linking the container log: %w", err)
	}
	if err := os.Rename(tmp, path); err != nil {
		_ = os.Remove(tmp)
		return fmt.Errorf("linking the container log: %w", err)
	}
	return nil
}

// logsObject is the kwok Logs object of a pod: every container's log is the
// current link in the pod's directory. It is owned by the pod, so that the
// garbage collector removes it with the pod.
func logsObject(pod *corev1.Pod, dir podDir) *unstructured.Unstructured {
	logs := make([]any, 0, len(pod.Spec.Containers))
	for _, c := range pod.Spec.Containers {
		logs = append(logs, map[string]any{
			"containers":       []any{c.Name},
			"logsFile":         dir.currentLog(c.Name),
			"previousLogsFile": dir.previousLog(c.Name),
			"follow":           true,
		})
	}
	obj := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": logsResource.GroupVersion().String(),
		"kind":       "Logs",
		"metadata":   map[string]any{"name": pod.Name, "namespace": pod.Namespace},
		"spec":       map[string]any{"logs": logs},
	}}
	obj.SetOwnerReferences([]metav1.OwnerReference{{
		APIVersion: "v1", Kind: "Pod", Name: pod.Name, UID: pod.UID,
	}})
	return obj
}

// errNoLogsResource means the cluster's kwok does not read Logs objects,
// so `kubectl logs` cannot work for the runtime's pods.
var errNoLogsResource = errors.New("the cluster has no kwok Logs resource (create it with kwokctl --enable-crds=Logs)")

// ensureLogsObject creates the pod's Logs object, or replaces one left by
// an earlier pod of the same name.
func ensureLogsObject(ctx context.Context, client dynamic.Interface, pod *corev1.Pod, dir podDir) error {
	want := logsObject(pod, dir)
	res := client.Resource(logsResource).Namespace(pod.Namespace)
	_, err := res.Create(ctx, want, metav1.CreateOptions{})
	switch {
	case err == nil:
		return nil
	case meta.IsNoMatchError(err) || apierrors.IsNotFound(err):
		return errNoLogsResource
	case !apierrors.IsAlreadyExists(err):
		return fmt.Errorf("creating the Logs object of pod %s: %w", pod.Name, err)
	}
	existing, err := res.Get(ctx, pod.Name, metav1.GetOptions{})
	if err != nil {
		return fmt.Errorf("reading the Logs object of pod %s: %w", pod.Name, err)
	}
	want.SetResourceVersion(existing.GetResourceVersion())
	if _, err := res.Update(ctx, want, metav1.UpdateOptions{}); err != nil {
		return fmt.Errorf("updating the Logs object of pod %s: %w", pod.Name, err)
	}
	return nil
}

// waitLogsServed waits until kwok answers the container's log, so that a
// reader who sees the container running (the deployer following a hook
// pod) finds its log.
//
// kwok reads Logs objects through a list it caches under the resource
// version its watch has reached. The watch records an event's version
// before kwok's store holds the object, so a log request in between caches
// a list without the new object, and kwok keeps answering from it until
// some Logs object changes again: on a quiet cluster, never. Every
// logsTouchEvery unanswered requests the pod's Logs object is therefore
// touched, which moves that version on. The wait ends after timeout.
func waitLogsServed(ctx context.Context, serve logsServer, timeout time.Duration) error {
	var last error
	asked := 0
	err := wait.PollUntilContextTimeout(ctx, logsServedPoll, timeout, true, func(ctx context.Context) (bool, error) {
		if last = serve.read(ctx); last == nil {
			return true, nil
		}
		asked++
		if asked%logsTouchEvery == 0 {
			if err := serve.touch(ctx, asked/logsTouchEvery); err != nil {
				last = errors.Join(last, err)
			}
		}
		return false, nil
	})
	if err != nil {
		return fmt.Errorf("kwok does not serve the log: %w", errors.Join(err, last))
	}
	return nil
}

// logsServer is how waitLogsServed reaches kwok: read asks for the
// container's log, touch changes the pod's Logs object for the n-th time.
type logsServer struct {
	read  func(ctx context.Context) error
	touch func(ctx context.Context, n int) error
}

// kwokLogs is the logsServer of one container of pod.
func kwokLogs(client kubernetes.Interface, objects dynamic.Interface, pod *corev1.Pod, container string) logsServer {
	limit := int64(1)
	return logsServer{
		read: func(ctx context.Context) error {
			req := client.CoreV1().Pods(pod.Namespace).GetLogs(pod.Name, &corev1.PodLogOptions{Container: container, LimitBytes: &limit})
			_, err := req.DoRaw(ctx)
			return err
		},
		touch: func(ctx context.Context, n int) error {
			patch := fmt.Sprintf(`{"metadata":{"annotations":{%q:"%d"}}}`, logsTouchedAnnotation, n)
			_, err := objects.Resource(logsResource).Namespace(pod.Namespace).Patch(ctx, pod.Name, types.MergePatchType, []byte(patch), metav1.PatchOptions{})
			if err != nil {
				return fmt.Errorf("touching the Logs object of pod %s: %w", pod.Name, err)
			}
			return nil
		},
	}
}
