//go:build !linux

package localprom

import (
	"os"
	"syscall"
)

// sysProcAttr has nothing to add off Linux.
func sysProcAttr() *syscall.SysProcAttr {
	return nil
}

// terminate ends the process.
func terminate(p *os.Process) {
	_ = p.Kill()
}
