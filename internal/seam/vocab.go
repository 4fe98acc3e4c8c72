package seam

import (
	"slices"
	"strings"
)

// vocabV0 is the event vocabulary of format v0 (and v1).
var vocabV0 = words(`agent-preset/selected agent/inbox/spliced approval/asked
approval/decided approval/policy assistant/chunk assistant/message command/done
command/run compaction/end compaction/prune compaction/start compaction/summary
feedback/record goal/change hook/invoked hook/result llm/retry llm/retry-started
permission/preset plan/mode request/context request/header sandbox/mode
schedule/change session/end-seed session/title session/title-llm-request step/end
step/start subagent/descriptor team/member team/message/delivered
team/message/queued team/task todo/write tool-workflow/agent-end
tool-workflow/agent-start tool-workflow/run-end tool-workflow/run-start tool/call
tool/code-dispatch tool/code-dispatch-start tool/result turn/end turn/start
user/message web/deepseek-search-llm-request`)

// vocab holds one table per format version.
var vocab = func() [MaxVersion + 1]map[string]bool {
	var t [MaxVersion + 1]map[string]bool
	t[0] = vocabV0
	t[1] = vocabV0
	t[2] = edit(vocabV0, "assistant/chunk", "")
	t[3] = edit(t[2], "", "system/message")
	t[4] = edit(t[3], "tool/code-dispatch tool/code-dispatch-start",
		`tool/ptc-dispatch tool/ptc-dispatch-start assistant/attempt developer/message
		deliverables/presented feedback/message-delete feedback/message-put
		image/offload model/selection session-log-deepseek/delivery-accepted
		subagent/catalog subagent/model-selection-policy workspace/changes`)
	return t
}()

// surfaceV0 are the event types that carry a surfaceOp up to v2; v3 adds
// system/message.
var (
	surfaceV0 = words("user/message assistant/message tool/result")
	surfaceV3 = edit(surfaceV0, "", "system/message")
)

// KnownType reports whether typ is in the vocabulary of version v.
func KnownType(v int, typ string) bool {
	if v < 0 || v > MaxVersion {
		return false
	}
	return vocab[v][typ]
}

// IsSurfaceType reports whether events of typ must carry a surfaceOp in
// version v.
func IsSurfaceType(v int, typ string) bool {
	if v >= 3 {
		return surfaceV3[typ]
	}
	return surfaceV0[typ]
}

// Vocabulary returns the event types of version v, sorted (nil for a
// version dshctl does not know).
func Vocabulary(v int) []string {
	if v < 0 || v > MaxVersion {
		return nil
	}
	out := make([]string, 0, len(vocab[v]))
	for t := range vocab[v] {
		out = append(out, t)
	}
	slices.Sort(out)
	return out
}

func words(s string) map[string]bool {
	m := map[string]bool{}
	for _, w := range strings.Fields(s) {
		m[w] = true
	}
	return m
}

// edit copies base without the words of remove and with those of add.
func edit(base map[string]bool, remove, add string) map[string]bool {
	m := make(map[string]bool, len(base))
	for k := range base {
		m[k] = true
	}
	for _, w := range strings.Fields(remove) {
		delete(m, w)
	}
	for _, w := range strings.Fields(add) {
		m[w] = true
	}
	return m
}
