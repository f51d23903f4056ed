package chaos

import (
	"context"
	"testing"

	"github.com/deployconfig/deployconfig/test/clusterenv"
)

// defaultControllers is how dc-controller runs unless a scenario needs
// otherwise: one replica, no leader election, so that a restarted one
// takes over at once, in the run's deployer mode.
func defaultControllers() clusterenv.ControllerSpec {
	return suite.mode.controllers(clusterenv.ControllerSpec{Replicas: 1})
}

// ensureControllers makes dc-controller run as spec says (a spec from
// defaultControllers or suite.mode.controllers, which add the run's
// deployer mode).
func ensureControllers(t *testing.T, spec clusterenv.ControllerSpec) {
	t.Helper()
	if err := suite.env.Controllers.Ensure(t.Context(), spec); err != nil {
		t.Fatalf("starting dc-controller: %v", err)
	}
}

// useControllers makes dc-controller run as spec says for one test, and
// as defaultControllers again after it.
func useControllers(t *testing.T, spec clusterenv.ControllerSpec) {
	t.Helper()
	ensureControllers(t, spec)
	t.Cleanup(func() {
		if err := suite.env.Controllers.Ensure(context.Background(), defaultControllers()); err != nil {
			t.Errorf("restoring dc-controller: %v", err)
		}
	})
}
