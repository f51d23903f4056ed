package deployment

import (
	"fmt"
	"strings"
)

// Transition is one row of a rollout's state machine: in a state, on an
// event, the runner acts and records the next state.
type Transition struct {
	// State is where the record says the rollout is.
	State string
	// Event is what happens there.
	Event string
	// Action is what the runner does, and what it records in the same
	// write.
	Action string
	// Next is the state recorded afterwards.
	Next string
}

// StateMachine returns the rows of the state machine the strategies
// follow, in the words of the progress record's fields. The table in
// docs/rollout-state.md is made from it, and a test keeps the two alike
// and checks that every stage and gate of the record has rows.
func StateMachine() []Transition {
	return []Transition{
		{string(StageStarted), "runner starts (deployer pod, or dc-controller when none is needed)", "pre hook; a canary records its first step, a blue-green rollout BeforeSwitch", "Steps k=1 · BeforeSwitch · (Rolling/Recreate without steps: stays Started)"},
		{string(StageStarted), "strategy without steps or switch completes", "post hook; phase Complete", "—"},
		{"Steps k of n", "setWeight / setCanaryScale / setHeaderRoute step done", "scale within maxSurge/maxUnavailable, set the routes; record weight", "Steps k+1 · FinalRoll"},
		{"Steps k of n", "pause step starts", "record wait {gate step-k, reason Pause, since, duration}", "Steps k, waiting"},
		{"Steps k of n, waiting", "promote request for gate step-k (or promote --full)", "record wait ended (passed step-k) and the request consumed", "Steps k+1 · FinalRoll"},
		{"Steps k of n, waiting", "timed pause's duration is over", "record wait ended (passed step-k)", "Steps k+1 · FinalRoll"},
		{"Steps k of n", "analysis step starts", "record analysis {label step-k, since}", "Steps k, analysing"},
		{"Steps k of n, analysing", "analysis passes", "record analysis over", "Steps k+1 · FinalRoll"},
		{"Steps k of n, analysing", "analysis Inconclusive", "record wait {gate step-k, reason Inconclusive}", "Steps k, waiting"},
		{"Steps k of n, analysing", "plain promote", "nothing: promote never skips a running analysis", "Steps k, analysing"},
		{"any step", "background analysis Inconclusive after step k", "record wait {gate step-k-background, reason Inconclusive}", "Steps k, waiting"},
		{"any step", "promote --full", "stop a running analysis; record FinalRoll and the request consumed", string(StageFinalRoll)},
		{string(StageFinalRoll), "runner resumes", "roll on from the replicas as they are; never back to a step, never scale the new version down", string(StageFinalRoll)},
		{string(StageFinalRoll), "routed canary at full size", "routes 100% new, record switch final, stable Service on new, routes at rest", string(StageSwitched) + " final"},
		{string(StageBeforeSwitch), "new deployment available, prePromotionAnalysis starts", "record analysis {label prePromotion}", "BeforeSwitch, analysing"},
		{string(StageBeforeSwitch), "analysis passed (or none)", "record wait {gate promotion, reason Promotion, duration autoPromotionSeconds}", "BeforeSwitch, waiting"},
		{"BeforeSwitch, waiting", "promote request for gate promotion, promote --full, or autoPromotionSeconds over", "record wait ended (passed promotion); a plain promote consumed", string(StageSwitched) + " trial · final"},
		{string(StageSwitched) + " trial", "postPromotionAnalysis passes", "record switch final (consuming a promote --full)", string(StageSwitched) + " final"},
		{string(StageSwitched) + " trial", "analysis fails, or a user's cancel", "record switch none, point the active Service back at the live deployment", "phase Failed"},
		{string(StageSwitched) + " trial", "runner stops without a cancel (a new leader takes over)", "nothing: the next runner resumes the analysis with the active Service on the new deployment", string(StageSwitched) + " trial"},
		{string(StageSwitched) + " final", "runner resumes or the rollout is retried", "keep the active Service on the new deployment, scale the old one down", string(StageSwitched) + " final"},
		{"any", "runner killed before a write", "nothing was recorded: the next runner redoes the step from the record", "unchanged"},
		{"any", "runner killed after a write", "the next runner goes on from what the write recorded", "as recorded"},
		{"any, phase Failed", "retry", "record reset (a final switch and consumed requests kept; a pending request consumed)", string(StageStarted)},
	}
}

// StateTable renders StateMachine as a Markdown table.
func StateTable() string {
	var b strings.Builder
	b.WriteString("| State | Event | Action (recorded in the same write) | Next |\n")
	b.WriteString("| --- | --- | --- | --- |\n")
	for _, t := range StateMachine() {
		fmt.Fprintf(&b, "| %s | %s | %s | %s |\n", t.State, t.Event, t.Action, t.Next)
	}
	return b.String()
}

// StateDoc is the generated part of docs/rollout-state.md: the state table,
// and where a runner resumes each kind of rollout (ResumeTable).
func StateDoc() string {
	return StateTable() + `
## Where a runner resumes

A runner that picks a rollout up (a restarted deployer pod, a new
dc-controller leader, a retry) decides where to start from the strategy and
the record alone, with ` + "`deployment.ResumeOf`" + `; every action it then takes reads
what it acts on again. This table is made by calling it:

` + ResumeTable()
}
