// Package nodebench is dc-bench's node scenario: on a real node
// (internal/dev/realnode: a kubelet with containerd, real containers, the
// controller installed from config/default), it rolls a 3-replica Rolling
// DeploymentConfig and the same Deployment out one at a time, alternating
// which goes first, and measures trigger → deployer pod Running, trigger →
// Complete and the deployer pod's peak memory from its cgroup. It writes
// <date>-node.md and .json to bench/results; bench/README.md says how to
// read them.
package nodebench

import (
	"errors"
	"fmt"
	"io"
	"time"

	dcv1 "github.com/deployconfig/deployconfig/api/v1"
)

// Options configure a run.
type Options struct {
	// Root is the deployconfig checkout (config/default, the images'
	// sources).
	Root string
	// BinDir holds the cluster's binaries (with the kubelet) and dc-local.
	BinDir string
	// OutDir receives <date>-node.json and .md.
	OutDir string
	// Label is added to the output files' names (<date>-node-<label>.*).
	Label string
	// Rollouts is the number of measured rollouts of each system.
	Rollouts int
	// Replicas of the DC and the Deployment.
	Replicas int32
	// DeployerMode is dc-controller's --deployer-mode:
	// dcv1.DeployerModePod (its default: every rollout in a deployer pod)
	// or dcv1.DeployerModeControllerWhenPossible (the DC's Rolling
	// rollouts run in the controller, with no pod).
	DeployerMode string
	// RolloutTimeout bounds one rollout (and the wait for the namespace to
	// settle after it).
	RolloutTimeout time.Duration
	// SampleInterval is how often the deployer pod's memory cgroup is read.
	SampleInterval time.Duration
	// Log receives progress lines.
	Log io.Writer
}

// DefaultOptions are the real-node benchmark's: 20 rollouts each of 3 replicas.
func DefaultOptions() Options {
	return Options{
		Rollouts:       20,
		Replicas:       3,
		DeployerMode:   dcv1.DeployerModePod,
		RolloutTimeout: 5 * time.Minute,
		SampleInterval: 50 * time.Millisecond,
	}
}

// validate checks o.
func (o *Options) validate() error {
	if o.Root == "" || o.BinDir == "" || o.OutDir == "" {
		return errors.New("node scenario: the checkout, binary and output directories are required")
	}
	if o.Rollouts < 1 {
		return errors.New("node scenario: rollouts must be at least 1")
	}
	if o.Replicas < 1 {
		return errors.New("node scenario: replicas must be at least 1")
	}
	if o.DeployerMode != dcv1.DeployerModePod && o.DeployerMode != dcv1.DeployerModeControllerWhenPossible {
		return fmt.Errorf("node scenario: unknown deployer mode %q (want %s or %s)", o.DeployerMode, dcv1.DeployerModePod, dcv1.DeployerModeControllerWhenPossible)
	}
	if o.RolloutTimeout <= 0 || o.SampleInterval <= 0 {
		return errors.New("node scenario: the rollout timeout and the memory sample interval must be above 0")
	}
	if o.Log == nil {
		o.Log = io.Discard
	}
	return nil
}
