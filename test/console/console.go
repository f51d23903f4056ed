// Package console reads the commands a Markdown page shows in its
// ```console blocks, so that a test can run a page's commands as a reader
// would type them and compare what they print with what the page shows.
package console

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"regexp"
	"strconv"
	"strings"
)

// Command is one command of a console block, with the output the page
// shows for it.
type Command struct {
	// Section is the title of the "## " section the command is in, "" before
	// the first.
	Section string
	// Block counts the page's console blocks, from 0.
	Block int
	// Line is the command's line in the page, from 1.
	Line int
	// Text is the command, without its "$ ".
	Text string
	// Output are the lines shown after the command; "..." stands for any
	// lines.
	Output []string
	// Exit is the exit code a "# exits N" comment announces, else 0.
	Exit int
}

// exitComment is how a page says a command fails: `$ cmd  # exits 1`.
var exitComment = regexp.MustCompile(`\s+# exits (\d+)$`)

// Read returns the commands of the page at path: the lines of its
// ```console blocks starting with "$ ", each followed by the output lines
// the page shows.
func Read(path string) ([]Command, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var cmds []Command
	section, block, inConsole := "", -1, false
	scanner := bufio.NewScanner(bytes.NewReader(data))
	for n := 1; scanner.Scan(); n++ {
		line := scanner.Text()
		switch {
		case !inConsole && strings.HasPrefix(line, "## "):
			section = strings.TrimPrefix(line, "## ")
		case !inConsole && line == "```console":
			inConsole = true
			block++
		case inConsole && line == "```":
			inConsole = false
		case inConsole && strings.HasPrefix(line, "$ "):
			c := Command{Section: section, Block: block, Line: n, Text: strings.TrimPrefix(line, "$ ")}
			if m := exitComment.FindStringSubmatch(c.Text); m != nil {
				c.Exit, _ = strconv.Atoi(m[1])
			}
			cmds = append(cmds, c)
		case inConsole && len(cmds) > 0 && cmds[len(cmds)-1].Block == block:
			cmds[len(cmds)-1].Output = append(cmds[len(cmds)-1].Output, line)
		case inConsole:
			return nil, fmt.Errorf("%s:%d: output before any command of the block", path, n)
		}
	}
	if inConsole {
		return nil, fmt.Errorf("%s: a console block is not closed", path)
	}
	return cmds, nil
}
