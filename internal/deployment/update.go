package deployment

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	corev1client "k8s.io/client-go/kubernetes/typed/core/v1"

	dcv1 "github.com/deployconfig/deployconfig/api/v1"
)

// ErrRecordChanged is returned by Update when another writer kept changing
// the record: two runners work on one deployment, and this one must stop.
var ErrRecordChanged = errors.New("the rollout's progress record changed under this writer")

// updateAttempts bounds Update's compare-and-swap loop. Only a second
// runner of the same deployment makes it fail every time.
const updateAttempts = 4

// Update applies change to the progress record of rc (the deployment as
// its writer last read or wrote it) and writes it back. The write is a
// JSON patch that first tests the record's value as it was read: a write
// of the record in between by anyone else makes it fail, and Update reads
// the deployment again and reapplies change. The writer's own copy is
// current unless someone else wrote the record, so the first attempt needs
// no read. Other writes of the RC (its status, its scale, the desired
// replicas, a request) do not conflict with it. It returns the RC as
// written.
func Update(ctx context.Context, rcs corev1client.ReplicationControllerInterface, rc *corev1.ReplicationController, change func(*Progress) error) (*corev1.ReplicationController, error) {
	return UpdateKeeping(ctx, rcs, rc, nil, change)
}

// KeptLog is a rollout's log that its runner keeps on the deployment, as
// dc-controller does for the rollouts it runs itself, which have no pod
// log. Every write of the record carries the lines printed since the log
// was last kept: a runner killed after a write leaves every line it
// printed before it.
type KeptLog interface {
	// Unkept returns the log when it has lines not yet on the deployment,
	// and a mark of how far it went.
	Unkept() (log string, mark uint64, ok bool)
	// Kept notes that the log, up to mark, is on the deployment.
	Kept(mark uint64)
}

// UpdateKeeping is Update that also writes log (when not nil) with the
// record.
func UpdateKeeping(ctx context.Context, rcs corev1client.ReplicationControllerInterface, rc *corev1.ReplicationController, log KeptLog, change func(*Progress) error) (*corev1.ReplicationController, error) {
	name := rc.Name
	var lastErr error
	for attempt := range updateAttempts {
		if attempt > 0 {
			fresh, err := rcs.Get(ctx, name, metav1.GetOptions{})
			if err != nil {
				return nil, fmt.Errorf("get replicationcontroller %s: %w", name, err)
			}
			rc = fresh
		}
		written, err := tryUpdate(ctx, rcs, rc, log, change)
		if err == nil {
			return written, nil
		}
		if !errors.Is(err, errTestFailed) {
			return nil, err
		}
		lastErr = err
	}
	return nil, fmt.Errorf("update the progress of replicationcontroller %s: %w: %v", name, ErrRecordChanged, lastErr)
}

// errTestFailed: the patch's test of the record failed.
var errTestFailed = errors.New("the record was changed by another writer")

// tryUpdate makes one compare-and-swap write of the record.
func tryUpdate(ctx context.Context, rcs corev1client.ReplicationControllerInterface, rc *corev1.ReplicationController, log KeptLog, change func(*Progress) error) (*corev1.ReplicationController, error) {
	p, err := ReadProgress(rc)
	if err != nil {
		return nil, err
	}
	if err := change(&p); err != nil {
		return nil, err
	}
	p.Format = ProgressFormat
	p.Seq++
	ops := updateOps(rc, p)
	var text string
	var mark uint64
	kept := false
	if log != nil {
		if text, mark, kept = log.Unkept(); kept {
			ops = append(ops, jsonOp{Op: "add", Path: annotationPath(dcv1.DeploymentLogAnnotation), Value: text})
		}
	}
	patch, err := json.Marshal(ops)
	if err != nil {
		return nil, fmt.Errorf("progress patch of replicationcontroller %s: %w", rc.Name, err)
	}
	written, err := rcs.Patch(ctx, rc.Name, types.JSONPatchType, patch, metav1.PatchOptions{})
	if err != nil {
		if isTestFailure(err) {
			return nil, fmt.Errorf("%w: %v", errTestFailed, err)
		}
		return nil, fmt.Errorf("write the progress of replicationcontroller %s: %w", rc.Name, err)
	}
	if kept {
		log.Kept(mark)
	}
	return written, nil
}

// jsonOp is one operation of a JSON patch.
type jsonOp struct {
	Op    string `json:"op"`
	Path  string `json:"path"`
	Value any    `json:"value,omitempty"`
}

// updateOps are the operations of one write of the record: the test that
// makes it a compare-and-swap (of the record's value, or of the
// resourceVersion for a deployment that has none yet), the record, and the
// removal of the keys progress was kept in before the record.
func updateOps(rc *corev1.ReplicationController, p Progress) []jsonOp {
	var ops []jsonOp
	old, has := rc.Annotations[dcv1.RolloutProgressAnnotation]
	switch {
	case has:
		ops = append(ops, jsonOp{Op: "test", Path: annotationPath(dcv1.RolloutProgressAnnotation), Value: old})
	case rc.ResourceVersion != "":
		ops = append(ops, jsonOp{Op: "test", Path: "/metadata/resourceVersion", Value: rc.ResourceVersion})
	default:
		// An object of a store without versions (a test's): the old
		// keys are the record.
		for _, k := range legacyKeys {
			if v, present := rc.Annotations[k]; present {
				ops = append(ops, jsonOp{Op: "test", Path: annotationPath(k), Value: v})
			}
		}
	}
	if rc.Annotations == nil {
		ops = append(ops, jsonOp{Op: "add", Path: "/metadata/annotations", Value: map[string]string{}})
	}
	ops = append(ops, jsonOp{Op: "add", Path: annotationPath(dcv1.RolloutProgressAnnotation), Value: p.Encode()})
	for _, k := range legacyKeys {
		if _, present := rc.Annotations[k]; present {
			ops = append(ops, jsonOp{Op: "remove", Path: annotationPath(k)})
		}
	}
	return ops
}

// annotationPath is the JSON pointer of an annotation.
func annotationPath(key string) string {
	return "/metadata/annotations/" + strings.NewReplacer("~", "~0", "/", "~1").Replace(key)
}

// isTestFailure reports whether a patch failed its test operation. A fake
// client returns the patch library's error. The API server answers any
// operation that does not apply with a bare 422 (Invalid, with neither the
// library's message nor causes, unlike a validation failure): for the
// patches Update makes, that is the test, or the removal of an old key
// that someone removed since the read. Both mean the deployment changed
// under the writer, who reads it again.
func isTestFailure(err error) bool {
	if strings.Contains(err.Error(), "testing value ") && strings.Contains(err.Error(), "test failed") {
		return true
	}
	var status apierrors.APIStatus
	if !errors.As(err, &status) || !apierrors.IsInvalid(err) {
		return false
	}
	d := status.Status().Details
	return d == nil || len(d.Causes) == 0
}
