package sandbox

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"runtime"
	"syscall"
)

func init() {
	if len(os.Args) == 2 && os.Args[1] == LauncherArg {
		os.Exit(launch())
	}
}

// launch is the launcher: it reads its instructions from descriptor 3,
// confines its thread (confine) and executes the command from that
// thread. It returns only on failure: 126 when it could not confine (the
// command did not run), 127 when the command could not be executed.
func launch() int {
	f := os.NewFile(3, "sandbox instructions")
	var in instructions
	err := json.NewDecoder(io.LimitReader(f, 64<<20)).Decode(&in)
	f.Close()
	if err != nil || len(in.Argv) == 0 {
		fmt.Fprintf(os.Stderr, "git+ sandbox: reading the launcher's instructions: %v\n", err)
		return 126
	}
	if in.Dir != "" {
		if err := os.Chdir(in.Dir); err != nil {
			fmt.Fprintf(os.Stderr, "git+ sandbox: %v\n", err)
			return 126
		}
	}
	// Everything from here on happens on this one thread, which executes
	// the command: Landlock, no_new_privs and capabilities are a thread's.
	runtime.LockOSThread()
	if err := confine(in); err != nil {
		fmt.Fprintf(os.Stderr, "git+ sandbox: confining %s: %v (the command did not run)\n", in.Argv[0], err)
		return 126
	}
	path, err := exec.LookPath(in.Argv[0])
	if err != nil {
		fmt.Fprintf(os.Stderr, "git+ sandbox: %v\n", err)
		return 127
	}
	err = syscall.Exec(path, in.Argv, in.Env)
	fmt.Fprintf(os.Stderr, "git+ sandbox: running %s: %v\n", path, err)
	return 127
}
