package deployment

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// stateDoc is the page that shows the state table.
var stateDoc = filepath.Join("..", "..", "docs", "rollout-state.md")

// tableStart marks where the generated table begins on the page.
const tableStart = "<!-- generated from deployment.StateMachine -->\n"

// TestStateDocIsCurrent checks that docs/rollout-state.md shows the state
// machine as the code has it; DC_UPDATE_DOCS=1 rewrites the page's table.
func TestStateDocIsCurrent(t *testing.T) {
	data, err := os.ReadFile(stateDoc)
	if err != nil {
		t.Fatal(err)
	}
	head, _, ok := strings.Cut(string(data), tableStart)
	if !ok {
		t.Fatalf("%s lacks the marker %q", stateDoc, tableStart)
	}
	want := head + tableStart + StateDoc()
	if os.Getenv("DC_UPDATE_DOCS") == "1" {
		if err := os.WriteFile(stateDoc, []byte(want), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	if string(data) != want {
		t.Errorf("%s is not current: run DC_UPDATE_DOCS=1 go test ./internal/deployment -run TestStateDocIsCurrent", stateDoc)
	}
}

// TestStateMachineCoversTheRecord checks that every stage, switch and gate
// the record can hold has rows.
func TestStateMachineCoversTheRecord(t *testing.T) {
	table := StateTable()
	for _, word := range []string{
		string(StageStarted), string(StageSteps), string(StageFinalRoll), string(StageBeforeSwitch), string(StageSwitched),
		string(SwitchTrial), string(SwitchFinal), "step-k", "step-k-background", GatePromotion, GatePrePromotion, "postPromotionAnalysis",
		"promote --full", "plain promote", "cancel", "retry", "killed before a write", "killed after a write",
	} {
		if !strings.Contains(table, word) {
			t.Errorf("the state table has no row about %q", word)
		}
	}
}
