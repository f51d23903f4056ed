package node

import (
	"os/exec"
	"path/filepath"
	"testing"

	"sigs.k8s.io/yaml"

	dcv1 "github.com/deployconfig/deployconfig/api/v1"
	"github.com/deployconfig/deployconfig/internal/dev/imagebuild"
	"github.com/deployconfig/deployconfig/test/rollout"
)

// A Custom strategy with an image runs that image in the deployer pod; its
// command calls dc-deploy, which runs the rollout in two steps.
func TestCustomStrategyWithAnImage(t *testing.T) {
	t.Parallel()
	ns := namespace(t)
	dc := appDC(ns, "web", rollout.Options{Replicas: 2})
	dc.Spec.Strategy = dcv1.DeploymentStrategy{
		Type: dcv1.DeploymentStrategyTypeCustom,
		CustomParams: &dcv1.CustomDeploymentStrategyParams{
			Image:   suite.images[imagebuild.DeployerImageName],
			Command: []string{"/bin/sh", "-c", `dc-deploy --until=50% && echo "custom: half of $DC_DEPLOYMENT_NAME is up" && dc-deploy`},
		},
	}
	create(t, dc)
	requireComplete(t, ns, "web", 1)
	assertInOrder(t, deployerLog(t, ns, "web"), "--> Reached 50%", "custom: half of web-1 is up", "--> Success")
}

// An OpenShift Custom strategy with only a command, converted by `kubectl
// dc convert` as a user would, runs in the default deployer image:
// `/bin/sh -c` with openshift-deploy on its PATH.
func TestConvertedOpenShiftCustomStrategy(t *testing.T) {
	t.Parallel()
	ns := namespace(t)
	manifest := filepath.Join(root, "test", "e2e", "testdata", "openshift", "custom-openshift-deploy.yaml")
	out, err := exec.Command(filepath.Join(suite.binDir, "kubectl-dc"), "convert", "-f", manifest).Output()
	if err != nil {
		t.Fatalf("kubectl dc convert -f %s: %v", manifest, err)
	}
	dc := &dcv1.DeploymentConfig{}
	if err := yaml.Unmarshal(out, dc); err != nil {
		t.Fatalf("the converted manifest: %v\n%s", err, out)
	}
	if dc.Spec.Strategy.CustomParams == nil || dc.Spec.Strategy.CustomParams.Image != "" {
		t.Fatalf("the converted strategy %+v: want customParams with a command and no image", dc.Spec.Strategy.CustomParams)
	}
	// What a user changes to run it here: the image (quay.io is not
	// reachable) and the security context restricted Pod Security asks for.
	app := appDC(ns, dc.Name, rollout.Options{Replicas: dc.Spec.Replicas})
	dc.Namespace = ns
	dc.Spec.Template.Spec.SecurityContext = app.Spec.Template.Spec.SecurityContext
	c := &dc.Spec.Template.Spec.Containers[0]
	appContainer := app.Spec.Template.Spec.Containers[0]
	c.Image, c.SecurityContext, c.Env, c.ReadinessProbe = appContainer.Image, appContainer.SecurityContext, appContainer.Env, appContainer.ReadinessProbe
	create(t, dc)
	requireComplete(t, ns, dc.Name, 1)
	assertInOrder(t, deployerLog(t, ns, dc.Name),
		"--> Reached 50%",
		"canary: running smoke-test on half of "+dc.Name+"-1",
		"--> Success")
}
