package localprom

import (
	"os"
	"syscall"
)

// sysProcAttr ends Prometheus with the process that started it, so that a
// test binary or dc-local serve that dies leaves no Prometheus behind.
func sysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}

// terminate asks the process to stop.
func terminate(p *os.Process) {
	_ = p.Signal(syscall.SIGTERM)
}
