package dashboard

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
)

// actionResult is an action's answer to the page.
type actionResult struct {
	OK        bool   `json:"ok"`
	Forbidden bool   `json:"forbidden"`
	Message   string `json:"message"`
}

// act runs an action after the cross-site checks: the page's token and
// the request's Origin.
func (s *Server) act(w http.ResponseWriter, r *http.Request) {
	if s.opts.ReadOnly {
		writeResult(w, http.StatusForbidden, actionResult{Message: "This dashboard is read-only (--read-only): it runs no actions."})
		return
	}
	if err := checkOrigin(r); err != nil {
		writeResult(w, http.StatusForbidden, actionResult{Message: "Refused: " + err.Error()})
		return
	}
	if !s.tokens.valid(r.PostFormValue("token")) {
		writeResult(w, http.StatusForbidden, actionResult{Message: "Refused: the page's token is missing or expired; reload the page."})
		return
	}
	ns, name := r.PathValue("namespace"), r.PathValue("name")
	revision, _ := strconv.ParseInt(r.PostFormValue("revision"), 10, 64)
	args, ok := actionArgs(r.PostFormValue("action"), ns, name, revision)
	if !ok {
		writeResult(w, http.StatusBadRequest, actionResult{Message: fmt.Sprintf("unknown action %q", r.PostFormValue("action"))})
		return
	}
	ctx, cancel := context.WithTimeout(r.Context(), actionTimeout)
	defer cancel()
	var out, errOut bytes.Buffer
	err := s.opts.Run(ctx, args, &out, &errOut)
	s.opts.Log.Info("action", "command", "kubectl dc "+strings.Join(args, " "), "error", errString(err))
	writeResult(w, http.StatusOK, resultOf(err, out.String(), errOut.String()))
}

// resultOf words a command's outcome for the page: what it printed, and
// its error, a Forbidden named as such.
func resultOf(err error, stdout, stderr string) actionResult {
	message := strings.TrimSpace(strings.TrimSpace(stdout) + "\n" + strings.TrimSpace(stderr))
	if err == nil {
		return actionResult{OK: true, Message: message}
	}
	words := strings.Join(strings.Fields(err.Error()), " ")
	if apierrors.IsForbidden(err) || strings.Contains(words, "forbidden") {
		return actionResult{Forbidden: true, Message: "Forbidden: " + words}
	}
	return actionResult{Message: "Error: " + words}
}

func errString(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

// writeResult writes an action's answer as JSON.
func writeResult(w http.ResponseWriter, status int, res actionResult) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(res)
}
