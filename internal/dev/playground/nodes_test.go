package playground

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
)

func TestFakeNode(t *testing.T) {
	node := fakeNode(NodeName(2), DefaultNodeCapacity())
	if node.Name != "kwok-node-2" {
		t.Errorf("name %s", node.Name)
	}
	if node.Annotations[FakeNodeAnnotation] != FakeNodeAnnotationValue {
		t.Errorf("annotations %v lack %s: %s", node.Annotations, FakeNodeAnnotation, FakeNodeAnnotationValue)
	}
	if len(node.Spec.Taints) != 0 {
		t.Errorf("taints %v: ordinary pods would not land on the node", node.Spec.Taints)
	}
	pods := node.Status.Allocatable[corev1.ResourcePods]
	if pods.Value() < 1000 {
		t.Errorf("room for %d pods, want thousands", pods.Value())
	}
	if !node.Status.Capacity[corev1.ResourceCPU].Equal(node.Status.Allocatable[corev1.ResourceCPU]) {
		t.Error("capacity and allocatable differ")
	}
}

func TestNodeReady(t *testing.T) {
	tests := []struct {
		name       string
		conditions []corev1.NodeCondition
		want       bool
	}{
		{name: "no conditions"},
		{name: "ready", conditions: []corev1.NodeCondition{{Type: corev1.NodeMemoryPressure, Status: corev1.ConditionFalse}, {Type: corev1.NodeReady, Status: corev1.ConditionTrue}}, want: true},
		{name: "not ready", conditions: []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionUnknown}}},
	}
	for _, tt := range tests {
		node := &corev1.Node{Status: corev1.NodeStatus{Conditions: tt.conditions}}
		if got := nodeReady(node); got != tt.want {
			t.Errorf("%s: nodeReady = %t, want %t", tt.name, got, tt.want)
		}
	}
}
