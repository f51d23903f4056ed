package playground

import (
	"fmt"
	"io"
)

// logf writes one progress line.
func logf(w io.Writer, format string, args ...any) {
	_, _ = fmt.Fprintf(w, format+"\n", args...)
}
