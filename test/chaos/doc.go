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
//
// Each scenario runs -count rounds, each from a random seed it prints; a
// round replays with -run <Test> -args -seed=<seed> -count=1 (faults land
// on the same steps; timing still varies). -short runs a small version of
// every scenario (make test); hack/chaos.sh runs the long one (make chaos)
// and prints the counts: scenarios run, faults injected, rollouts
// completed, violations found.
package chaos
