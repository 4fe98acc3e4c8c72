// Command dshctl inspects and repairs the session logs of the DeepSeek
// Harness (dsh): list and stat sessions, print a log, append events (which
// repairs a torn tail first), and replay web-client event traces.
package main

import "os"

func main() {
	os.Exit(run(os.Args[1:], newEnv()))
}
