package v1

// Keys and condition reasons of RolloutPolicies. They are stable: users,
// alerts and GitOps health checks select on them.
const (
	// PolicyResumeAnnotation, on a RolloutPolicy, holds the time (RFC 3339)
	// of the last `kubectl dc policy resume`: failures before it neither
	// keep the circuit breaker open nor stop the waves of their change.
	PolicyResumeAnnotation = KeyPrefix + "policy-resume"

	// AwaitingWindowReason is the Progressing condition's reason while a
	// rollout waits for its policy's next window, or the end of a freeze.
	AwaitingWindowReason = "AwaitingWindow"
	// AwaitingWaveReason is the Progressing condition's reason while a
	// rollout waits for an earlier wave of its change to complete and
	// soak, or for a resume after a failure stopped the waves.
	AwaitingWaveReason = "AwaitingWave"
	// CircuitOpenReason is the Progressing condition's reason while a
	// rollout waits because its policy's circuit breaker is open.
	CircuitOpenReason = "CircuitOpen"

	// PolicyHolding is the RolloutPolicy condition that is True while the
	// policy holds every rollout (reason AwaitingWindow or CircuitOpen).
	PolicyHolding = "Holding"
	// PolicyInvalid is the RolloutPolicy condition that is True while its
	// spec cannot be followed (reason InvalidTimeZone); every rollout of
	// the policy then waits.
	PolicyInvalid = "Invalid"
	// InvalidTimeZoneReason: spec.timeZone is not a known IANA time zone.
	InvalidTimeZoneReason = "InvalidTimeZone"
)
