package rolloutpolicy

import (
	"testing"
	"time"
)

// FuzzParseCron: any string the schema's pattern lets through parses or
// is refused, never panics, and a parsed schedule finds its next match
// within its bound.
func FuzzParseCron(f *testing.F) {
	for _, seed := range []string{"*/15 9-17 * * 1-5", "0 0 1,15 * *", "0 0 * * 7", "5-3 * * * *", "*/99 * * * *", "0,,1 * * * *"} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, expr string) {
		if len(expr) > 64 {
			return
		}
		c, err := parseCron(expr)
		if err != nil {
			return
		}
		c.openAt(t0, time.Hour)
		c.next(t0)
	})
}
