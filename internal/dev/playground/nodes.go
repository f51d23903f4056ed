package playground

import (
	"context"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
)

const (
	// FakeNodeAnnotation marks the nodes kwok plays the kubelet of.
	FakeNodeAnnotation = "kwok.x-k8s.io/node"
	// FakeNodeAnnotationValue is FakeNodeAnnotation's value.
	FakeNodeAnnotationValue = "fake"
	// FakeNodeLabel and FakeNodeLabelValue label the fake nodes, so that
	// workloads can select or avoid them.
	FakeNodeLabel      = "type"
	FakeNodeLabelValue = "kwok"

	// nodesReadyTimeout bounds how long new nodes get to become Ready.
	nodesReadyTimeout = time.Minute
)

// NodeName is the name of the i-th fake node.
func NodeName(i int) string {
	return fmt.Sprintf("kwok-node-%d", i)
}

// fakeNode is a node that kwok manages. It has no taints, so that ordinary
// pods land on it, and capacity is both its capacity and allocatable (kwok
// keeps a status that is already set).
func fakeNode(name string, capacity corev1.ResourceList) *corev1.Node {
	return &corev1.Node{
		ObjectMeta: metav1.ObjectMeta{
			Name:        name,
			Annotations: map[string]string{FakeNodeAnnotation: FakeNodeAnnotationValue},
			Labels: map[string]string{
				FakeNodeLabel:                   FakeNodeLabelValue,
				corev1.LabelHostname:            name,
				corev1.LabelOSStable:            "linux",
				corev1.LabelArchStable:          "amd64",
				"node-role.kubernetes.io/agent": "",
			},
		},
		Status: corev1.NodeStatus{
			Capacity:    capacity.DeepCopy(),
			Allocatable: capacity.DeepCopy(),
			Phase:       corev1.NodeRunning,
		},
	}
}

// ensureNodes creates the fake nodes that are missing and waits until every
// one of them is Ready.
func ensureNodes(ctx context.Context, cs kubernetes.Interface, o Options) error {
	names := make([]string, o.Nodes)
	created := 0
	for i := range names {
		names[i] = NodeName(i)
		_, err := cs.CoreV1().Nodes().Create(ctx, fakeNode(names[i], o.NodeCapacity), metav1.CreateOptions{})
		switch {
		case err == nil:
			created++
		case !apierrors.IsAlreadyExists(err):
			return fmt.Errorf("creating node %s: %w", names[i], err)
		}
	}
	if created > 0 {
		logf(o.Log, "Created %d fake node(s)", created)
	}
	return waitNodesReady(ctx, cs, names, nodesReadyTimeout)
}

// waitNodesReady waits until every named node has condition Ready True.
func waitNodesReady(ctx context.Context, cs kubernetes.Interface, names []string, timeout time.Duration) error {
	var notReady string
	err := wait.PollUntilContextTimeout(ctx, 250*time.Millisecond, timeout, true, func(ctx context.Context) (bool, error) {
		for _, name := range names {
			node, err := cs.CoreV1().Nodes().Get(ctx, name, metav1.GetOptions{})
			if err != nil || !nodeReady(node) {
				notReady = name
				return false, nil
			}
		}
		return true, nil
	})
	if err != nil {
		return fmt.Errorf("waiting for node %s to be Ready: %w", notReady, err)
	}
	return nil
}

// nodeReady reports whether a node's Ready condition is True.
func nodeReady(node *corev1.Node) bool {
	for _, c := range node.Status.Conditions {
		if c.Type == corev1.NodeReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}
