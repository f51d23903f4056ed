package security

import (
	"os"
	"testing"

	"github.com/deployconfig/deployconfig/test/clusterenv"
)

// suite is the cluster; TestMain sets it before the tests run.
var suite *clusterenv.Env

func TestMain(m *testing.M) {
	os.Exit(clusterenv.Main(m, "dc-security", func(env *clusterenv.Env) { suite = env }))
}
