package command

import "unicode"

// maxSuggestLen is the longest word (in characters) Suggest compares; longer
// words and candidates get no suggestion, which keeps Suggest's time and
// memory bounded whatever it is given.
const maxSuggestLen = 64

// Suggest returns the candidate closest to word, for a "did you mean …?"
// reply: the one at the smallest Damerau–Levenshtein distance (optimal
// string alignment: insertions, deletions, substitutions and swaps of two
// adjacent characters, each counting 1), compared without regard to case,
// and only when that distance is at most 2 — at most 1 for a word of 3 or 4
// characters, and 0 (a difference of case only) for a word of 1 or 2. Among candidates at the same
// distance the first wins. A candidate equal to word but for case is
// returned at distance 0. ok is false when no candidate is close enough, or
// word is empty or longer than 64 characters.
//
// The decision handler uses it for options ("`aprove` is not an option of
// D-001; did you mean `approve`?"), and Parse for near-miss command words.
func Suggest(word string, candidates []string) (string, bool) {
	var w [maxSuggestLen]rune
	wn, ok := foldRunes(word, &w)
	if !ok || wn == 0 {
		return "", false
	}
	limit := suggestLimit(wn)
	best, bestD := -1, limit+1
	var c [maxSuggestLen]rune
	for i, cand := range candidates {
		cn, ok := foldRunes(cand, &c)
		if !ok || cn == 0 {
			continue
		}
		if d := osaDistance(w[:wn], c[:cn], bestD); d < bestD {
			best, bestD = i, d
			if d == 0 {
				break
			}
		}
	}
	if best < 0 {
		return "", false
	}
	return candidates[best], true
}

// suggestLimit is the largest distance Suggest accepts for a word of n
// characters.
func suggestLimit(n int) int {
	switch {
	case n <= 2:
		return 0
	case n <= 4:
		return 1
	}
	return 2
}

// foldRunes puts the case-folded characters of s into buf; ok is false when
// s has more than len(buf) characters.
func foldRunes(s string, buf *[maxSuggestLen]rune) (int, bool) {
	if len(s) > 4*maxSuggestLen {
		return 0, false
	}
	n := 0
	for _, r := range s {
		if n == len(buf) {
			return 0, false
		}
		buf[n] = unicode.ToLower(r)
		n++
	}
	return n, true
}

// osaDistance is the optimal string alignment distance between a and b (at
// most 64 characters each), or a value ≥ bound when it is at least bound.
func osaDistance(a, b []rune, bound int) int {
	if d := len(a) - len(b); d >= bound || -d >= bound {
		return bound
	}
	var rows [3][maxSuggestLen + 1]uint8 // distances are at most 64
	prev2, prev, cur := &rows[0], &rows[1], &rows[2]
	for j := 0; j <= len(b); j++ {
		prev[j] = uint8(j)
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = uint8(i)
		rowMin := cur[0]
		for j := 1; j <= len(b); j++ {
			cost := uint8(1)
			if a[i-1] == b[j-1] {
				cost = 0
			}
			v := min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
			if i > 1 && j > 1 && a[i-1] == b[j-2] && a[i-2] == b[j-1] {
				v = min(v, prev2[j-2]+1)
			}
			cur[j] = v
			rowMin = min(rowMin, v)
		}
		if int(rowMin) >= bound {
			return bound
		}
		prev2, prev, cur = prev, cur, prev2
	}
	return int(prev[len(b)])
}
