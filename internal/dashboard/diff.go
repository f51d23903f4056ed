package dashboard

import (
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/yaml"

	"github.com/deployconfig/deployconfig/internal/deployment"
)

// maxDiffLines bounds the lines a diff compares: its table is
// len(a)*len(b), and pod templates are far shorter.
const maxDiffLines = 2000

// diffLine is one line of a diff: Op is " " (both), "-" (only the first)
// or "+" (only the second).
type diffLine struct {
	Op, Text string
}

// templateYAML is the pod template a deployment was created with, as YAML.
func templateYAML(rc *corev1.ReplicationController) (string, error) {
	dc, err := deployment.DecodeConfig(rc)
	if err != nil {
		return "", fmt.Errorf("decode the DeploymentConfig recorded on %s: %w", rc.Name, err)
	}
	data, err := yaml.Marshal(dc.Spec.Template)
	if err != nil {
		return "", fmt.Errorf("encode the pod template of %s: %w", rc.Name, err)
	}
	return string(data), nil
}

// diffLines compares two texts line by line through their longest common
// subsequence of lines.
func diffLines(a, b string) ([]diffLine, error) {
	x, y := splitLines(a), splitLines(b)
	if len(x) > maxDiffLines || len(y) > maxDiffLines {
		return nil, fmt.Errorf("the templates are too long to compare (%d and %d lines; at most %d)", len(x), len(y), maxDiffLines)
	}
	// common[i][j] is the length of the longest common subsequence of
	// x[i:] and y[j:].
	common := make([][]int, len(x)+1)
	for i := range common {
		common[i] = make([]int, len(y)+1)
	}
	for i := len(x) - 1; i >= 0; i-- {
		for j := len(y) - 1; j >= 0; j-- {
			if x[i] == y[j] {
				common[i][j] = common[i+1][j+1] + 1
			} else {
				common[i][j] = max(common[i+1][j], common[i][j+1])
			}
		}
	}
	var out []diffLine
	i, j := 0, 0
	for i < len(x) && j < len(y) {
		switch {
		case x[i] == y[j]:
			out = append(out, diffLine{" ", x[i]})
			i, j = i+1, j+1
		case common[i+1][j] >= common[i][j+1]:
			out = append(out, diffLine{"-", x[i]})
			i++
		default:
			out = append(out, diffLine{"+", y[j]})
			j++
		}
	}
	for ; i < len(x); i++ {
		out = append(out, diffLine{"-", x[i]})
	}
	for ; j < len(y); j++ {
		out = append(out, diffLine{"+", y[j]})
	}
	return out, nil
}

// splitLines splits a text into lines without the final empty one.
func splitLines(s string) []string {
	if s == "" {
		return nil
	}
	return strings.Split(strings.TrimSuffix(s, "\n"), "\n")
}
