package termui

// Style is the ANSI escape sequence (SGR) that starts a text style on a
// terminal; callers use one only for a terminal without NO_COLOR.
type Style string

// The styles dshctl's output uses.
const (
	Bold   Style = "\x1b[1m"
	Dim    Style = "\x1b[2m"
	Red    Style = "\x1b[31m"
	Green  Style = "\x1b[32m"
	Yellow Style = "\x1b[33m"
	Blue   Style = "\x1b[34m"
	Cyan   Style = "\x1b[36m"
	// Magenta is for the names grep's matches are grouped under, as
	// ripgrep shows file names; BoldRed for the matches, as grep does.
	Magenta Style = "\x1b[35m"
	BoldRed Style = "\x1b[1;31m"
)

// reset ends a style.
const reset = "\x1b[0m"

// AppendStyled appends s in style st to dst, and a reset after it.
func AppendStyled(dst []byte, st Style, s string) []byte {
	dst = append(dst, st...)
	dst = append(dst, s...)
	return append(dst, reset...)
}

// AppendReset appends the end of a style: for text styled in pieces,
// started with append(dst, st...).
func AppendReset(dst []byte) []byte { return append(dst, reset...) }

// Styled returns s in style st.
func Styled(st Style, s string) string { return string(st) + s + reset }
