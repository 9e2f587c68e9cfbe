package llm

import (
	"math"
	"strings"
)

// price is USD per million tokens.
type price struct{ input, output float64 }

// pricing is a small static table (USD per 1M tokens), keyed by model name
// without provider. Dated snapshots ("claude-sonnet-4-5-20250929") and
// "-latest" aliases resolve to their base entry.
var pricing = map[string]price{
	// Anthropic
	"claude-opus-4-5":   {5, 25},
	"claude-opus-4-1":   {15, 75},
	"claude-opus-4":     {15, 75},
	"claude-sonnet-4-5": {3, 15},
	"claude-sonnet-4":   {3, 15},
	"claude-3-7-sonnet": {3, 15},
	"claude-3-5-sonnet": {3, 15},
	"claude-haiku-4-5":  {1, 5},
	"claude-3-5-haiku":  {0.8, 4},
	"claude-3-haiku":    {0.25, 1.25},
	// OpenAI
	"gpt-5.2":      {1.75, 14},
	"gpt-5.1":      {1.25, 10},
	"gpt-5":        {1.25, 10},
	"gpt-5-mini":   {0.25, 2},
	"gpt-5-nano":   {0.05, 0.4},
	"gpt-4.1":      {2, 8},
	"gpt-4.1-mini": {0.4, 1.6},
	"gpt-4.1-nano": {0.1, 0.4},
	"gpt-4o":       {2.5, 10},
	"gpt-4o-mini":  {0.15, 0.6},
	"o1":           {15, 60},
	"o3":           {2, 8},
	"o3-mini":      {1.1, 4.4},
	"o4-mini":      {1.1, 4.4},
	// Google
	"gemini-3-flash-preview": {0.5, 3},
	"gemini-2.5-pro":         {1.25, 10},
	"gemini-2.5-flash":       {0.3, 2.5},
}

// lookupPrice finds the price of a model (provider prefix allowed).
func lookupPrice(model string) (price, bool) {
	name := strings.ToLower(model)
	if i := strings.LastIndexByte(name, '/'); i >= 0 {
		name = name[i+1:]
	}
	if p, ok := pricing[name]; ok {
		return p, true
	}
	best := ""
	for k := range pricing {
		if len(k) <= len(best) || !strings.HasPrefix(name, k+"-") {
			continue
		}
		rest := name[len(k)+1:]
		if rest == "latest" || (rest != "" && rest[0] >= '0' && rest[0] <= '9') {
			best = k
		}
	}
	if best == "" {
		return price{}, false
	}
	return pricing[best], true
}

// Cost returns the USD cost of a call, or nil when the model's price is
// unknown. Cache writes are billed at 2× the input price and cache reads at
// 0.1× (as in the original pflow).
func Cost(model string, u Usage) *float64 {
	p, ok := lookupPrice(model)
	if !ok {
		return nil
	}
	c := (float64(u.InputTokens)*p.input +
		float64(u.CacheCreationInputTokens)*p.input*2 +
		float64(u.CacheReadInputTokens)*p.input*0.1 +
		float64(u.OutputTokens)*p.output) / 1e6
	c = math.Round(c*1e8) / 1e8
	return &c
}
