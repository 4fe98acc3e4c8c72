package seam

import "testing"

// BenchmarkDecodeRecord decodes the records a reader meets most: a plain
// event line and a packed chunk row (dsh 0.1.0's own bytes).
func BenchmarkDecodeRecord(b *testing.B) {
	for _, c := range []struct{ name, line string }{
		{"event", `{"type":"tool/result","seq":26,"time":1785331619104,"data":{"turn":1,"step":1,"message":{"id":"msg-tool-call_01_read","role":"user","source":{"kind":"tool","callId":"call_01_read"},"content":[{"type":"tool-result","toolCallId":"call_01_read","content":"#!/usr/bin/env bash\nset -euo pipefail\nnpm ci\nnpx tsc -p tsconfig.build.json\nnpx esbuild src/main.ts --bundle --outfile=dist/main.js\ncp -r public dist/public\n"}]}},"sourceEventSeqs":[22],"surfaceOp":"append"}`},
		{"packed", `{"type":"reasoning-chunks","seq0":7,"time0":1785331618665,"data":{"turn":1,"step":1,"index":0,"dt":[6,12,47,16,21,21],"texts":["The user want","s a summary o","f the build s","cript. I shou","ld read build",".sh first bef","ore answering."]}}`},
	} {
		b.Run(c.name, func(b *testing.B) {
			line := []byte(c.line)
			b.SetBytes(int64(len(line)))
			b.ReportAllocs()
			for b.Loop() {
				if _, err := DecodeRecord(line, 0); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
