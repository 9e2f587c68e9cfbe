// Package llm implements the `llm` node and a small completion API for other
// packages (discovery reranking).
//
// Providers. Models are named provider/model ("anthropic/claude-sonnet-4-5",
// "openai/gpt-5.2", "ollama/llama3.2", "openrouter/<vendor>/<model>",
// "openai-compatible/<model>"); bare names resolve by prefix (claude-* →
// anthropic, gpt-*/o1*/o3*/o4*/chatgpt-* → openai, gemini-* → gemini), and
// any other bare name goes to the OpenAI-compatible endpoint in the step's
// base_url or OPENAI_BASE_URL. Anthropic is called through
// github.com/anthropics/anthropic-sdk-go (POST /v1/messages); OpenAI and every
// compatible server through github.com/openai/openai-go/v3's Chat Completions
// API (POST <base>/chat/completions). Keys come from ANTHROPIC_API_KEY,
// OPENAI_API_KEY, OPENROUTER_API_KEY, GEMINI_API_KEY (or GOOGLE_API_KEY),
// VLLM_API_KEY, looked up through the request's Env (process env, then
// settings env); endpoints from the matching *_BASE_URL variables.
//
// Structured output (output_schema): OpenAI gets response_format
// {type: json_schema, json_schema: {name: "response", schema}} (non-strict,
// so any schema is accepted); Anthropic is forced to call a single tool named
// "structured_output" whose input_schema is the schema (tool_choice
// {type: tool}), which works on every Claude model. A schema whose top level
// is not an object is wrapped as {result: <schema>} and unwrapped again. The
// answer is validated against the schema.
//
// Retries (3 attempts, 1 s apart; see docs/decisions.md, "Retries per node
// type") are the runtime's: the SDKs' own
// retries are off. Rate limits (429), server errors (5xx), timeouts, network
// errors and answers that do not match output_schema are returned as Go
// errors (retried); a missing key, an authentication error, any other 4xx and
// a malformed response body fail the step at once.
package llm

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/pflow-go/pflow/internal/fsutil"
	"github.com/pflow-go/pflow/internal/node"
	"github.com/pflow-go/pflow/internal/value"
)

// DefaultTimeout bounds one call.
const DefaultTimeout = 5 * time.Minute

// MissingPrompt is the Python pflow's message for a step without a prompt.
const MissingPrompt = `LLM node requires 'prompt' parameter. Use template syntax like "prompt": "${previous_node.output}" to wire data from other nodes.`

// Usage is a call's token usage and cost, the llm_usage output. InputTokens
// excludes cached input (CacheCreationInputTokens, CacheReadInputTokens);
// TotalTokens is the sum of all four counts. CostUSD is nil when the model's
// price is unknown.
type Usage struct {
	Model                    string   `json:"model"`
	InputTokens              int64    `json:"input_tokens"`
	OutputTokens             int64    `json:"output_tokens"`
	TotalTokens              int64    `json:"total_tokens"`
	CacheCreationInputTokens int64    `json:"cache_creation_input_tokens"`
	CacheReadInputTokens     int64    `json:"cache_read_input_tokens"`
	CostUSD                  *float64 `json:"cost_usd"`
}

// Map renders the usage as the llm_usage output value.
func (u Usage) Map() map[string]any {
	m := map[string]any{
		"model":                       u.Model,
		"input_tokens":                u.InputTokens,
		"output_tokens":               u.OutputTokens,
		"total_tokens":                u.TotalTokens,
		"cache_creation_input_tokens": u.CacheCreationInputTokens,
		"cache_read_input_tokens":     u.CacheReadInputTokens,
		"cost_usd":                    nil,
	}
	if u.CostUSD != nil {
		m["cost_usd"] = *u.CostUSD
	}
	return m
}

// CompletionRequest is a plain text completion.
type CompletionRequest struct {
	// Model is a provider/model id or bare name; "" auto-detects from the
	// configured API keys (see DefaultModel).
	Model       string
	System      string
	Prompt      string
	MaxTokens   int
	Temperature *float64
}

// Completion is a model's answer.
type Completion struct {
	// Text is the answer, with a single enclosing code fence stripped.
	Text  string
	Usage Usage
}

// Error is a failed LLM call. Message is user-facing and never contains an
// API key. Retryable reports whether trying again may help (rate limit,
// server error, network, timeout).
type Error struct {
	Model     string
	Message   string
	Retryable bool
	Err       error
}

func (e *Error) Error() string {
	if e.Model == "" {
		return e.Message
	}
	return fmt.Sprintf("LLM call failed. Model: %s. Error: %s", e.Model, e.Message)
}

func (e *Error) Unwrap() error { return e.Err }

var errCallTimeout = errors.New("LLM call timed out")

// Complete runs one completion. env looks up API keys and base URLs
// (process env, then settings env). Errors are *Error.
func Complete(ctx context.Context, req CompletionRequest, env func(string) (string, bool)) (*Completion, error) {
	model := req.Model
	if model == "" {
		m, ok := DefaultModel(env)
		if !ok {
			return nil, &Error{Message: noModelMessage}
		}
		model = m
	}
	t, err := resolve(model, "", Env(env))
	if err != nil {
		return nil, err
	}
	if strings.TrimSpace(req.Prompt) == "" {
		return nil, &Error{Message: "the prompt is empty"}
	}
	c := &call{t: t, system: req.System, prompt: req.Prompt, maxTokens: req.MaxTokens, temperature: req.Temperature}
	ctx, cancel := context.WithTimeoutCause(ctx, DefaultTimeout, errCallTimeout)
	defer cancel()
	r, err := c.do(ctx)
	if err != nil {
		return nil, err
	}
	return &Completion{Text: stripFence(r.text), Usage: r.usage}, nil
}

// Spec returns the `llm` node type. defaultModel is settings.llm.default_model
// ("" when unset: the model is then auto-detected from the API keys).
func Spec(defaultModel string) *node.Spec {
	n := &llmNode{defaultModel: strings.TrimSpace(defaultModel)}
	return &node.Spec{
		Type:  "llm",
		Group: "llm",
		// An LLM call changes nothing but costs money and is not
		// deterministic: safe to repeat, cached only when a step opts in.
		Effects: node.Effects{ReadOnly: true},
		Interface: node.Interface{
			Description: "Call a large language model (Anthropic, OpenAI, or any OpenAI-compatible server such as Ollama, vLLM, LM Studio, OpenRouter) with a prompt; optional system prompt, images and structured output.",
			Params: []node.Field{
				{Key: "prompt", Type: "str", Required: true, Also: []string{"message", "input", "text", "question", "user", "user_prompt", "messages"}, Description: "The prompt. Wire data in with templates: ${previous.output}."},
				{Key: "system", Type: "str", Also: []string{"system_prompt", "system_message", "instructions"}, Description: "System prompt."},
				{Key: "model", Type: "str", Description: "provider/model, e.g. anthropic/claude-sonnet-4-5, openai/gpt-5.2, ollama/llama3.2 (default: settings llm.default_model, else detected from API keys)."},
				{Key: "temperature", Type: "float", Description: "Sampling temperature, 0–2 (Anthropic accepts up to 1)."},
				{Key: "max_tokens", Type: "int", Description: "Maximum tokens in the answer (Anthropic default 8192)."},
				{Key: "images", Type: "list|str", Description: "Image file paths or URLs (a single value is accepted). png, jpeg, gif, webp."},
				{Key: "output_schema", Type: "dict", Description: "JSON Schema of a structured answer; response is then the parsed object."},
				{Key: "base_url", Type: "str", Description: "URL of an OpenAI-compatible server (e.g. http://localhost:11434/v1)."},
				{Key: "timeout", Type: "int", Default: int64(300), Description: "Seconds to wait for one answer."},
			},
			Outputs: []node.Field{
				{Key: "response", Type: "any", Description: "The answer text (a single enclosing code fence stripped), or the parsed object when output_schema is set."},
				{Key: "llm_usage", Type: "dict", Description: "Token usage and cost of the call.", Structure: []node.Field{
					{Key: "model", Type: "str"},
					{Key: "input_tokens", Type: "int"},
					{Key: "output_tokens", Type: "int"},
					{Key: "total_tokens", Type: "int"},
					{Key: "cache_creation_input_tokens", Type: "int"},
					{Key: "cache_read_input_tokens", Type: "int"},
					{Key: "cost_usd", Type: "float", Description: "null when the model's price is unknown"},
				}},
				{Key: "error", Type: "str", Description: "Error message when the call failed."},
			},
			Actions: []string{"default", "error"},
		},
		Attempts:   3,
		RetryWait:  time.Second,
		Node:       n,
		Check:      check,
		StdinParam: "prompt",
		MainOutput: "response",
	}
}

type llmNode struct {
	defaultModel string
}

func (n *llmNode) Run(ctx context.Context, req *node.Request) (*node.Result, error) {
	fail := func(msg string) (*node.Result, error) {
		return node.Fail(msg, map[string]any{"response": "", "llm_usage": map[string]any{}}), nil
	}
	// refuse fails a step whose params no retry changes (a wrong type, an
	// invalid value, no prompt): once, even when the step sets retries.
	refuse := func(msg string) (*node.Result, error) {
		res, _ := fail(msg)
		res.Permanent = true
		return res, nil
	}
	p := req.Params
	prompt := node.String(p, "prompt", "")
	if strings.TrimSpace(prompt) == "" {
		return refuse(MissingPrompt)
	}
	model := strings.TrimSpace(node.String(p, "model", ""))
	if model == "" {
		model = n.defaultModel
	}
	env := Env(req.Env)
	if model == "" {
		m, ok := DefaultModel(req.Env)
		if !ok {
			return fail(noModelMessage)
		}
		model = m
	}
	t, err := resolve(model, node.String(p, "base_url", ""), env)
	if err != nil {
		return fail(err.Error())
	}
	c := &call{t: t, prompt: prompt, system: node.String(p, "system", "")}
	if c.temperature, err = temperatureOf(p); err != nil {
		return refuse(err.Error())
	}
	if f := c.temperature; f != nil && t.provider.wire == wireAnthropic && *f > 1 {
		fmt.Fprintf(logOf(req), "warning: step '%s': Anthropic accepts temperature up to 1; using 1 instead of %s\n", req.NodeID, value.FormatFloat(*f))
		one := 1.0
		c.temperature = &one
	}
	if c.maxTokens, err = maxTokensOf(p); err != nil {
		return refuse(err.Error())
	}
	if c.images, err = loadImages(p["images"], req.WorkflowDir); err != nil {
		var pe *node.ParamError
		if errors.As(err, &pe) {
			return refuse(err.Error())
		}
		return fail(err.Error()) // a missing file may yet appear: retried when the step sets retries
	}
	schema, validator, err := schemaOf(p)
	if err != nil {
		return refuse(err.Error())
	}
	if schema != nil {
		c.schema, c.wrapped = objectSchema(schema)
	}
	timeout, err := node.Duration(p, "timeout", DefaultTimeout)
	if err != nil {
		return refuse(err.Error())
	}
	if timeout <= 0 {
		timeout = DefaultTimeout
	}

	cctx, cancel := context.WithTimeoutCause(ctx, timeout, errCallTimeout)
	defer cancel()
	r, err := c.do(cctx)
	if err != nil {
		var e *Error
		if errors.As(err, &e) && !e.Retryable {
			if e.Err != nil && ctx.Err() != nil {
				return nil, err // cancelled: the runtime reports the interruption
			}
			return fail(e.Error())
		}
		return nil, err
	}

	if r.truncated && c.schema == nil {
		fmt.Fprintf(logOf(req), "warning: step '%s': the answer was cut off at max_tokens; raise the step's max_tokens for a complete answer\n", req.NodeID)
	}
	outputs := map[string]any{"llm_usage": r.usage.Map()}
	if c.schema != nil {
		v := r.structured
		if c.wrapped {
			m, _ := v.(map[string]any)
			v = m["result"]
		}
		if err := validate(validator, v); err != nil {
			return nil, &Error{Model: t.id, Retryable: true, Message: "the model's structured answer does not match output_schema: " + err.Error()}
		}
		outputs["response"] = v
	} else {
		text := stripFence(r.text)
		outputs["response"] = text
		if strings.Contains(strings.ToLower(prompt), "json") {
			if s := strings.TrimSpace(text); !strings.HasPrefix(s, "{") && !strings.HasPrefix(s, "[") {
				fmt.Fprintf(logOf(req), "warning: step '%s': the prompt asks for JSON but the answer is not a JSON object or array. Use output_schema, or a stronger model.\n", req.NodeID)
			}
		}
	}
	return node.Ok(outputs), nil
}

func logOf(req *node.Request) io.Writer {
	if req.Log == nil {
		return io.Discard
	}
	return req.Log
}

// stripFence removes a single code fence enclosing the whole answer.
func stripFence(s string) string {
	t := strings.TrimSpace(s)
	if len(t) < 7 || !strings.HasPrefix(t, "```") || !strings.HasSuffix(t, "```") {
		return s
	}
	nl := strings.IndexByte(t, '\n')
	if nl < 0 || strings.Contains(t[3:nl], "`") {
		return s
	}
	body := t[nl+1 : len(t)-3]
	if strings.Contains(body, "\n```") || strings.HasPrefix(body, "```") {
		return s
	}
	return strings.TrimSuffix(body, "\n")
}

var imageMimes = map[string]string{
	".png": "image/png", ".jpg": "image/jpeg", ".jpeg": "image/jpeg",
	".gif": "image/gif", ".webp": "image/webp",
}

// temperatureOf reads the temperature param, 0 to 2 (nil when unset).
func temperatureOf(p map[string]any) (*float64, error) {
	if v, ok := p["temperature"]; !ok || v == nil {
		return nil, nil
	}
	f, err := node.Float(p, "temperature", 1)
	if err != nil {
		return nil, err
	}
	if f < 0 || f > 2 {
		return nil, &node.ParamError{Param: "temperature", Message: fmt.Sprintf("must be between 0 and 2, got %s; write e.g. '- temperature: 0.7' (lower is more predictable)", value.FormatFloat(f))}
	}
	return &f, nil
}

// maxTokensOf reads the max_tokens param, 0 when unset.
func maxTokensOf(p map[string]any) (int, error) {
	n, err := node.Int(p, "max_tokens", 0)
	if err != nil {
		return 0, err
	}
	if n < 0 {
		return 0, &node.ParamError{Param: "max_tokens", Message: fmt.Sprintf("must be a positive number, got %d; write e.g. '- max_tokens: 1000', or leave it out for the model's default", n)}
	}
	return n, nil
}

// schemaOf reads the output_schema param and compiles it (nil when unset).
func schemaOf(p map[string]any) (map[string]any, *jsonschema.Resolved, error) {
	schema, err := node.Map(p, "output_schema")
	if err != nil || schema == nil {
		return nil, nil, err
	}
	validator, err := compileSchema(schema)
	if err != nil {
		return nil, nil, &node.ParamError{Param: "output_schema", Message: "not a valid JSON Schema: " + err.Error()}
	}
	return schema, validator, nil
}

// imageItems are the images param's items: a list, or one value (a JSON
// list in a string is the list).
func imageItems(v any) ([]any, error) {
	var items []any
	switch x := v.(type) {
	case nil:
		return nil, nil
	case []any:
		items = x
	case string:
		if strings.TrimSpace(x) == "" {
			return nil, nil
		}
		if parsed, ok := value.TryParseContainer(x); ok {
			if l, ok := parsed.([]any); ok {
				items = l
				break
			}
		}
		items = []any{x}
	default:
		return nil, &node.ParamError{Param: "images", Message: fmt.Sprintf("expects a list of file paths or URLs, got %s; write e.g. '- images: [chart.png]'", value.TypeName(v))}
	}
	for _, it := range items {
		if s, ok := it.(string); !ok || strings.TrimSpace(s) == "" {
			return nil, &node.ParamError{Param: "images", Message: fmt.Sprintf("each image must be a file path or URL, got %s; write e.g. '- images: [chart.png]'", value.TypeName(it))}
		}
	}
	return items, nil
}

// check is the llm node's static check: literal param values the run
// would refuse before calling the model, refused by the same code (a
// value's type is validation's own check).
func check(_ context.Context, params map[string]any) []node.Problem {
	p := node.Literal(params)
	var out []node.Problem
	add := func(err error, hint string) {
		var pe *node.ParamError
		if errors.As(err, &pe) {
			out = append(out, node.Problem{Param: pe.Param, Message: err.Error(), Hint: hint})
		}
	}
	if _, err := node.Float(p, "temperature", 0); err == nil {
		if _, err := temperatureOf(p); err != nil {
			add(err, "Write a temperature from 0 to 2 (Anthropic accepts up to 1), e.g. '- temperature: 0.7'.")
		}
	}
	if _, err := node.Float(p, "max_tokens", 0); err == nil {
		if _, err := maxTokensOf(p); err != nil {
			add(err, "Write a positive number of tokens, e.g. '- max_tokens: 1000'.")
		}
	}
	if _, ok := p["output_schema"].(map[string]any); ok {
		if _, _, err := schemaOf(p); err != nil {
			add(err, "Write a JSON Schema, e.g. '- output_schema: {type: object, properties: {title: {type: string}}}'.")
		}
	}
	if _, err := imageItems(p["images"]); err != nil {
		add(err, "List image file paths or URLs, e.g. '- images: [chart.png, https://example.com/photo.jpg]'.")
	}
	return out
}

// loadImages reads the images param: a list or a single value of URLs
// (http, https, data:) and file paths (~ expanded; relative paths are tried
// against the working directory, then the workflow's directory).
func loadImages(v any, workflowDir string) ([]image, error) {
	items, err := imageItems(v)
	if err != nil {
		return nil, err
	}
	var out []image
	for _, it := range items {
		s := strings.TrimSpace(it.(string))
		lower := strings.ToLower(s)
		if strings.HasPrefix(lower, "http://") || strings.HasPrefix(lower, "https://") || strings.HasPrefix(lower, "data:") {
			out = append(out, image{url: s})
			continue
		}
		path, err := findImage(s, workflowDir)
		if err != nil {
			return nil, err
		}
		mime, ok := imageMimes[strings.ToLower(filepath.Ext(path))]
		if !ok {
			return nil, &node.ParamError{Param: "images", Message: fmt.Sprintf("Unsupported image type %q for %s: use png, jpeg, gif or webp", filepath.Ext(path), s)}
		}
		b, err := fsutil.ReadFileUnplanted(path) // never through another user's /tmp link
		if err != nil {
			var pl *fsutil.PlantedLinkError
			if errors.As(err, &pl) {
				return nil, &node.ParamError{Param: "images", Message: err.Error()}
			}
			return nil, fmt.Errorf("Cannot read image file %s: %v", path, err)
		}
		out = append(out, image{mime: mime, data: base64.StdEncoding.EncodeToString(b)})
	}
	return out, nil
}

func findImage(p, workflowDir string) (string, error) {
	if strings.HasPrefix(p, "~/") {
		if h, err := os.UserHomeDir(); err == nil {
			p = filepath.Join(h, p[2:])
		}
	}
	cands := []string{p}
	if !filepath.IsAbs(p) && workflowDir != "" {
		cands = append(cands, filepath.Join(workflowDir, p))
	}
	for _, c := range cands {
		if st, err := os.Stat(c); err == nil && !st.IsDir() {
			return c, nil
		}
	}
	return "", fmt.Errorf("Image file not found: %s", p)
}

// objectSchema returns the schema to send: object schemas as they are,
// anything else wrapped under a "result" property.
func objectSchema(s map[string]any) (map[string]any, bool) {
	if t, _ := s["type"].(string); t == "object" {
		return s, false
	}
	if _, hasProps := s["properties"]; hasProps && s["type"] == nil {
		c := value.Clone(s).(map[string]any)
		c["type"] = "object"
		return c, false
	}
	return map[string]any{
		"type":       "object",
		"properties": map[string]any{"result": s},
		"required":   []any{"result"},
	}, true
}

func compileSchema(s map[string]any) (*jsonschema.Resolved, error) {
	b, err := json.Marshal(s)
	if err != nil {
		return nil, err
	}
	var js jsonschema.Schema
	if err := json.Unmarshal(b, &js); err != nil {
		return nil, err
	}
	return js.Resolve(nil)
}

func validate(r *jsonschema.Resolved, v any) error {
	if r == nil {
		return nil
	}
	// The validator wants encoding/json's shapes (float64 numbers).
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	var inst any
	if err := json.Unmarshal(b, &inst); err != nil {
		return err
	}
	return r.Validate(inst)
}
