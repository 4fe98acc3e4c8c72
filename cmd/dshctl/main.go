// Command dshctl inspects and repairs the session logs of the DeepSeek
// Harness (dsh): list and stat sessions, read, check and repair logs, append
// events, export sessions, and replay web-client event traces.
package main

import "os"

func main() {
	os.Exit(run(os.Args[1:], newEnv()))
}
