// Package suggest finds close matches for "did you mean" hints: edit
// distance, a similarity score, and the closest candidates.
package suggest

import (
	"sort"
	"strings"
)

// Similarity returns a score in [0, 1] for how close a and b are:
// 1 for a case-insensitive match, otherwise 1 - editDistance/maxLen on the
// lowercased strings, with separators '-' and '_' treated as equal. A
// candidate that contains the word (or vice versa, for words of 3+ chars)
// scores at least 0.75.
func Similarity(a, b string) float64 {
	la, lb := normWord(a), normWord(b)
	if la == lb {
		return 1
	}
	if la == "" || lb == "" {
		return 0
	}
	d := Distance(la, lb)
	m := len(la)
	if len(lb) > m {
		m = len(lb)
	}
	score := 1 - float64(d)/float64(m)
	if len(la) >= 3 && len(lb) >= 3 && (strings.Contains(la, lb) || strings.Contains(lb, la)) && score < 0.75 {
		score = 0.75
	}
	return score
}

func normWord(s string) string {
	s = strings.ToLower(s)
	return strings.ReplaceAll(s, "_", "-")
}

// Distance is the Levenshtein edit distance between a and b (in runes).
func Distance(a, b string) int {
	ra, rb := []rune(a), []rune(b)
	prev := make([]int, len(rb)+1)
	cur := make([]int, len(rb)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(ra); i++ {
		cur[0] = i
		for j := 1; j <= len(rb); j++ {
			cost := 1
			if ra[i-1] == rb[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(rb)]
}

// Closest returns up to n candidates whose Similarity to word is at least
// cutoff, best first (ties keep the candidates' order). The word itself is
// never suggested.
func Closest(word string, candidates []string, n int, cutoff float64) []string {
	type scored struct {
		s     string
		score float64
		pos   int
	}
	var list []scored
	seen := map[string]bool{}
	for i, c := range candidates {
		if c == word || seen[c] {
			continue
		}
		seen[c] = true
		if sc := Similarity(word, c); sc >= cutoff {
			list = append(list, scored{c, sc, i})
		}
	}
	sort.SliceStable(list, func(i, j int) bool { return list[i].score > list[j].score })
	var out []string
	for _, s := range list {
		if len(out) == n {
			break
		}
		out = append(out, s.s)
	}
	return out
}

// Near returns up to n candidates within edit distance max(minDist,
// len(word)/3) of word, a candidate that contains word or is contained in it
// counting as distance 1; nearest first, ties alphabetical. Unlike Closest it
// keeps short substring matches ("gh" finds "gh-pr").
func Near(word string, candidates []string, n, minDist int) []string {
	type cand struct {
		s string
		d int
	}
	var cs []cand
	for _, c := range candidates {
		d := Distance(word, c)
		if strings.Contains(c, word) || strings.Contains(word, c) {
			d = min(d, 1)
		}
		if d <= max(minDist, len(word)/3) {
			cs = append(cs, cand{c, d})
		}
	}
	sort.SliceStable(cs, func(i, j int) bool {
		if cs[i].d != cs[j].d {
			return cs[i].d < cs[j].d
		}
		return cs[i].s < cs[j].s
	})
	var out []string
	for i := 0; i < len(cs) && i < n; i++ {
		out = append(out, cs[i].s)
	}
	return out
}
