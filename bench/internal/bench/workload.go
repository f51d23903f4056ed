package bench

import (
	"context"
	"fmt"
	"strconv"

	"golang.org/x/sync/errgroup"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	dcv1 "github.com/deployconfig/deployconfig/api/v1"
)

const (
	// appImage is the application's image; kwok never pulls it.
	appImage = "registry.k8s.io/pause:3.10"
	// revisionAnnotation is the pod-template annotation a template change
	// bumps, the same change for both systems.
	revisionAnnotation = "bench.deployconfig.io/revision"
	// createWorkers is how many objects dc-bench creates or changes at once.
	createWorkers = 16
)

// rolling is the rolling update both systems use: Deployment's defaults,
// which DeploymentConfig's Rolling strategy shares.
func rolling() (maxSurge, maxUnavailable intstr.IntOrString) {
	return intstr.FromString("25%"), intstr.FromString("25%")
}

// objectName is the name of the i-th object of a scenario.
func objectName(i int) string {
	return fmt.Sprintf("app-%05d", i)
}

// objectNames are the names of a scenario's first n objects.
func objectNames(n int) []string {
	names := make([]string, n)
	for i := range names {
		names[i] = objectName(i)
	}
	return names
}

// podTemplate is the pod template of both systems' objects.
func podTemplate(name string, revision int) corev1.PodTemplateSpec {
	return corev1.PodTemplateSpec{
		ObjectMeta: metav1.ObjectMeta{
			Labels:      map[string]string{"app": name},
			Annotations: map[string]string{revisionAnnotation: strconv.Itoa(revision)},
		},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Image: appImage}}},
	}
}

// newDC is a DeploymentConfig of the benchmark: Rolling with default
// parameters, triggered by config changes.
func newDC(namespace, name string, replicas int32) *dcv1.DeploymentConfig {
	surge, unavailable := rolling()
	template := podTemplate(name, 1)
	return &dcv1.DeploymentConfig{
		ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name, Labels: map[string]string{"app": name}},
		Spec: dcv1.DeploymentConfigSpec{
			Replicas: replicas,
			Selector: map[string]string{"app": name},
			Template: &template,
			Strategy: dcv1.DeploymentStrategy{
				Type:          dcv1.DeploymentStrategyTypeRolling,
				RollingParams: &dcv1.RollingDeploymentStrategyParams{MaxSurge: &surge, MaxUnavailable: &unavailable},
			},
			Triggers: []dcv1.DeploymentTriggerPolicy{{Type: dcv1.DeploymentTriggerOnConfigChange}},
		},
	}
}

// newDeployment is the Deployment peer of newDC.
func newDeployment(namespace, name string, replicas int32) *appsv1.Deployment {
	surge, unavailable := rolling()
	return &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name, Labels: map[string]string{"app": name}},
		Spec: appsv1.DeploymentSpec{
			Replicas: &replicas,
			Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": name}},
			Template: podTemplate(name, 1),
			Strategy: appsv1.DeploymentStrategy{
				Type:          appsv1.RollingUpdateDeploymentStrategyType,
				RollingUpdate: &appsv1.RollingUpdateDeployment{MaxSurge: &surge, MaxUnavailable: &unavailable},
			},
		},
	}
}

// templateChange is the merge patch that changes either system's pod
// template to a new revision.
func templateChange(revision int) client.Patch {
	data := fmt.Sprintf(`{"spec":{"template":{"metadata":{"annotations":{%q:%q}}}}}`, revisionAnnotation, strconv.Itoa(revision))
	return client.RawPatch(types.MergePatchType, []byte(data))
}

// parallel calls fn for 0..n-1 with at most workers at once; it stops at
// the first error and returns it.
func parallel(ctx context.Context, n, workers int, fn func(ctx context.Context, i int) error) error {
	g, ctx := errgroup.WithContext(ctx)
	g.SetLimit(workers)
	for i := range n {
		if ctx.Err() != nil {
			break
		}
		g.Go(func() error { return fn(ctx, i) })
	}
	return g.Wait()
}
