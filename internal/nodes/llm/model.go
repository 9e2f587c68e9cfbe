package llm

import (
	"fmt"
	"strings"

	"github.com/pflow-go/pflow/internal/value"
)

// Wire protocols.
const (
	wireAnthropic = "anthropic" // Anthropic Messages API (anthropic-sdk-go)
	wireOpenAI    = "openai"    // OpenAI Chat Completions API (openai-go), also every compatible endpoint
)

// provider is a model prefix: which wire protocol, where and with which key.
type provider struct {
	name string
	wire string
	// baseURL is the default endpoint ("" = must be configured).
	baseURL string
	// baseEnv overrides the endpoint.
	baseEnv string
	// keyEnvs are the API key variables, first found wins.
	keyEnvs []string
	// keyRequired makes a missing key a failure before any request.
	keyRequired bool
	// local providers run on the user's machine: cost is 0.
	local bool
	// unreachable is the hint when the endpoint cannot be reached.
	unreachable string
}

var providers = map[string]provider{
	"anthropic":         {name: "anthropic", wire: wireAnthropic, baseURL: "https://api.anthropic.com", baseEnv: "ANTHROPIC_BASE_URL", keyEnvs: []string{"ANTHROPIC_API_KEY"}, keyRequired: true},
	"openai":            {name: "openai", wire: wireOpenAI, baseURL: "https://api.openai.com/v1", baseEnv: "OPENAI_BASE_URL", keyEnvs: []string{"OPENAI_API_KEY"}, keyRequired: true},
	"openai-compatible": {name: "openai-compatible", wire: wireOpenAI, baseEnv: "OPENAI_BASE_URL", keyEnvs: []string{"OPENAI_API_KEY"}},
	"ollama":            {name: "ollama", wire: wireOpenAI, baseURL: "http://localhost:11434/v1", baseEnv: "OLLAMA_BASE_URL", local: true, unreachable: "Is Ollama running? Start it with 'ollama serve' and pull the model with 'ollama pull <model>'"},
	"lmstudio":          {name: "lmstudio", wire: wireOpenAI, baseURL: "http://localhost:1234/v1", baseEnv: "LMSTUDIO_BASE_URL", local: true, unreachable: "Is the LM Studio server running? Start it from LM Studio's Developer tab or with 'lms server start'"},
	"vllm":              {name: "vllm", wire: wireOpenAI, baseURL: "http://localhost:8000/v1", baseEnv: "VLLM_BASE_URL", keyEnvs: []string{"VLLM_API_KEY"}},
	"openrouter":        {name: "openrouter", wire: wireOpenAI, baseURL: "https://openrouter.ai/api/v1", baseEnv: "OPENROUTER_BASE_URL", keyEnvs: []string{"OPENROUTER_API_KEY"}, keyRequired: true},
	"gemini":            {name: "gemini", wire: wireOpenAI, baseURL: "https://generativelanguage.googleapis.com/v1beta/openai/", baseEnv: "GEMINI_BASE_URL", keyEnvs: []string{"GEMINI_API_KEY", "GOOGLE_API_KEY"}, keyRequired: true},
}

func providerNames() string {
	names := value.SortedKeys(providers)
	return strings.Join(names, ", ")
}

// target is a resolved model: everything needed to call it.
type target struct {
	provider provider
	// model is the id sent on the wire ("claude-sonnet-4-5").
	model string
	// id is the canonical provider/model id ("anthropic/claude-sonnet-4-5").
	id      string
	baseURL string
	apiKey  string
	keyVar  string
}

// Env looks a configuration value up (process env, then settings env).
type Env func(key string) (string, bool)

func (e Env) get(k string) string {
	if e == nil {
		return ""
	}
	v, ok := e(k)
	if !ok {
		return ""
	}
	return strings.TrimSpace(v)
}

// Default models chosen by auto-detection, in order.
var autoDetect = []struct{ keyVar, model string }{
	{"ANTHROPIC_API_KEY", "anthropic/claude-sonnet-4-5"},
	{"OPENAI_API_KEY", "openai/gpt-5.2"},
	{"GEMINI_API_KEY", "gemini/gemini-3-flash-preview"},
	{"GOOGLE_API_KEY", "gemini/gemini-3-flash-preview"},
}

// AutoDetectKeys are the API key variables a model is detected from when
// neither the step nor settings name one, in the order they are tried.
func AutoDetectKeys() []string {
	out := make([]string, len(autoDetect))
	for i, c := range autoDetect {
		out[i] = c.keyVar
	}
	return out
}

// DefaultModel picks a model from the API keys that are configured
// (Anthropic, then OpenAI, then Gemini). ok is false when none is.
func DefaultModel(env func(string) (string, bool)) (model string, ok bool) {
	for _, c := range autoDetect {
		if Env(env).get(c.keyVar) != "" {
			return c.model, true
		}
	}
	return "", false
}

// noModelMessage explains how to configure a model.
const noModelMessage = "No LLM model configured and no API key found. Do one of:\n" +
	"  - set an API key: pflow settings set-env ANTHROPIC_API_KEY=<your-key> (or OPENAI_API_KEY), or export it\n" +
	"  - set a default model: pflow settings llm set-default anthropic/claude-sonnet-4-5 (llm.default_model in settings.json)\n" +
	"  - add '- model: ollama/llama3.2' (a local model) to the step"

// resolve turns a model name into a target. baseURL is the step's base_url
// param ("" when unset).
func resolve(model, baseURL string, env Env) (*target, error) {
	model = strings.TrimSpace(model)
	baseURL = strings.TrimSpace(baseURL)
	if model == "" {
		return nil, &Error{Message: noModelMessage}
	}
	var p provider
	name := model
	if i := strings.IndexByte(model, '/'); i > 0 {
		prefix := strings.ToLower(model[:i])
		if known, ok := providers[prefix]; ok {
			p, name = known, model[i+1:]
		} else if baseURL == "" && env.get("OPENAI_BASE_URL") == "" {
			return nil, &Error{Message: fmt.Sprintf("Unknown model provider '%s' in model '%s'. Supported providers: %s. For any other OpenAI-compatible server use 'openai-compatible/<model>' with '- base_url: <url>' or OPENAI_BASE_URL.", model[:i], model, providerNames())}
		}
	}
	if p.name == "" {
		lower := strings.ToLower(name)
		switch {
		case baseURL != "":
			p = providers["openai-compatible"]
		case strings.HasPrefix(lower, "claude-"):
			p = providers["anthropic"]
		case strings.HasPrefix(lower, "gpt-"), strings.HasPrefix(lower, "chatgpt-"),
			strings.HasPrefix(lower, "o1"), strings.HasPrefix(lower, "o3"), strings.HasPrefix(lower, "o4"):
			p = providers["openai"]
		case strings.HasPrefix(lower, "gemini-"):
			p = providers["gemini"]
		case env.get("OPENAI_BASE_URL") != "":
			p = providers["openai-compatible"]
		default:
			return nil, &Error{Message: fmt.Sprintf("Unknown model: %s. Write it with its provider, e.g. anthropic/claude-sonnet-4-5, openai/gpt-5.2, ollama/llama3.2, openrouter/<vendor>/<model>, or openai-compatible/<model> with '- base_url: <url>'. Providers: %s.", model, providerNames())}
		}
	}
	if name == "" {
		return nil, &Error{Message: fmt.Sprintf("Model '%s' has no model name after the provider. Example: %s/<model>", model, p.name)}
	}
	t := &target{provider: p, model: name, id: p.name + "/" + name}
	switch {
	case baseURL != "":
		t.baseURL = baseURL
	case env.get(p.baseEnv) != "":
		t.baseURL = env.get(p.baseEnv)
	default:
		t.baseURL = p.baseURL
	}
	if t.baseURL == "" {
		return nil, &Error{Message: fmt.Sprintf("Model '%s' needs the URL of its OpenAI-compatible server: add '- base_url: http://localhost:8000/v1' to the step, or set %s (pflow settings set-env %s=<url>).", model, p.baseEnv, p.baseEnv)}
	}
	if !strings.HasPrefix(t.baseURL, "http://") && !strings.HasPrefix(t.baseURL, "https://") {
		return nil, &Error{Message: fmt.Sprintf("Invalid base URL %q for model '%s': it must start with http:// or https://", t.baseURL, model)}
	}
	for _, k := range p.keyEnvs {
		if v := env.get(k); v != "" {
			t.apiKey, t.keyVar = v, k
			break
		}
	}
	if t.apiKey == "" && p.keyRequired {
		k := p.keyEnvs[0]
		return nil, &Error{Message: fmt.Sprintf("API key required for model: %s. Set %s: run 'pflow settings set-env %s=<your-key>' (or 'export %s=<your-key>' in the environment pflow starts in).", t.id, k, k, k)}
	}
	if t.keyVar == "" && len(p.keyEnvs) > 0 {
		t.keyVar = p.keyEnvs[0]
	}
	return t, nil
}
