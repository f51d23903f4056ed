// Package chaos breaks a running deployconfig on purpose and checks that it
// recovers: rollouts end as they should, nothing is lost or done twice, and
// the invariants of package invariants hold all along. It runs on a
// playground cluster of its own (package clusterenv), with dc-controller as
// separate processes, and has one test per scenario:
//
//	a  TestRandomWalk            per DC, random config changes, cancels,
//	                             retries, scale changes and waits, then one
//	                             more change that must complete
//	b  TestControllerKilled      dc-controller SIGKILLed at random moments
//	                             during many concurrent rollouts, restarted
//	                             each time: all Complete, none lost or doubled
//	c  TestLeaderFailover        two replicas with leader election; the
//	                             leader is killed mid-rollout and the other
//	                             finishes
//	d  TestAPIServerRestart      kube-apiserver restarted mid-rollout
//	e  TestDeployerPodDeleted    deployer pod deleted mid-rollout: Failed
//	                             with the right reason, the previous version
//	                             back at full size
//	f  TestHookKilled            hook pods killed (process or pod) mid-hook:
//	                             the hook's failure policy decides
//	g  TestRCScaledByHand        an RC scaled by hand is scaled back
//	h  TestCrashPoints           a sample of the crash-point harness: the
//	                             runner of a canary or blue-green rollout
//	                             killed after a write of its record (the
//	                             leader, or the deployer pod then a retry)
//
// Each scenario runs -count rounds, each from a random seed it prints; a
// round replays with -run <Test> -args -seed=<seed> -count=1 (faults land
// on the same steps; timing still varies). -short runs a small version of
// every scenario (make test); hack/chaos.sh runs the long one (make chaos)
// and prints the counts: scenarios run, faults injected, rollouts
// completed, violations found.
//
// -deployer-mode gives dc-controller its --deployer-mode, and make chaos
// and make test-chaos run the suite once in each. In pod mode every
// rollout has a deployer pod. In controller-when-possible mode the
// rollouts that need no container (no execNewPod hook, no Custom strategy)
// run inside the leading dc-controller: scenarios b and c then kill the
// process that runs them, and scenarios e and f, whose rollouts have hooks,
// still kill deployer and hook pods. Every check also asks where each
// deployment ran: in dc-controller (its RC says so) exactly when the mode
// puts it there, and never in a pod as well. The counts say how many of the
// completed rollouts ran in dc-controller.
package chaos
