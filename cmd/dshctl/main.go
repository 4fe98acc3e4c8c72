// Command dshctl inspects and repairs the session logs of the DeepSeek
// Harness (dsh): list and stat sessions, print, verify, repair and export
// a log, append events (which repairs a torn tail first), and replay
// web-client event traces and browser captures.
//
// The commands parse flags, open the store (store.Request, through
// store.OpenSession or store.OpenSessions) and print through
// internal/sessionview and internal/termui; each does its job with one
// internal function:
//
//	command     does its job with                       prints with
//	list        inspect.ListSelect                      sessionview.PrintList
//	stat        inspect.Stat                            sessionview.PrintStat
//	cat         inspect.Stream (--raw: export.WriteRaw) sessionview.PrintLog, PrintRaw
//	append      ingest.Append                           sessionview.PrintAppend
//	verify      verify.Run                              sessionview.VerifyPrinter
//	export      export.ToFile (-O -: export.Session;    sessionview.PrintExports,
//	            several or --all: export.ToDir)         ReportExports
//	replay      replay.Run (--convert: replay.Convert)  replay.Printer
//	version     buildinfo.Read                          -
//	completion  store.Complete (session ids)            cobra
//
// Errors are worded by sessionview.Explain and printed, with their exit
// status, by termui.Report. Long help texts are help/*.txt.
package main

import "os"

func main() {
	os.Exit(run(os.Args[1:], newEnv()))
}
