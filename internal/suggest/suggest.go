// Package suggest finds what a mistyped word most likely meant, for the
// "did you mean" hints of unknown flags, event types and session ids.
package suggest

import (
	"slices"
	"unicode/utf8"
)

// maxCompared bounds the runes of a word compared: a word is a flag, a
// type or an id, and a hostile argument must not cost quadratic time.
const maxCompared = 256

// Nearest returns the candidates closest to word, at most three, sorted:
// those within a few edits (Distance) of it, or, for a word that may be
// a prefix (an id typed in part), of a candidate's start of the same
// length. Nothing is returned when no candidate is that close.
func Nearest(word string, candidates []string, prefixes bool) []string {
	n := utf8.RuneCountInString(word)
	if n == 0 || n > maxCompared {
		return nil
	}
	// One edit up to 15 runes, two from 16, …: a closer bound would name a
	// random id of a large store for any word of the same shape.
	limit := max(1, n/8)
	best := limit + 1
	var out []string
	for _, c := range candidates {
		d := distance(word, c, limit)
		if prefixes {
			d = min(d, prefixDistance(word, c, limit))
		}
		switch {
		case d > limit:
		case d < best:
			best, out = d, []string{c}
		case d == best:
			out = append(out, c)
		}
	}
	slices.Sort(out)
	out = slices.Compact(out)
	if len(out) > 3 {
		out = out[:3]
	}
	return out
}

// prefixDistance is the distance of word to the start of c that is as
// long as word, give or take a rune.
func prefixDistance(word, c string, limit int) int {
	n := utf8.RuneCountInString(word)
	r := []rune(c)
	d := limit + 1
	for k := n - 1; k <= n+1; k++ {
		if k > 0 && k <= len(r) {
			d = min(d, distance(word, string(r[:k]), limit))
		}
	}
	return d
}

// Distance is the edit distance of a and b, counting an insertion, a
// deletion, a substitution or a swap of two neighbours as one edit
// (Damerau's optimal string alignment), in runes, each cut to its first
// maxCompared.
func Distance(a, b string) int { return distance(a, b, maxCompared) }

// distance is Distance, or limit+1 as soon as it is known to be over
// limit.
func distance(a, b string, limit int) int {
	ra, rb := []rune(a), []rune(b)
	ra, rb = ra[:min(len(ra), maxCompared)], rb[:min(len(rb), maxCompared)]
	if d := len(ra) - len(rb); d > limit || -d > limit {
		return limit + 1
	}
	// Three rows of the table: the one before the previous holds what a
	// swap builds on.
	prev2 := make([]int, len(rb)+1)
	prev := make([]int, len(rb)+1)
	cur := make([]int, len(rb)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(ra); i++ {
		cur[0] = i
		rowMin := cur[0]
		for j := 1; j <= len(rb); j++ {
			cost := 1
			if ra[i-1] == rb[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
			if i > 1 && j > 1 && ra[i-1] == rb[j-2] && ra[i-2] == rb[j-1] {
				cur[j] = min(cur[j], prev2[j-2]+1)
			}
			rowMin = min(rowMin, cur[j])
		}
		if rowMin > limit {
			return limit + 1
		}
		prev2, prev, cur = prev, cur, prev2
	}
	return prev[len(rb)]
}
