package controller

import (
	"regexp"
	"strings"
	"testing"

	"github.com/go-logr/logr"
	"github.com/go-logr/logr/funcr"
)

// TestDeferValues: a line written through deferValues reads as it would
// have through the logger it wraps: the same values in the same order, the
// names, the levels it writes, the caller's own file and line.
func TestDeferValues(t *testing.T) {
	for _, tc := range []struct {
		name  string
		write func(logr.Logger)
		want  string
	}{
		{"values before the line's own", func(l logr.Logger) {
			l.WithValues("controller", "deployer").WithValues("name", "web-1").Info("synced", "phase", "Complete")
		}, `sub "caller"={"file"="logger_test.go" "line"=LINE} "level"=0 "msg"="synced" "controller"="deployer" "name"="web-1" "phase"="Complete"`},
		{"an error", func(l logr.Logger) {
			l.WithValues("name", "web-1").Error(errTest, "failed")
		}, `sub "caller"={"file"="logger_test.go" "line"=LINE} "msg"="failed" "error"="boom" "name"="web-1"`},
		{"a level the sink writes", func(l logr.Logger) {
			l.V(1).WithValues("name", "web-1").Info("detail")
		}, `sub "caller"={"file"="logger_test.go" "line"=LINE} "level"=1 "msg"="detail" "name"="web-1"`},
		{"a level it does not", func(l logr.Logger) {
			l.V(2).WithValues("name", "web-1").Info("noise")
		}, ``},
		{"siblings do not share values", func(l logr.Logger) {
			base := l.WithValues("controller", "deployer")
			_ = base.WithValues("name", "web-1")
			base.WithValues("name", "web-2").Info("synced")
		}, `sub "caller"={"file"="logger_test.go" "line"=LINE} "level"=0 "msg"="synced" "controller"="deployer" "name"="web-2"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var lines []string
			sink := funcr.New(func(prefix, args string) { lines = append(lines, prefix+" "+args) }, funcr.Options{Verbosity: 1, LogCaller: funcr.All})
			tc.write(deferValues(sink.WithName("sub")))
			got := strings.Join(lines, "\n")
			// The caller is the write in tc.write: this file, at a line
			// the table's layout decides.
			got = callerLine.ReplaceAllString(got, `"line"=LINE`)
			if got != tc.want {
				t.Errorf("got  %s\nwant %s", got, tc.want)
			}
		})
	}
}

var callerLine = regexp.MustCompile(`"line"=[0-9]+`)

var errTest = testError("boom")

type testError string

func (e testError) Error() string { return string(e) }
