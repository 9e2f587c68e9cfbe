// Package discovery ranks saved workflows and node types against a task
// description without an LLM (see docs/decisions.md, "Discovery without an
// LLM"): BM25F over names,
// descriptions, inputs, outputs, node types and MCP server names, with light
// stemming and a small synonym table. Results are deterministic, carry a
// confidence in [0, 1] and the reasons for the match.
package discovery

import (
	"fmt"
	"math"
	"slices"
	"sort"
	"strings"
	"sync"
)

// Match is one ranked candidate.
type Match struct {
	Name       string   `json:"name"`
	Confidence float64  `json:"confidence"` // in [0, 1]
	Reasons    []string `json:"reasons"`
	// Score is the raw relevance score (comparable only within one ranking).
	Score float64 `json:"score"`
}

// Field is one searchable part of a document.
type Field struct {
	// Label names the field in reasons ("name", "description", "input 'since'", "node type").
	Label  string
	Text   string
	Weight float64
}

// Doc is one candidate to rank.
type Doc struct {
	Name   string
	Fields []Field
}

// BM25 parameters.
const (
	k1 = 1.2
	b  = 0.5
)

// Prepared is a document tokenized for ranking (cacheable: it holds only
// strings and numbers).
type Prepared struct {
	Name   string          `json:"name"`
	Fields []PreparedField `json:"fields"`
}

// PreparedField is a field's stemmed terms.
type PreparedField struct {
	Label  string   `json:"label"`
	Weight float64  `json:"weight"`
	Terms  []string `json:"terms"`
}

// Prepare tokenizes a document.
func Prepare(d Doc) Prepared {
	p := Prepared{Name: d.Name, Fields: make([]PreparedField, 0, len(d.Fields))}
	for _, f := range d.Fields {
		w := f.Weight
		if w == 0 {
			w = 1
		}
		p.Fields = append(p.Fields, PreparedField{Label: f.Label, Weight: w, Terms: tokenize(f.Text)})
	}
	return p
}

// Rank scores docs against query and returns up to limit matches with a
// non-zero score, best first. limit <= 0 means all.
func Rank(query string, docs []Doc, limit int) []Match {
	ps := make([]Prepared, len(docs))
	for i, d := range docs {
		ps[i] = Prepare(d)
	}
	return RankPrepared(query, ps, limit)
}

// RankPrepared is Rank over prepared documents.
func RankPrepared(query string, docs []Prepared, limit int) []Match {
	qterms := queryTerms(query)
	if len(qterms) == 0 || len(docs) == 0 {
		return nil
	}
	// Every distinct form of every query concept gets an id.
	formID := map[string]int{}
	for _, q := range qterms {
		for _, f := range q.forms {
			if _, ok := formID[f.term]; !ok {
				formID[f.term] = len(formID)
			}
		}
	}
	nf := len(formID)
	tf := make([]float64, len(docs)*nf) // weighted tf of form j in doc i
	lengths := make([]float64, len(docs))
	df := make([]int, nf)
	var total float64
	seen := make([]bool, nf)
	for i, d := range docs {
		clear(seen)
		for _, f := range d.Fields {
			lengths[i] += f.Weight * float64(len(f.Terms))
			for _, t := range f.Terms {
				if j, ok := formID[t]; ok {
					tf[i*nf+j] += f.Weight
					if !seen[j] {
						seen[j] = true
						df[j]++
					}
				}
			}
		}
		total += lengths[i]
	}
	n := float64(len(docs))
	avg := total / n
	if avg == 0 {
		avg = 1
	}
	idf := func(j int) float64 {
		d := float64(df[j])
		return math.Log(1 + (n-d+0.5)/(d+0.5))
	}
	var qIDF float64
	for _, q := range qterms {
		best := 0.0
		for _, f := range q.forms {
			if df[formID[f.term]] > 0 {
				best = math.Max(best, idf(formID[f.term]))
			}
		}
		if best == 0 {
			// A word no candidate contains: weighted like a word only one
			// candidate has, so it lowers every match's coverage.
			best = math.Log(1 + (n-1+0.5)/(1+0.5))
		}
		q.idf = best
		qIDF += best
	}

	var out []Match
	bestForm := make([]string, len(qterms))
	for i, d := range docs {
		score, covered := 0.0, 0.0
		any := false
		for qi, q := range qterms {
			best := 0.0
			bestForm[qi] = ""
			for _, f := range q.forms {
				j := formID[f.term]
				x := tf[i*nf+j]
				if x == 0 {
					continue
				}
				sc := f.boost * idf(j) * x * (k1 + 1) / (x + k1*(1-b+b*lengths[i]/avg))
				if sc > best {
					best, bestForm[qi] = sc, f.term
				}
			}
			if best > 0 {
				score += best
				covered += q.idf
				any = true
			}
		}
		if !any {
			continue
		}
		// Reasons: which field matched which query word.
		hits := map[string][]string{}
		var labels []string
		for qi, q := range qterms {
			if bestForm[qi] == "" {
				continue
			}
			for _, f := range d.Fields {
				if slices.Contains(f.Terms, bestForm[qi]) {
					if _, ok := hits[f.Label]; !ok {
						labels = append(labels, f.Label)
					}
					if !slices.Contains(hits[f.Label], q.word) {
						hits[f.Label] = append(hits[f.Label], q.word)
					}
					break
				}
			}
		}
		reasons := make([]string, 0, len(labels))
		for _, l := range labels {
			reasons = append(reasons, fmt.Sprintf("%s matches %s", l, quoteJoin(hits[l])))
		}
		coverage := 0.0
		if qIDF > 0 {
			coverage = covered / qIDF
		}
		out = append(out, Match{Name: d.Name, Score: score, Confidence: coverage, Reasons: reasons})
	}
	sort.SliceStable(out, func(i, j int) bool {
		if out[i].Score != out[j].Score {
			return out[i].Score > out[j].Score
		}
		return out[i].Name < out[j].Name
	})
	if len(out) > 0 {
		top := out[0].Score
		for i := range out {
			// Coverage of the query says how much of the task is explained;
			// the score relative to the best says how it compares.
			c := out[i].Confidence * (0.55 + 0.45*out[i].Score/top)
			out[i].Confidence = math.Round(math.Min(1, math.Max(0, c))*100) / 100
		}
		// Final order: confidence (coverage of the task and relative
		// score), then raw score, then name.
		sort.SliceStable(out, func(i, j int) bool {
			if out[i].Confidence != out[j].Confidence {
				return out[i].Confidence > out[j].Confidence
			}
			if out[i].Score != out[j].Score {
				return out[i].Score > out[j].Score
			}
			return out[i].Name < out[j].Name
		})
	}
	if limit > 0 && len(out) > limit {
		out = out[:limit]
	}
	return out
}

func quoteJoin(ws []string) string {
	q := make([]string, len(ws))
	for i, w := range ws {
		q[i] = "'" + w + "'"
	}
	return strings.Join(q, ", ")
}

type form struct {
	term  string
	boost float64
}

type qterm struct {
	word  string
	forms []form
	idf   float64
}

// queryTerms turns the query into concepts: each word's stem plus synonyms
// at a lower weight.
func queryTerms(q string) []*qterm {
	var out []*qterm
	seen := map[string]bool{}
	for _, w := range words(q) {
		if vocab().stopwords[w] {
			continue
		}
		st := stem(w)
		if seen[st] {
			continue
		}
		seen[st] = true
		qt := &qterm{word: w, forms: []form{{st, 1}}}
		for _, syn := range vocab().synonyms[st] {
			s := stem(syn)
			if s != st {
				qt.forms = append(qt.forms, form{s, 0.7})
			}
		}
		out = append(out, qt)
	}
	return out
}

// tokenize returns the stems of text's words, stopwords removed.
func tokenize(s string) []string {
	ws := words(s)
	out := ws[:0]
	for _, w := range ws {
		if !vocab().stopwords[w] {
			out = append(out, stem(w))
		}
	}
	return out
}

// words splits on anything that is not a letter or digit (bytes >= 0x80
// count as letters), and splits camelCase and snake/kebab names.
func words(s string) []string {
	out := make([]string, 0, len(s)/6+1)
	start := -1
	prevLower := false
	for i := 0; i < len(s); i++ {
		c := s[i]
		isUpper := c >= 'A' && c <= 'Z'
		isLower := c >= 'a' && c <= 'z'
		isWord := isUpper || isLower || (c >= '0' && c <= '9') || c >= 0x80
		switch {
		case !isWord:
			if start >= 0 {
				out = append(out, strings.ToLower(s[start:i]))
				start = -1
			}
		case isUpper && prevLower && start >= 0:
			out = append(out, strings.ToLower(s[start:i]))
			start = i
		case start < 0:
			start = i
		}
		prevLower = isWord && !isUpper
	}
	if start >= 0 {
		out = append(out, strings.ToLower(s[start:]))
	}
	return out
}

// stem is a light English stemmer: enough to match "issues"/"issue",
// "summarize"/"summarizing"/"summary", "fetched"/"fetch".
func stem(w string) string {
	if len(w) <= 3 {
		return w
	}
	if s, ok := irregular[w]; ok {
		return s
	}
	for _, suf := range []struct{ s, r string }{
		{"izations", "ize"}, {"ization", "ize"}, {"ational", "ate"}, {"iness", "y"},
		{"ies", "y"}, {"ied", "y"}, {"ying", "y"},
		{"sses", "ss"}, {"ing", ""}, {"ed", ""}, {"es", ""}, {"ly", ""}, {"s", ""},
	} {
		if strings.HasSuffix(w, suf.s) && len(w)-len(suf.s)+len(suf.r) >= 3 {
			base := w[:len(w)-len(suf.s)] + suf.r
			if suf.s == "s" && (strings.HasSuffix(w, "ss") || strings.HasSuffix(w, "us") || strings.HasSuffix(w, "is")) {
				continue
			}
			if suf.s == "es" && !(strings.HasSuffix(base, "sh") || strings.HasSuffix(base, "ch") || strings.HasSuffix(base, "x") || strings.HasSuffix(base, "s") || strings.HasSuffix(base, "z")) {
				// "issues" → "issue", "files" → "file": drop only the s.
				base = w[:len(w)-1]
			}
			// Undo doubled consonants: "shipped" → "ship".
			if (suf.s == "ing" || suf.s == "ed") && len(base) > 3 && base[len(base)-1] == base[len(base)-2] && !strings.ContainsRune("lsz", rune(base[len(base)-1])) {
				base = base[:len(base)-1]
			}
			w = base
			break
		}
	}
	// Drop a final silent e so "summarize"/"summarizing" and "compute"/"computing" meet.
	if len(w) > 4 && strings.HasSuffix(w, "e") && !strings.HasSuffix(w, "ee") {
		w = w[:len(w)-1]
	}
	return w
}

var irregular = map[string]string{
	"summary": "summariz", "summaries": "summariz", "summarise": "summariz", "summarised": "summariz",
	"children": "child", "data": "data", "news": "news", "status": "status", "analysis": "analyz",
	"analyses": "analyz", "analyse": "analyz", "analyze": "analyz", "analyzing": "analyz", "analyzed": "analyz",
	"pdfs": "pdf", "repos": "repo", "repositories": "repo", "repository": "repo",
}

// vocabulary is the stopword and synonym tables, built on first use rather
// than at package initialisation: every pflow process links this package,
// few search.
type vocabulary struct {
	stopwords map[string]bool
	synonyms  map[string][]string // stem → the other words of its groups
}

var vocab = sync.OnceValue(buildVocabulary)

func buildVocabulary() *vocabulary {
	v := &vocabulary{stopwords: map[string]bool{}, synonyms: map[string][]string{}}
	stopwords, synonyms := v.stopwords, v.synonyms
	for _, w := range strings.Fields(`a an and are as at be by for from has have i in into is it its
		me my of on or our please so some that the their them then this to up us using via want we
		what when which will with workflow would you your can could should need needs something thing things
		one all each every given new get gets`) {
		stopwords[w] = true
	}
	// Synonym groups: every word of a group expands to the others.
	for _, g := range [][]string{
		{"summarize", "summary", "digest", "tldr", "condense", "recap"},
		{"fetch", "download", "retrieve", "pull", "grab", "scrape"},
		{"send", "post", "notify", "message", "alert"},
		{"issue", "ticket", "bug"},
		{"pr", "pull-request", "merge"},
		{"changelog", "release-notes", "changes"},
		{"translate", "translation", "language"},
		{"convert", "transform", "turn"},
		{"image", "picture", "photo", "screenshot"},
		{"csv", "spreadsheet", "table"},
		{"email", "mail", "gmail", "inbox"},
		{"chat", "slack", "discord"},
		{"commit", "git", "history"},
		{"report", "overview"},
		{"weather", "forecast", "temperature"},
		{"search", "find", "lookup", "query"},
		{"delete", "remove", "clean", "cleanup", "prune"},
		{"backup", "archive", "snapshot"},
		{"test", "tests", "ci"},
		{"deploy", "release", "ship"},
		{"json", "api", "http", "endpoint", "rest"},
		{"article", "blog", "post"},
		{"tweet", "twitter", "x"},
		{"docs", "documentation", "readme"},
		{"count", "stats", "statistics", "metrics"},
		{"log", "logs"},
		{"website", "site", "page", "url", "web"},
		{"llm", "ai", "gpt", "claude", "model"},
		{"daily", "standup", "morning"},
		{"rename", "organize", "sort"},
		{"dependency", "dependencies", "packages", "outdated"},
		{"meeting", "calendar", "agenda"},
		{"video", "youtube", "transcript"},
	} {
		for _, w := range g {
			for _, o := range g {
				if o != w {
					synonyms[stem(w)] = append(synonyms[stem(w)], o)
				}
			}
		}
	}
	return v
}
