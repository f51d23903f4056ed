package playground

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"time"
)

// kwokctlGrace is how long kwokctl gets to stop after an interrupt when its
// context ends, before it is killed.
const kwokctlGrace = 30 * time.Second

// createArgs are the kwokctl arguments that create the cluster: the binary
// runtime with the real kube-controller-manager and kube-scheduler, kwok's
// stages from configFile, and no change to the user's own kubeconfig.
func createArgs(o Options, configFile string) []string {
	args := []string{
		"--config", configFile,
		"create", "cluster",
		"--name", o.Name,
		"--runtime", "binary",
		"--kube-apiserver-binary", o.binary(KubeAPIServerBinary),
		"--kube-controller-manager-binary", o.binary(KubeControllerManagerBinary),
		"--kube-scheduler-binary", o.binary(KubeSchedulerBinary),
		"--etcd-binary", o.binary(EtcdBinary),
		"--kwok-controller-binary", o.binary(KwokBinary),
		"--enable-crds=" + strings.Join(kwokCRDs(), ","),
		"--kubeconfig=",
		"--wait", o.Wait.String(),
	}
	if o.APIServerPort != 0 {
		args = append(args, "--kube-apiserver-port", strconv.Itoa(o.APIServerPort))
	}
	for _, a := range o.ExtraArgs {
		args = append(args, "--extra-args", a)
	}
	return args
}

// kwokCRDs are the kwok resources that kwok reads from the cluster rather
// than from its configuration: Logs, which point `kubectl logs` of the pods
// the playground runs itself at their log files.
func kwokCRDs() []string {
	return []string{"Logs"}
}

// startArgs are the kwokctl arguments that restart a stopped cluster.
func startArgs(o Options) []string {
	return []string{"start", "cluster", "--name", o.Name, "--wait", o.Wait.String()}
}

// deleteArgs are the kwokctl arguments that remove the cluster. Like
// createArgs they leave the user's kubeconfig alone: the context kwokctl
// removes is looked for in the cluster's own kubeconfig, which goes away
// with the cluster (kwokctl refuses an empty path here).
func deleteArgs(o Options) []string {
	return []string{"delete", "cluster", "--name", o.Name, "--kubeconfig", o.kubeconfigPath()}
}

// runKwokctl runs kwokctl with the cluster's working directory. Its output
// goes to o.Log when o.Verbose; on failure its last line is in the error and
// all of it in o.Log (unless ctx ended, which explains the failure).
func runKwokctl(ctx context.Context, o Options, args ...string) error {
	var out bytes.Buffer
	cmd := exec.CommandContext(ctx, o.binary(KwokctlBinary), args...)
	cmd.Env = append(os.Environ(), workdirEnv+"="+o.Workdir)
	cmd.Stdout, cmd.Stderr = &out, &out
	if o.Verbose {
		cmd.Stdout = io.MultiWriter(&out, &lineWriter{w: o.Log})
		cmd.Stderr = cmd.Stdout
	}
	cmd.Cancel = func() error { return cmd.Process.Signal(os.Interrupt) }
	cmd.WaitDelay = kwokctlGrace
	if err := cmd.Run(); err != nil {
		if !o.Verbose && ctx.Err() == nil {
			lw := &lineWriter{w: o.Log}
			_, _ = lw.Write(out.Bytes())
			lw.flush()
		}
		return fmt.Errorf("kwokctl %s: %w%s", strings.Join(commandWords(args), " "), err, lastLine(out.String()))
	}
	return nil
}

// commandWords are the leading words of kwokctl arguments that name the
// command, e.g. "create cluster", for error messages.
func commandWords(args []string) []string {
	var words []string
	for i := 0; i < len(args); i++ {
		switch {
		case args[i] == "--config":
			i++
		case strings.HasPrefix(args[i], "-"):
			return words
		default:
			words = append(words, args[i])
		}
	}
	return words
}

// lastLine is ": " and the last non-blank line of out, made readable, or ""
// when there is none.
func lastLine(out string) string {
	lines := strings.Split(strings.TrimSpace(out), "\n")
	last := strings.TrimSpace(lines[len(lines)-1])
	if last == "" {
		return ""
	}
	return ": " + readableLine(last)
}

// logRecord is the part of kwokctl's JSON log records worth showing.
type logRecord struct {
	Level   string `json:"level"`
	Msg     string `json:"msg"`
	Err     string `json:"err"`
	Elapsed struct {
		Human string `json:"human"`
	} `json:"elapsed"`
}

// readableLine shortens one of kwokctl's JSON log records (it logs JSON
// when its output is not a terminal) to its message, error and elapsed
// time; other lines are returned as they are.
func readableLine(line string) string {
	var r logRecord
	if json.Unmarshal([]byte(line), &r) != nil || r.Msg == "" {
		return line
	}
	text := r.Msg
	if r.Err != "" {
		text += ": " + r.Err
	}
	if r.Elapsed.Human != "" {
		text += " (" + r.Elapsed.Human + ")"
	}
	return text
}

// lineWriter writes kwokctl's output to w one readable, indented line at a
// time.
type lineWriter struct {
	w       io.Writer
	pending []byte
}

func (l *lineWriter) Write(p []byte) (int, error) {
	l.pending = append(l.pending, p...)
	for {
		i := bytes.IndexByte(l.pending, '\n')
		if i < 0 {
			return len(p), nil
		}
		l.writeLine(string(l.pending[:i]))
		l.pending = l.pending[i+1:]
	}
}

// flush writes what is left of an unterminated last line.
func (l *lineWriter) flush() {
	if len(l.pending) > 0 {
		l.writeLine(string(l.pending))
		l.pending = nil
	}
}

func (l *lineWriter) writeLine(line string) {
	if line = strings.TrimSpace(line); line != "" {
		_, _ = fmt.Fprintf(l.w, "  kwokctl: %s\n", readableLine(line))
	}
}
