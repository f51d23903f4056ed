package cli

import (
	"context"
	"fmt"
	"io"
	"strings"
	"sync"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/watch"
	"sigs.k8s.io/controller-runtime/pkg/client"

	dcv1 "github.com/deployconfig/deployconfig/api/v1"
)

// changeFeed signals every change of a DeploymentConfig or of its
// deployments, from two watches. Signals coalesce: a reader that is busy
// sees one signal for many changes, then reads the current state.
type changeFeed struct {
	changes chan struct{}
	closed  chan struct{}
	stop    func()
}

// openChangeFeed watches the named DeploymentConfig and its
// ReplicationControllers.
func openChangeFeed(ctx context.Context, c *Clients, name string) (*changeFeed, error) {
	dcWatch, err := c.DC.Watch(ctx, &dcv1.DeploymentConfigList{}, client.InNamespace(c.Namespace), client.MatchingFields{"metadata.name": name})
	if err != nil {
		return nil, dcError(err, c.Namespace, name)
	}
	selector := labels.SelectorFromSet(labels.Set{dcv1.DeploymentConfigLabel: name}).String()
	rcWatch, err := c.Kube.CoreV1().ReplicationControllers(c.Namespace).Watch(ctx, metav1.ListOptions{LabelSelector: selector})
	if err != nil {
		dcWatch.Stop()
		return nil, fmt.Errorf("watch the rollouts of deploymentconfig %q: %w", name, err)
	}
	feed := &changeFeed{changes: make(chan struct{}, 1), closed: make(chan struct{})}
	var once sync.Once
	closeFeed := func() { once.Do(func() { close(feed.closed) }) }
	var wg sync.WaitGroup
	for _, w := range []watch.Interface{dcWatch, rcWatch} {
		wg.Add(1)
		go func(w watch.Interface) {
			defer wg.Done()
			defer closeFeed()
			for range w.ResultChan() {
				select {
				case feed.changes <- struct{}{}:
				default:
				}
			}
		}(w)
	}
	feed.stop = func() {
		dcWatch.Stop()
		rcWatch.Stop()
		wg.Wait()
	}
	return feed, nil
}

// progressView shows a rollout's progress.
type progressView interface {
	// show shows the current state; it is called after every change.
	show(st rolloutState)
	// finish shows the last state of a rollout that has ended.
	finish(st rolloutState)
	// abort leaves the terminal clean before an error is printed.
	abort()
}

// newProgressView draws a progress bar on a terminal and writes a line per
// change elsewhere (logs, pipes, CI).
func (a *app) newProgressView() progressView {
	if a.IsTerminal != nil && a.IsTerminal(a.Streams.Out) {
		return &barView{w: a.Streams.Out}
	}
	return &lineView{w: a.Streams.Out}
}

// lineView writes each new message on its own line, as `kubectl rollout
// status` does.
type lineView struct {
	w    io.Writer
	last string
}

func (v *lineView) show(st rolloutState) {
	if st.message == "" || st.message == v.last {
		return
	}
	v.last = st.message
	fmt.Fprintln(v.w, st.message)
}

func (v *lineView) finish(rolloutState) {}

func (v *lineView) abort() {}

// barView redraws one line: a bar of the available replicas and the
// message; the last message stays.
type barView struct {
	w     io.Writer
	drawn bool
	last  string
}

// barWidth is the bar's width in characters, inside the brackets.
const barWidth = 30

func (v *barView) show(st rolloutState) {
	if st.done {
		return
	}
	line := st.message
	if st.desired > 0 {
		line = fmt.Sprintf("%s %d/%d updated, %d/%d available  %s", bar(st.available, st.desired), st.updated, st.desired, st.available, st.desired, st.message)
	}
	if v.drawn && line == v.last {
		return
	}
	fmt.Fprintf(v.w, "\r\x1b[K%s", line)
	v.drawn, v.last = true, line
}

func (v *barView) finish(st rolloutState) {
	v.abort()
	if st.err == nil && st.message != "" {
		fmt.Fprintln(v.w, st.message)
	}
}

func (v *barView) abort() {
	if v.drawn {
		fmt.Fprint(v.w, "\r\x1b[K")
		v.drawn = false
	}
}

// bar draws done out of total as "[=====>    ]".
func bar(done, total int32) string {
	if total <= 0 {
		return "[" + strings.Repeat(" ", barWidth) + "]"
	}
	if done > total {
		done = total
	}
	filled := int(done) * barWidth / int(total)
	head := ""
	if filled < barWidth {
		head = ">"
	}
	return "[" + strings.Repeat("=", filled) + head + strings.Repeat(" ", barWidth-filled-len(head)) + "]"
}
