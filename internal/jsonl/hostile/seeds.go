package hostile

import (
	"bytes"
	"slices"
)

// Lines are one committed turn of format v0 (seq 0 to 5: a packed row of
// three text chunks, a compaction's user/message), each with its newline:
// the records the fuzz seeds are made of.
var Lines = []string{
	`{"type":"turn/start","seq":0,"time":1,"data":{"turn":1}}` + "\n",
	`{"type":"text-chunks","seq0":1,"time0":2,"data":{"turn":1,"step":1,"index":0,"dt":[1,-1],"texts":["a","b","c"]}}` + "\n",
	`{"type":"user/message","seq":4,"time":3,"data":{},"surfaceOp":{"op":"replace","start":0,"end":2},"sourceEventSeqs":[3,1]}` + "\n",
	`{"type":"turn/end","seq":5,"time":4,"data":{"turn":1,"reason":{"kind":"completed"}}}` + "\n",
}

// Turn2 opens a second turn after Lines.
const Turn2 = `{"type":"turn/start","seq":6,"time":5,"data":{"turn":2}}` + "\n"

// PlainSeeds are the seed bodies (what follows the header line) of the
// fuzzers of plain logs: Lines cut after each record, a torn record, a bad
// record before a turn/end, an unknown type, and a bad record in the last
// turn with and without a turn/end after it.
func PlainSeeds() [][]byte {
	var out [][]byte
	body := ""
	for _, l := range Lines {
		body += l
		out = append(out, []byte(body))
	}
	return append(out, []byte(body+`{"type":"turn/st`), []byte(Lines[0]+"garbage\n"+Lines[3]),
		[]byte(Lines[0]+`{"type":"x/y","seq":1,"time":1,"data":{}}`+"\n"),
		[]byte(body+Turn2+"garbage\n"+`{"type":"step/start","seq":7,"time":5,"data":{}}`+"\n"),
		[]byte(body+Turn2+"garbage\n"+`{"type":"turn/end","seq":7,"time":5,"data":{}}`+"\n"))
}

// ZstdSeeds are the seed bodies (what follows the header frame) of the
// fuzzers of zstd logs, their frames made by frame (zstdframe.AppendFrame,
// which this package cannot import: zstdframe's tests import it): a frame
// per record of Lines cut after each, a torn frame, a frame cut inside a
// record, a skippable frame first, a bad record before a turn/end, and a
// bad record in the last turn inside a frame and as a frame.
func ZstdSeeds(frame func(dst, content []byte) []byte) [][]byte {
	var out [][]byte
	var body []byte
	for _, l := range Lines {
		body = frame(body, []byte(l))
		out = append(out, body)
	}
	return append(out, body[:len(body)-3], frame(nil, []byte(Lines[0] + Lines[1])[:70]),
		append([]byte{0x50, 0x2a, 0x4d, 0x18, 0, 0, 0, 0}, body...),
		frame(nil, []byte(Lines[0]+"garbage\n"+Lines[3])),
		frame(slices.Clip(body), []byte(Turn2+"garbage\n")),
		frame(frame(slices.Clip(body), []byte(Turn2)), []byte(`{"type":"turn/end","seq":7,"ti`+"\n")))
}

// Shapes are small logs of the shapes that cost readers most: runs of
// empty lines, a record of 8 KiB and 2 MiB of NULs (over the fuzzers'
// record and frame limits), a frame that does not end on a record
// boundary. Zstd ones are one frame each (Frame); plain ones leave out
// repeats over 64 KiB.
func Shapes(zstd bool) [][]byte {
	parts := [][]Part{
		{Repeat('\n', 64<<10)},
		{Text(Lines[0]), Repeat('\n', 3), Text(Lines[3])},
		{Text(`{"type":"session/title","seq":0,"time":1,"data":{"title":"`), Repeat('a', 8<<10), Text("\"}}\n")},
		{Repeat(0, 2<<20)},
		{Text(Lines[0]), Repeat('x', 100)},
	}
	var out [][]byte
	for _, p := range parts {
		if zstd {
			out = append(out, Frame(nil, p...))
			continue
		}
		var b []byte
		for _, q := range p {
			if q.Data != nil {
				b = append(b, q.Data...)
			} else if q.N <= 64<<10 {
				b = append(b, bytes.Repeat([]byte{q.Byte}, int(q.N))...)
			}
		}
		out = append(out, b)
	}
	return out
}
