package e2e

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// When dc-local serve dies and starts again, the pod runtime takes its pods
// over: terminal pods are left alone; a container that was running is lost
// (its process is killed), so a restartPolicy Never pod fails with
// ContainerStatusUnknown and an OnFailure pod restarts its container.
func TestRuntimeRestart(t *testing.T) {
	ns := newNamespace(t)
	// Each instance records its PID in the pod's HOME, to show that the
	// lost process is gone. ($$$$ is the shell's $$: the kubelet's
	// expansion of $(VAR) references turns $$ into $.)
	script := `echo $$$$ > "$HOME/pid.$(date +%s%N)"; echo started; exec sleep 300`
	createPod(t, ns, hookPod("done", "web-1", corev1.RestartPolicyNever, "/bin/sh", "-c", "exit 0"))
	createPod(t, ns, hookPod("never", "web-1", corev1.RestartPolicyNever, "/bin/sh", "-c", script))
	createPod(t, ns, hookPod("onfailure", "web-1", corev1.RestartPolicyOnFailure, "/bin/sh", "-c", script))
	done := waitPodTerminal(t, ns, "done")
	for _, name := range []string{"never", "onfailure"} {
		waitFor(t, name+" to run", podTimeout, func(ctx context.Context) (bool, error) {
			p, err := clientset().CoreV1().Pods(ns).Get(ctx, name, metav1.GetOptions{})
			return err == nil && p.Status.Phase == corev1.PodRunning && podReady(p), ignoreNotFound(err)
		})
	}
	lost := instancePIDs(t, ns, "never")

	killServer(t)

	never := waitPodTerminal(t, ns, "never")
	if state := containerTerminated(never); never.Status.Phase != corev1.PodFailed || state == nil ||
		state.Reason != "ContainerStatusUnknown" || state.ExitCode != 137 {
		t.Errorf("restartPolicy Never pod: phase %s, container %+v; want Failed, ContainerStatusUnknown", never.Status.Phase, state)
	}
	waitFor(t, "the OnFailure pod's container to restart", podTimeout, func(ctx context.Context) (bool, error) {
		p, err := clientset().CoreV1().Pods(ns).Get(ctx, "onfailure", metav1.GetOptions{})
		return err == nil && p.Status.Phase == corev1.PodRunning && podReady(p) && p.Status.ContainerStatuses[0].RestartCount == 1, err
	})
	for _, pid := range lost {
		if err := syscall.Kill(pid, 0); !errors.Is(err, syscall.ESRCH) {
			t.Errorf("the lost container's process %d still runs (%v)", pid, err)
		}
	}
	again, err := clientset().CoreV1().Pods(ns).Get(t.Context(), "done", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if again.ResourceVersion != done.ResourceVersion {
		t.Errorf("the terminal pod was changed: %+v", again.Status)
	}
	// The container is ready once its process runs, a moment before the
	// process has written its line.
	var logs result
	err = poll(t, podTimeout, func(context.Context) (bool, error) {
		logs = run(t, "", "kubectl", "logs", "-n", ns, "onfailure")
		return logs.code == 0 && logs.stdout == "started\n", nil
	})
	if err != nil {
		t.Errorf("kubectl logs of the restarted container: %s", logs)
	}
}

// killServer kills the suite's dc-local serve as a crash would, and starts
// it again.
func killServer(t *testing.T) {
	t.Helper()
	replaceServer(t, suite.serverCommand)
}

// replaceServer kills the suite's dc-local serve as a crash would, and
// starts command in its place.
func replaceServer(t *testing.T, command []string) {
	t.Helper()
	pid := suite.server.PID
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		t.Fatalf("killing dc-local serve: %v", err)
	}
	waitFor(t, "dc-local serve to die", podTimeout, func(context.Context) (bool, error) {
		return errors.Is(syscall.Kill(pid, 0), syscall.ESRCH), nil
	})
	server, err := suite.cluster.StartServer(t.Context(), command)
	if err != nil {
		t.Fatalf("starting %s: %v", strings.Join(command, " "), err)
	}
	suite.server = server
}

// instancePIDs reads the PIDs that a pod's container instances recorded in
// the pod's HOME (the runtime's directory for the pod).
func instancePIDs(t *testing.T, ns, name string) []int {
	t.Helper()
	pod, err := clientset().CoreV1().Pods(ns).Get(t.Context(), name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	dir, err := suite.options.RuntimeDir()
	if err != nil {
		t.Fatal(err)
	}
	home := filepath.Join(dir, "pods", ns+"_"+name+"_"+string(pod.UID), "home")
	var pids []int
	waitFor(t, "the process to record its PID", podTimeout, func(context.Context) (bool, error) {
		files, _ := filepath.Glob(filepath.Join(home, "pid.*"))
		pids = pids[:0]
		for _, f := range files {
			data, err := os.ReadFile(f)
			if err != nil {
				return false, nil
			}
			pid, err := strconv.Atoi(strings.TrimSpace(string(data)))
			if err != nil {
				return false, nil
			}
			pids = append(pids, pid)
		}
		return len(pids) > 0, nil
	})
	return pids
}
