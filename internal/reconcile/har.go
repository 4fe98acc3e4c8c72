package reconcile

import (
	"bufio"
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/dshctl/dshctl/internal/rawjson"
)

// A browser capture is a HAR 1.2 file as Chrome DevTools saves it ("Save all
// as HAR with content"): every request of the page, with its response body,
// and the WebSocket frames in the entry of the socket (_webSocketMessages).
// DecodeCapture maps it to one trace per tab by the shape of the traffic,
// not by URL, since servers mount their API under different prefixes
// (replay.md, "Captured traces").

// maxEntry bounds one entry of a capture; a HAR is read entry by entry.
const maxEntry = 256 << 20

// maxCaptureKept bounds what a capture's traces keep of it (frames, the
// bodies of sends and of chunk answers): its records are merged in time
// order, so they are all held at once. Everything else in a HAR (assets,
// other requests) is read and let go.
var maxCaptureKept int64 = 256 << 20

// ErrNotCapture: the file is JSON but not a HAR capture.
var ErrNotCapture = errors.New("not a HAR capture")

// IsCaptureName reports whether path names a HAR file.
func IsCaptureName(path string) bool { return strings.HasSuffix(strings.ToLower(path), ".har") }

// LooksLikeCapture reports whether a file that starts with head should be
// read as a capture rather than as a JSONL trace: its first line is not a
// whole trace record (a HAR is one JSON document over many lines), or is a
// one-line document with a "log" member.
func LooksLikeCapture(head []byte) bool {
	head = bytes.TrimPrefix(head, []byte("\xef\xbb\xbf"))
	line, _, _ := bytes.Cut(head, []byte("\n"))
	line = bytes.TrimSpace(line)
	if len(line) == 0 || line[0] != '{' {
		return len(bytes.TrimSpace(head)) > 0 && bytes.TrimSpace(head)[0] == '{'
	}
	if rawjson.Check(line) != nil {
		return true
	}
	isLog, hasK := false, false
	members(line, func(key, _ []byte) {
		switch string(fieldName(key)) {
		case "log":
			isLog = true
		case "k":
			hasK = true
		}
	})
	return isLog || !hasK
}

// ConvertedName is the file name of a capture's tab written as a trace:
// the capture's name without its extension, then the tab, in characters
// safe in a file name everywhere.
func ConvertedName(capture, tab string) string {
	base := capture[strings.LastIndexAny(capture, `/\`)+1:]
	if dot := strings.LastIndexByte(base, '.'); dot > 0 {
		base = base[:dot]
	}
	return SafeName(base+"-"+tab) + ".jsonl"
}

// SafeName replaces what is not a letter, digit, '_', '.' or '-' by '_'.
func SafeName(s string) string {
	return strings.Map(func(r rune) rune {
		if r < utf8.RuneSelf && (r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '_' || r == '.' || r == '-') {
			return r
		}
		return '_'
	}, s)
}

// harEntry is what the mapping reads of an entry.
type harEntry struct {
	StartedDateTime string  `json:"startedDateTime"`
	Time            float64 `json:"time"`
	Request         struct {
		Method   string `json:"method"`
		URL      string `json:"url"`
		PostData *struct {
			Text string `json:"text"`
		} `json:"postData"`
	} `json:"request"`
	Response struct {
		Status  int `json:"status"`
		Content struct {
			Size     float64 `json:"size"`
			MimeType string  `json:"mimeType"`
			Text     *string `json:"text"`
			Encoding string  `json:"encoding"`
		} `json:"content"`
	} `json:"response"`
	Error    string         `json:"_error"`
	Messages []harWSMessage `json:"_webSocketMessages"`
}

type harWSMessage struct {
	Type   string  `json:"type"`
	Time   float64 `json:"time"`
	Opcode float64 `json:"opcode"`
	Data   string  `json:"data"`
}

// timed is a record of a tab at a time (µs since the epoch); http records
// (class 1) sort after frames (class 0) of the same time.
type timed struct {
	at    int64
	class int
	n     int // order of arrival, for a stable merge
	rec   Record
	from  string // where in the capture the record comes from
}

// capture gathers the records of each tab while the entries are read.
type capture struct {
	path     string
	in       interner
	rows     rowCache
	tabs     map[string]*tabRecords
	statuses []timed // statuses frames, given to every tab they name

	frames, ignoredSent, binary, notJSON, noTab int
	otherJSON                                   int // JSON frames without a type: another protocol
	sockets                                     int
	apiBodies, apiWithout                       int // JSON API responses, and those saved without their body
	otherRequests                               int // neither a send, a cancel nor a chunk fetch
	skipped                                     []string
	n                                           int
	fetchPaths                                  map[string]bool // chunk endpoints seen, by path with the tab as {tab}
	failedGets                                  []failedGet

	// Frames of the chat protocol that do not decode: the capture
	// cannot be replayed, the first says why.
	unreadable int
	firstBad   error

	kept int64 // bytes of the capture its records keep (maxCaptureKept)
}

type failedGet struct {
	entry int
	e     harEntry
}

type tabRecords struct {
	recs       []timed
	firstFrame int64
	fetches    []pendingFetch
	dropped    struct{ initial, older int }
}

type pendingFetch struct {
	start, end int64
	rec        Record
	from       string
}

// DecodeCapture reads a HAR capture and returns one trace per tab, sorted by
// tab id, each named after the capture and its tab. A file that is not a
// HAR, a capture without WebSocket frames, one saved without response
// bodies and one holding a frame of the chat protocol that does not decode
// are errors naming the file and what is missing or wrong.
func DecodeCapture(r io.Reader, path string) ([]*Trace, error) {
	c := &capture{path: path, in: interner{}, rows: rowCache{}, tabs: map[string]*tabRecords{}, fetchPaths: map[string]bool{}}
	if err := c.read(r); err != nil {
		return nil, err
	}
	return c.traces()
}

// bom is the UTF-8 byte order mark some editors write first; JSON text
// must not start with it, so readers skip it.
var bom = []byte("\xef\xbb\xbf")

// skipBOM returns r without a leading byte order mark, and its length.
func skipBOM(r io.Reader) (io.Reader, int) {
	br, ok := r.(*bufio.Reader)
	if !ok {
		br = bufio.NewReader(r)
	}
	if head, _ := br.Peek(len(bom)); bytes.Equal(head, bom) {
		br.Discard(len(bom))
		return br, len(bom)
	}
	return br, 0
}

// budget fails a read once more than maxEntry bytes arrived since mark:
// one entry may not make the decoder buffer without bound.
type budget struct {
	r    io.Reader
	read int64
	mark int64
}

func (b *budget) Read(p []byte) (int, error) {
	if b.read-b.mark > maxEntry {
		return 0, fmt.Errorf("an entry is larger than %d MiB", maxEntry>>20)
	}
	n, err := b.r.Read(p)
	b.read += int64(n)
	return n, err
}

func (c *capture) fail(format string, args ...any) error {
	return fmt.Errorf("%s: "+format, append([]any{c.path}, args...)...)
}

// harReader walks a capture's JSON with a streaming decoder, entry by entry,
// naming in its errors where in the file it was.
type harReader struct {
	c       *capture
	b       *budget
	dec     *json.Decoder
	skipped int    // bytes of a byte order mark skipped
	started bool   // a token was read: the file is not empty
	in      string // the value being decoded, for errors
}

// read walks {"log": {…, "entries": [ … ]}} entry by entry.
func (c *capture) read(r io.Reader) error {
	r, skipped := skipBOM(r)
	b := &budget{r: r, read: int64(skipped)}
	h := &harReader{c: c, b: b, dec: json.NewDecoder(b), skipped: skipped}
	h.dec.UseNumber()
	found := false
	if err := h.open('{', "the file is not a JSON object with log.entries"); err != nil {
		return err
	}
	err := h.members("", "log", func() error {
		if err := h.open('{', "log is not an object"); err != nil {
			return err
		}
		return h.members("log.", "entries", func() error {
			found = true
			return h.entries()
		})
	})
	if err != nil {
		return err
	}
	if !found {
		return c.fail("%w: no log.entries", ErrNotCapture)
	}
	return nil
}

// bad says what a decoding error means for the file.
func (h *harReader) bad(err error) error {
	var syn *json.SyntaxError
	switch {
	case errors.Is(err, io.EOF) && !h.started:
		return h.c.fail("%w: the file is empty", ErrNotCapture)
	case errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF):
		// The decoder's offsets are where the value it was reading
		// started; what was read is where the file ends.
		where := ""
		if h.in != "" {
			where = ", inside " + h.in
		}
		return h.c.fail("malformed JSON: the file ends at byte %d%s (cut short?)", h.b.read, where)
	case errors.As(err, &syn) && h.in != "":
		// A syntax error's offset counts from no fixed point of the
		// file when it comes from Decode: name the value instead.
		return h.c.fail("malformed JSON in %s: %v", h.in, err)
	case errors.As(err, &syn):
		return h.c.fail("malformed JSON at byte %d: %v", h.dec.InputOffset()+int64(h.skipped), err)
	}
	return h.c.fail("%v", err)
}

func (h *harReader) token() (json.Token, error) {
	tok, err := h.dec.Token()
	if err == nil {
		h.started = true
	}
	return tok, err
}

// open reads the delimiter that opens the value expected, or says what the
// file is not.
func (h *harReader) open(want json.Delim, what string) error {
	tok, err := h.token()
	if err != nil {
		return h.bad(err)
	}
	if tok != want {
		return h.c.fail("%w: %s", ErrNotCapture, what)
	}
	return nil
}

// members walks the members of the object just opened, and its end; inner
// reads the value of the member name, the others are skipped (each within
// the entry budget).
func (h *harReader) members(path, name string, inner func() error) error {
	for h.dec.More() {
		key, err := h.token()
		if err != nil {
			return h.bad(err)
		}
		if key == name {
			if err := inner(); err != nil {
				return err
			}
			continue
		}
		var skip json.RawMessage
		h.b.mark = h.b.read
		h.in = fmt.Sprintf("%s%v", path, key)
		if err := h.dec.Decode(&skip); err != nil {
			return h.bad(err)
		}
		h.in = ""
	}
	if _, err := h.token(); err != nil {
		return h.bad(err)
	}
	return nil
}

// entries reads the array log.entries, giving each entry to the capture.
func (h *harReader) entries() error {
	if err := h.open('[', "log.entries is not an array"); err != nil {
		return err
	}
	for i := 0; h.dec.More(); i++ {
		var raw json.RawMessage
		h.b.mark = h.b.read
		h.in = fmt.Sprintf("log.entries[%d]", i)
		if err := h.dec.Decode(&raw); err != nil {
			return h.bad(err)
		}
		h.in = ""
		var e harEntry
		if err := json.Unmarshal(raw, &e); err != nil {
			h.c.skipped = append(h.c.skipped, fmt.Sprintf("entry %d: %v", i, err))
			continue
		}
		h.c.entry(i, &e)
		if h.c.kept > maxCaptureKept {
			return h.c.fail("the capture's WebSocket frames, sends and chunk answers pass %d MiB at log.entries[%d]: it is too large to replay at once; save a shorter session", maxCaptureKept>>20, i)
		}
	}
	if _, err := h.token(); err != nil {
		return h.bad(err)
	}
	return nil
}

// micros converts epoch seconds to µs.
func micros(sec float64) int64 { return int64(sec*1e6 + 0.5) }

func (c *capture) tab(id string) *tabRecords {
	t := c.tabs[id]
	if t == nil {
		t = &tabRecords{firstFrame: -1}
		c.tabs[id] = t
	}
	return t
}

func (c *capture) add(tab string, at int64, class int, rec Record, from string) {
	t := c.tab(tab)
	c.n++
	t.recs = append(t.recs, timed{at: at, class: class, n: c.n, rec: rec, from: from})
}

// stamp writes a capture time (µs since the epoch) as termui does: RFC
// 3339, UTC, milliseconds.
func stamp(at int64) string {
	return time.UnixMicro(at).UTC().Format("2006-01-02T15:04:05.000Z07:00")
}

// frameAt names a WebSocket frame of a capture as jq would find it: the
// socket's index in log.entries, the frame's in its _webSocketMessages,
// and when it came.
func frameAt(entry, k int, at int64) string {
	return fmt.Sprintf("entry %d frame %d (received %s)", entry, k, stamp(at))
}

// requestAt names request entry of a capture, and what happened at.
func requestAt(entry int, method, path, what string, at int64) string {
	return fmt.Sprintf("entry %d (%s %s, %s %s)", entry, method, path, what, stamp(at))
}

func (c *capture) entry(i int, e *harEntry) {
	if e.Messages != nil {
		c.sockets++
		for k, m := range e.Messages {
			c.message(i, k, m)
		}
		return
	}
	start, err := time.Parse(time.RFC3339Nano, e.StartedDateTime)
	if err != nil {
		c.skipped = append(c.skipped, fmt.Sprintf("entry %d: startedDateTime %q", i, e.StartedDateTime))
		return
	}
	at := start.UnixMicro()
	end := at + int64(e.Time*1000)
	body, hasBody := responseBody(e)
	if strings.Contains(e.Response.Content.MimeType, "json") && e.Response.Content.Size > 0 {
		c.apiBodies++
		if !hasBody {
			c.apiWithout++
		}
	}
	u, err := url.Parse(e.Request.URL)
	if err != nil {
		u = &url.URL{}
	}
	failed := e.Response.Status >= 400 || e.Response.Status == 0 || e.Error != ""
	used := false
	switch strings.ToUpper(e.Request.Method) {
	case "POST":
		used = c.post(i, e, u, at, end, body, hasBody, failed)
	case "GET":
		used = c.get(i, e, u, at, end, body, failed)
	}
	if !used {
		c.otherRequests++
	}
}

// responseBody returns the response's text, decoded when Chrome stored it
// as base64.
func responseBody(e *harEntry) ([]byte, bool) {
	t := e.Response.Content.Text
	if t == nil {
		return nil, false
	}
	if e.Response.Content.Encoding == "base64" {
		b, err := base64.StdEncoding.DecodeString(*t)
		if err != nil {
			return nil, false
		}
		return b, true
	}
	return []byte(*t), true
}

// object decodes b as a JSON object, or returns nil.
func object(b []byte) []byte {
	b = bytes.TrimSpace(b)
	if len(b) == 0 || b[0] != '{' || rawjson.Check(b) != nil {
		return nil
	}
	return b
}

func member(obj []byte, name string) []byte {
	var v []byte
	if obj != nil {
		members(obj, func(key, val []byte) {
			if string(fieldName(key)) == name {
				v = val
			}
		})
	}
	return v
}

func stringMember(obj []byte, name string) string {
	if v := member(obj, name); v != nil && v[0] == '"' {
		return stringOf(v)
	}
	return ""
}

// message reads frame k of the socket of entry i.
func (c *capture) message(i, k int, m harWSMessage) {
	if m.Type != "receive" {
		c.ignoredSent++
		return
	}
	if m.Opcode != 1 {
		c.binary++
		return
	}
	data := object([]byte(m.Data))
	if data == nil {
		c.notJSON++
		return
	}
	at := micros(m.Time)
	ev, err := decodeEvent(data, c.in)
	if err != nil {
		// A frame with a type is one of the chat protocol (or of a
		// newer one): leaving it out would change the verdict, so the
		// capture cannot be replayed. JSON without a type is another
		// protocol's (a heartbeat, a dev server's).
		if typ := stringMember(data, "type"); typ == "" {
			c.otherJSON++
		} else {
			c.unreadable++
			if c.firstBad == nil {
				c.firstBad = fmt.Errorf("%s, a %q frame: %w", frameAt(i, k, at), typ, err)
			}
		}
		return
	}
	c.frames++
	c.kept += int64(len(m.Data))
	from := frameAt(i, k, at)
	rec := Record{Kind: KindWS, Ev: ev}
	switch {
	case ev.Type == "statuses":
		c.n++
		c.statuses = append(c.statuses, timed{at: at, n: c.n, rec: rec, from: from})
		// It goes to every tab it names (replay.md), and is that tab's
		// frame: a tab it alone names is a trace too, and the history
		// load rule counts from it.
		for id := range ev.Statuses {
			if id == "" {
				continue
			}
			if t := c.tab(id); t.firstFrame < 0 || at < t.firstFrame {
				t.firstFrame = at
			}
		}
	case ev.TabID == "":
		c.noTab++
	default:
		t := c.tab(ev.TabID)
		if t.firstFrame < 0 || at < t.firstFrame {
			t.firstFrame = at
		}
		c.add(ev.TabID, at, 0, rec, from)
	}
}

// tabOf finds the tab a request is about: tabId in its body, else a segment
// of its URL path that names a known tab.
func (c *capture) tabOf(body []byte, u *url.URL) string {
	if t := stringMember(body, "tabId"); t != "" {
		return t
	}
	for _, seg := range strings.Split(u.Path, "/") {
		if _, ok := c.tabs[seg]; ok && seg != "" {
			return seg
		}
	}
	return ""
}

// post maps a POST of entry i to a send or a cancel; false when it is
// neither.
func (c *capture) post(i int, e *harEntry, u *url.URL, at, end int64, resp []byte, hasResp, failed bool) bool {
	var req []byte
	if e.Request.PostData != nil {
		req = object([]byte(e.Request.PostData.Text))
	}
	if req == nil {
		return false
	}
	if strings.HasSuffix(strings.TrimSuffix(u.Path, "/"), "/cancel") {
		id := stringMember(req, "messageId")
		if id == "" {
			id = stringMember(req, "queueId")
		}
		if id == "" {
			return false
		}
		c.addTo(c.tabOf(req, u), at, Record{Kind: KindCancel, ID: id}, "POST "+u.Path, requestAt(i, "POST", u.Path, "sent", at))
		return true
	}
	c.kept += int64(len(req))
	msg := member(req, "message")
	if msg == nil || msg[0] != '"' {
		return false
	}
	id := stringMember(req, "queueId")
	if id == "" {
		id = "har-" + strconv.FormatInt(at, 36) + "-" + strconv.Itoa(c.n)
	}
	tab := c.tabOf(req, u)
	if !c.addTo(tab, at, Record{Kind: KindSend, ID: id, Text: stringOf(msg)}, "POST "+u.Path, requestAt(i, "POST", u.Path, "sent", at)) {
		return true
	}
	if e.Time < 0 {
		return true // no answer within the capture
	}
	ans := Record{Kind: KindHTTP, ID: id, Status: "ok"}
	body := object(resp)
	switch {
	case failed:
		ans.Status = "error"
	case !hasResp:
		ans.Status = "" // the capture lost it: reported as a capture without content
	default:
		if s := stringMember(body, "status"); s == "queued" {
			ans.Status = "queued"
		}
		ans.MessageID = stringMember(body, "messageId")
	}
	if ans.Status == "" {
		c.skipped = append(c.skipped, fmt.Sprintf("POST %s: the answer's body was not saved", u.Path))
		return true
	}
	c.add(tab, end, 1, ans, requestAt(i, "POST", u.Path, "answered", end))
	return true
}

// addTo adds an HTTP record of a request about tab, or notes that the
// request names no tab.
func (c *capture) addTo(tab string, at int64, rec Record, what, from string) bool {
	if tab == "" {
		c.skipped = append(c.skipped, what+": names no tab")
		return false
	}
	c.add(tab, at, 1, rec, from)
	return true
}

// get maps a GET of entry i to a chunk fetch; false when it is none (a
// failed GET is decided once every chunk endpoint is known).
func (c *capture) get(i int, e *harEntry, u *url.URL, at, end int64, resp []byte, failed bool) bool {
	if failed {
		c.failedGets = append(c.failedGets, failedGet{i, *e})
		return true
	}
	body := object(resp)
	v := member(body, "chunks")
	if v == nil || v[0] != '[' {
		return false
	}
	c.kept += int64(len(v))
	rows, err := decodeChunks("chunks", v, c.in, c.rows)
	if err != nil {
		c.skipped = append(c.skipped, fmt.Sprintf("GET %s: %v", u.Path, err))
		return true
	}
	tab := ""
	for _, r := range rows {
		if r.TabID != "" {
			tab = r.TabID
			break
		}
	}
	if tab == "" {
		tab = c.tabOf(nil, u)
	}
	if tab == "" {
		c.skipped = append(c.skipped, fmt.Sprintf("GET %s: chunks of no known tab", u.Path))
		return true
	}
	c.fetchPaths[strings.Replace(u.Path, "/"+tab+"/", "/{tab}/", 1)] = true
	t := c.tab(tab)
	if u.Query().Has("before") {
		t.dropped.older++
		return true
	}
	if rows == nil {
		rows = []Chunk{}
	}
	t.fetches = append(t.fetches, pendingFetch{start: at, end: end, rec: Record{Kind: KindFetch, HasRows: true, Rows: rows, rows: newRowSet(rows)},
		from: requestAt(i, "GET", u.Path, "answered", end)})
	return true
}

// failedFetches maps failed GETs to fetch errors when their path is that of
// a chunk endpoint seen answering; the others are other requests.
func (c *capture) failedFetches() {
	for _, g := range c.failedGets {
		e := &g.e
		u, err := url.Parse(e.Request.URL)
		if err == nil && u.Query().Has("before") && c.tabOf(nil, u) != "" {
			c.tab(c.tabOf(nil, u)).dropped.older++
			continue
		}
		tab := ""
		if err == nil {
			tab = c.tabOf(nil, u)
		}
		start, terr := time.Parse(time.RFC3339Nano, e.StartedDateTime)
		if tab == "" || terr != nil || !c.fetchPaths[strings.Replace(u.Path, "/"+tab+"/", "/{tab}/", 1)] {
			c.otherRequests++
			continue
		}
		at := start.UnixMicro()
		end := at + int64(max(e.Time, 0)*1000)
		c.tab(tab).fetches = append(c.tab(tab).fetches, pendingFetch{start: at, end: end, rec: Record{Kind: KindFetch, FetchErr: true},
			from: requestAt(g.entry, "GET", u.Path, "failed", end)})
	}
}

func (c *capture) traces() ([]*Trace, error) {
	if c.sockets == 0 || c.frames+c.binary+c.notJSON+c.otherJSON+c.unreadable == 0 {
		return nil, c.fail("the capture holds no WebSocket frames: open DevTools (Network) before the page connects, use the chat, then save with \"Save all as HAR with content\"")
	}
	if c.apiBodies > 0 && c.apiWithout == c.apiBodies {
		return nil, c.fail("the capture has no response bodies (%d JSON responses saved without content): save it with \"Save all as HAR with content\"", c.apiWithout)
	}
	if c.unreadable > 0 {
		// As a frame of a trace file whose fields have other shapes
		// than replay.md's: a checker never passes on traffic it could
		// not read.
		return nil, c.fail("%s of the chat protocol cannot be read; the first, %w", plural(c.unreadable, "frame"), c.firstBad)
	}
	c.failedFetches()
	var ids []string
	for id, t := range c.tabs {
		if t.firstFrame >= 0 {
			ids = append(ids, id)
		} else {
			c.skipped = append(c.skipped, fmt.Sprintf("tab %s: requests but no frame of its own", id))
		}
	}
	if len(ids) == 0 {
		return nil, c.fail("no WebSocket frame of the chat protocol (a JSON object with type and tabId) among %d frames", c.frames+c.binary+c.notJSON+c.otherJSON)
	}
	slices.Sort(ids)
	base := c.path[strings.LastIndexAny(c.path, `/\`)+1:]
	var common []string
	if n := c.ignoredSent + c.binary + c.notJSON + c.otherJSON + c.noTab; n > 0 {
		common = append(common, fmt.Sprintf("capture: %s ignored (%d sent by the page, %d binary, %d not JSON, %d JSON without a type, %d of no tab)",
			plural(n, "frame"), c.ignoredSent, c.binary, c.notJSON, c.otherJSON, c.noTab))
	}
	if c.otherRequests > 0 {
		common = append(common, fmt.Sprintf("capture: %s ignored (not a send, a cancel or a chunk fetch: assets, other API calls)", plural(c.otherRequests, "other request")))
	}
	slices.Sort(c.skipped)
	for _, s := range c.skipped {
		common = append(common, "capture: "+s+"; left out")
	}
	var out []*Trace
	for _, id := range ids {
		t := c.tabs[id]
		recs := t.recs
		for _, r := range c.statuses {
			if _, ok := r.rec.Ev.Statuses[id]; ok {
				recs = append(recs, r)
			}
		}
		// Fetches: the page's history load (before the socket) and pages
		// of older history are not requests the client model issues.
		slices.SortStableFunc(t.fetches, func(a, b pendingFetch) int { return cmpInt(a.start, b.start) })
		req := 0
		for _, f := range t.fetches {
			if f.end < t.firstFrame {
				t.dropped.initial++
				continue
			}
			req++
			f.rec.Req = req
			c.n++
			recs = append(recs, timed{at: f.end, class: 1, n: c.n, rec: f.rec, from: f.from})
		}
		slices.SortStableFunc(recs, func(a, b timed) int {
			if d := cmpInt(a.at, b.at); d != 0 {
				return d
			}
			if d := a.class - b.class; d != 0 {
				return d
			}
			return a.n - b.n
		})
		tr := &Trace{Name: base + " " + id, Source: c.path, Tab: id, Notes: common,
			Meta: &Meta{Version: 1, Tab: id, Name: base + " " + id}}
		tr.Records, tr.Origins = make([]Record, len(recs)), make([]string, len(recs))
		for k, r := range recs {
			tr.Records[k], tr.Origins[k] = r.rec, r.from
		}
		if n := t.dropped.initial + t.dropped.older; n > 0 {
			tr.Notes = append(slices.Clip(tr.Notes), fmt.Sprintf("tab %s: %s left out (%s before the socket opened, %s of older history)",
				id, plural(n, "chunk fetch"), plural(t.dropped.initial, "history load"), plural(t.dropped.older, "page")))
		}
		out = append(out, tr)
	}
	return out, nil
}

// plural renders n with its noun: "1 frame", "3 frames", "2 chunk fetches".
func plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	if strings.HasSuffix(noun, "ch") || strings.HasSuffix(noun, "s") {
		return strconv.Itoa(n) + " " + noun + "es"
	}
	return strconv.Itoa(n) + " " + noun + "s"
}

func cmpInt(a, b int64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}
