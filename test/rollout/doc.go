// Package rollout is what tests on a cluster (chaos, security) need to
// drive DeploymentConfigs: build ones whose pods pass the restricted Pod
// Security Standard, change and scale them, run kubectl dc, and wait for
// their rollouts to end and for them to settle. Waits poll the cluster and
// take API errors for "not yet", so that they ride out a restarting API
// server.
package rollout
