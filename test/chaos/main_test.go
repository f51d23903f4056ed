package chaos

import (
	"flag"
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/deployconfig/deployconfig/test/clusterenv"
	"github.com/deployconfig/deployconfig/test/rollout"
)

// Flags of the chaos run (after -args on the go test command line).
var (
	countFlag    = flag.Int("count", 1, "rounds of each scenario")
	seedFlag     = flag.Int64("seed", 0, "seed of the first round (round i uses seed+i); 0 picks one from the clock")
	rolloutsFlag = flag.Int("rollouts", 100, "concurrent rollouts of scenario b (-short: 12)")
	killsFlag    = flag.Int("kills", 5, "controller kills per round of scenario b (-short: 2)")
	walkersFlag  = flag.Int("walkers", 4, "DeploymentConfigs walking at once in scenario a (-short: 2)")
	stepsFlag    = flag.Int("steps", 20, "steps of each random walk in scenario a (-short: 8)")
	modeFlag     = flag.String("deployer-mode", "", "dc-controller's --deployer-mode: pod or controller-when-possible; empty runs it with its default (pod)")
)

// suite is what every scenario shares; TestMain sets it before the tests
// run and prints its tally after them.
var suite *chaosSuite

// chaosSuite is the cluster and the run's tally, sizes and deployer mode.
type chaosSuite struct {
	env   *clusterenv.Env
	dcs   *rollout.Client
	tally *tally
	sizes sizes
	mode  deployerMode
}

func TestMain(m *testing.M) {
	start := time.Now()
	flag.Parse()
	if err := (deployerMode{flag: *modeFlag}).validate(); err != nil {
		fmt.Fprintf(os.Stderr, "dc-chaos: %v\n", err)
		os.Exit(2)
	}
	code := clusterenv.Main(m, "dc-chaos", func(env *clusterenv.Env) {
		mode := deployerMode{flag: *modeFlag}
		suite = &chaosSuite{env: env, dcs: rollout.NewClient(env), tally: newTally(mode), sizes: resolveSizes(), mode: mode}
		fmt.Printf("chaos: cluster %s; deployer mode %s; sizes %+v; first seed %d\n", env.Options.Name, mode, suite.sizes, suite.sizes.seed)
	})
	if suite != nil {
		fmt.Print(suite.tally.summary(time.Since(start)))
		if code == 0 && suite.tally.violations.Load() > 0 {
			code = 1
		}
	}
	os.Exit(code)
}

// sizes are the run's sizes, from the flags; -short shrinks those not set
// explicitly.
type sizes struct {
	count    int
	seed     int64
	rollouts int
	kills    int
	walkers  int
	steps    int
}

func resolveSizes() sizes {
	set := map[string]bool{}
	flag.Visit(func(f *flag.Flag) { set[f.Name] = true })
	pick := func(name string, full, short int) int {
		if testing.Short() && !set[name] {
			return short
		}
		return full
	}
	s := sizes{
		count:    max(*countFlag, 1),
		seed:     *seedFlag,
		rollouts: pick("rollouts", *rolloutsFlag, 12),
		kills:    pick("kills", *killsFlag, 2),
		walkers:  pick("walkers", *walkersFlag, 2),
		steps:    pick("steps", *stepsFlag, 8),
	}
	if s.seed == 0 {
		s.seed = time.Now().UnixNano() % 1_000_000_000
	}
	return s
}
