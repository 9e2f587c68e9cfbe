package llm

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"strings"

	"github.com/anthropics/anthropic-sdk-go"
	aoption "github.com/anthropics/anthropic-sdk-go/option"
	"github.com/openai/openai-go/v3"
	ooption "github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/shared"

	"github.com/pflow-go/pflow/internal/redact"
	"github.com/pflow-go/pflow/internal/value"
)

// DefaultMaxTokens is sent to Anthropic (which requires max_tokens) when the
// step sets none.
const DefaultMaxTokens = 8192

// structuredToolName is the tool Anthropic is forced to call for output_schema.
const structuredToolName = "structured_output"

// image is one image attachment: a URL, or inline data with its mime type.
type image struct {
	url  string
	mime string
	data string // base64
}

// call is one request to a model.
type call struct {
	t           *target
	system      string
	prompt      string
	maxTokens   int
	temperature *float64
	images      []image
	// schema is the JSON Schema of the structured output (an object schema;
	// wrapped is set when the user's schema was not an object and was put
	// under a "result" property).
	schema  map[string]any
	wrapped bool
}

// reply is what a model returned.
type reply struct {
	text       string
	structured any
	usage      Usage
	// truncated is set when the answer stopped at max_tokens.
	truncated bool
}

// httpClient is shared by every call (connection reuse). Timeouts come from
// the context.
var httpClient = &http.Client{}

func (c *call) do(ctx context.Context) (*reply, error) {
	var (
		r   *reply
		err error
	)
	switch c.t.provider.wire {
	case wireAnthropic:
		r, err = c.anthropic(ctx)
	default:
		r, err = c.openai(ctx)
	}
	if err != nil {
		return nil, c.classify(ctx, err)
	}
	r.usage.Model = c.t.id
	r.usage.TotalTokens = r.usage.InputTokens + r.usage.OutputTokens + r.usage.CacheCreationInputTokens + r.usage.CacheReadInputTokens
	if c.t.provider.local {
		zero := 0.0
		r.usage.CostUSD = &zero
	} else {
		r.usage.CostUSD = Cost(c.t.model, r.usage)
	}
	return r, nil
}

// ---- Anthropic Messages API ----------------------------------------------

func (c *call) anthropic(ctx context.Context) (*reply, error) {
	client := anthropic.NewClient(
		aoption.WithoutEnvironmentDefaults(),
		aoption.WithBaseURL(c.t.baseURL),
		aoption.WithAPIKey(c.t.apiKey),
		aoption.WithMaxRetries(0),
		aoption.WithHTTPClient(httpClient),
	)
	maxTokens := c.maxTokens
	if maxTokens <= 0 {
		maxTokens = DefaultMaxTokens
	}
	var blocks []anthropic.ContentBlockParamUnion
	for _, img := range c.images {
		if img.url != "" {
			blocks = append(blocks, anthropic.NewImageBlock(anthropic.URLImageSourceParam{URL: img.url}))
		} else {
			blocks = append(blocks, anthropic.NewImageBlockBase64(img.mime, img.data))
		}
	}
	blocks = append(blocks, anthropic.NewTextBlock(c.prompt))
	params := anthropic.MessageNewParams{
		Model:     anthropic.Model(c.t.model),
		MaxTokens: int64(maxTokens),
		Messages:  []anthropic.MessageParam{anthropic.NewUserMessage(blocks...)},
	}
	if c.system != "" {
		params.System = []anthropic.TextBlockParam{{Text: c.system}}
	}
	if c.temperature != nil {
		params.Temperature = anthropic.Float(*c.temperature)
	}
	if c.schema != nil {
		in := anthropic.ToolInputSchemaParam{ExtraFields: map[string]any{}}
		for k, v := range c.schema {
			switch k {
			case "type":
			case "properties":
				in.Properties = v
			case "required":
				if list, ok := v.([]any); ok {
					for _, r := range list {
						if s, ok := r.(string); ok {
							in.Required = append(in.Required, s)
						}
					}
				}
			default:
				in.ExtraFields[k] = v
			}
		}
		params.Tools = []anthropic.ToolUnionParam{{OfTool: &anthropic.ToolParam{
			Name:        structuredToolName,
			Description: anthropic.String("Return the answer as structured data matching this schema."),
			InputSchema: in,
		}}}
		params.ToolChoice = anthropic.ToolChoiceParamOfTool(structuredToolName)
	}
	msg, err := client.Messages.New(ctx, params)
	if err != nil {
		return nil, err
	}
	if msg == nil || (msg.ID == "" && len(msg.Content) == 0) {
		return nil, &malformedError{"the response has no message content"}
	}
	r := &reply{usage: Usage{
		InputTokens:              msg.Usage.InputTokens,
		OutputTokens:             msg.Usage.OutputTokens,
		CacheCreationInputTokens: msg.Usage.CacheCreationInputTokens,
		CacheReadInputTokens:     msg.Usage.CacheReadInputTokens,
	}}
	var text strings.Builder
	found := false
	for _, b := range msg.Content {
		switch b.Type {
		case "text":
			text.WriteString(b.Text)
			found = true
		case "tool_use":
			if c.schema != nil && b.Name == structuredToolName {
				v, err := value.DecodeJSON(b.Input)
				if err != nil {
					return nil, &malformedError{"the structured_output tool input is not valid JSON"}
				}
				r.structured = v
				found = true
			}
		}
	}
	r.truncated = msg.StopReason == anthropic.StopReasonMaxTokens
	if c.schema != nil && r.structured == nil {
		if r.truncated {
			return nil, &truncatedError{maxTokens}
		}
		return nil, &outputError{fmt.Sprintf("the model did not return structured output (stop_reason %q)", msg.StopReason)}
	}
	if !found {
		return nil, &malformedError{fmt.Sprintf("the response has no text content (stop_reason %q)", msg.StopReason)}
	}
	r.text = text.String()
	return r, nil
}

// ---- OpenAI Chat Completions API (and compatible servers) -----------------

func (c *call) openai(ctx context.Context) (*reply, error) {
	opts := []ooption.RequestOption{
		ooption.WithBaseURL(c.t.baseURL),
		ooption.WithMaxRetries(0),
		ooption.WithHTTPClient(httpClient),
		// Key and URL are always set explicitly, so the process's OPENAI_*
		// variables never leak into a request for another provider.
		ooption.WithAPIKey(c.t.apiKey),
	}
	if c.t.provider.name != "openai" {
		opts = append(opts, ooption.WithHeaderDel("OpenAI-Organization"), ooption.WithHeaderDel("OpenAI-Project"))
	}
	client := openai.NewClient(opts...)
	var msgs []openai.ChatCompletionMessageParamUnion
	if c.system != "" {
		msgs = append(msgs, openai.SystemMessage(c.system))
	}
	if len(c.images) == 0 {
		msgs = append(msgs, openai.UserMessage(c.prompt))
	} else {
		parts := []openai.ChatCompletionContentPartUnionParam{openai.TextContentPart(c.prompt)}
		for _, img := range c.images {
			u := img.url
			if u == "" {
				u = "data:" + img.mime + ";base64," + img.data
			}
			parts = append(parts, openai.ImageContentPart(openai.ChatCompletionContentPartImageImageURLParam{URL: u}))
		}
		msgs = append(msgs, openai.UserMessage(parts))
	}
	params := openai.ChatCompletionNewParams{
		Model:    shared.ChatModel(c.t.model),
		Messages: msgs,
	}
	if c.temperature != nil {
		params.Temperature = openai.Float(*c.temperature)
	}
	if c.maxTokens > 0 {
		if c.t.provider.name == "openai" {
			params.MaxCompletionTokens = openai.Int(int64(c.maxTokens))
		} else {
			// Compatible servers (Ollama, vLLM, LM Studio, ...) know max_tokens.
			params.MaxTokens = openai.Int(int64(c.maxTokens))
		}
	}
	if c.schema != nil {
		params.ResponseFormat = openai.ChatCompletionNewParamsResponseFormatUnion{
			OfJSONSchema: &shared.ResponseFormatJSONSchemaParam{
				JSONSchema: shared.ResponseFormatJSONSchemaJSONSchemaParam{
					Name:   "response",
					Schema: c.schema,
				},
			},
		}
	}
	resp, err := client.Chat.Completions.New(ctx, params)
	if err != nil {
		return nil, err
	}
	if resp == nil || len(resp.Choices) == 0 {
		return nil, &malformedError{"the response has no choices"}
	}
	m := resp.Choices[0].Message
	if m.Refusal != "" {
		return nil, &refusalError{m.Refusal}
	}
	if !m.JSON.Content.Valid() && m.Content == "" {
		return nil, &malformedError{fmt.Sprintf("the response's first choice has no message content (finish_reason %q)", resp.Choices[0].FinishReason)}
	}
	u := resp.Usage
	cached := u.PromptTokensDetails.CachedTokens
	r := &reply{text: m.Content, usage: Usage{
		InputTokens:          u.PromptTokens - cached,
		OutputTokens:         u.CompletionTokens,
		CacheReadInputTokens: cached,
	}}
	r.truncated = resp.Choices[0].FinishReason == "length"
	if c.schema != nil {
		v, err := value.DecodeJSON([]byte(stripFence(m.Content)))
		if err != nil && r.truncated {
			return nil, &truncatedError{c.maxTokens}
		}
		if err != nil {
			return nil, &outputError{"the model's answer is not valid JSON for output_schema: " + brief(m.Content)}
		}
		r.structured = v
	}
	return r, nil
}

// ---- errors --------------------------------------------------------------

type malformedError struct{ msg string }

func (e *malformedError) Error() string { return e.msg }

type outputError struct{ msg string }

func (e *outputError) Error() string { return e.msg }

type refusalError struct{ msg string }

// truncatedError: a structured answer cut off at max_tokens (retrying with
// the same limit cannot help).
type truncatedError struct{ maxTokens int }

func (e *truncatedError) Error() string {
	if e.maxTokens > 0 {
		return fmt.Sprintf("the answer was cut off at max_tokens (%d) before the structured output was complete. Raise the step's max_tokens", e.maxTokens)
	}
	return "the answer was cut off at the model's output limit before the structured output was complete. Set a larger max_tokens on the step"
}

func (e *refusalError) Error() string { return e.msg }

// classify turns an SDK or transport error into an *Error that says what
// happened and whether retrying can help.
func (c *call) classify(ctx context.Context, err error) *Error {
	t := c.t
	where := fmt.Sprintf("%s at %s", t.provider.name, t.baseURL)
	e := &Error{Model: t.id}
	var (
		ae  *anthropic.Error
		oe  *openai.Error
		me  *malformedError
		xe  *outputError
		re  *refusalError
		tre *truncatedError
		se  *json.SyntaxError
		te  *json.UnmarshalTypeError
	)
	status, detail := 0, ""
	switch {
	case errors.As(err, &ae):
		status, detail = ae.StatusCode, providerMessage(ae.RawJSON())
	case errors.As(err, &oe):
		status, detail = oe.StatusCode, oe.Message
		if detail == "" {
			detail = providerMessage(oe.RawJSON())
		}
	}
	switch {
	case ctx.Err() != nil && errors.Is(context.Cause(ctx), errCallTimeout):
		e.Retryable = true
		e.Message = fmt.Sprintf("no answer from %s within the step's timeout", where)
	case ctx.Err() != nil:
		e.Message = fmt.Sprintf("LLM call to %s stopped: %v", where, context.Cause(ctx))
		e.Err = context.Cause(ctx)
	case status == 429:
		e.Retryable = true
		e.Message = fmt.Sprintf("rate limited by %s (HTTP 429)%s. pflow retries automatically; if it persists, wait, lower the batch's max_concurrent, or raise the step's retries/retry_wait", where, suffix(detail))
	case status >= 500 || status == 408 || status == 409:
		e.Retryable = true
		e.Message = fmt.Sprintf("%s returned a server error (HTTP %d)%s", where, status, suffix(detail))
	case status == 401 || status == 403:
		e.Message = fmt.Sprintf("%s rejected the API key (HTTP %d)%s. Check %s: pflow settings set-env %s=<your-key>", where, status, suffix(detail), t.keyVar, t.keyVar)
	case status == 404:
		e.Message = fmt.Sprintf("%s answered HTTP 404%s. Check the model name '%s' and the base URL", where, suffix(detail), t.model)
	case status != 0:
		e.Message = fmt.Sprintf("%s rejected the request (HTTP %d)%s", where, status, suffix(detail))
	case errors.As(err, &re):
		e.Message = fmt.Sprintf("the model refused: %s", re.msg)
	case errors.As(err, &tre):
		e.Message = tre.Error()
	case errors.As(err, &xe):
		e.Retryable = true
		e.Message = xe.msg
	case errors.As(err, &me):
		e.Message = fmt.Sprintf("invalid response from %s: %s", where, me.msg)
	case errors.As(err, &se), errors.As(err, &te), strings.Contains(err.Error(), "error parsing response json"):
		e.Message = fmt.Sprintf("invalid response from %s: the body is not valid %s API JSON (%v). Is the base URL pointing at the right server?", where, t.provider.wire, innermost(err))
	case isNetErr(err):
		e.Retryable = true
		hint := t.provider.unreachable
		if hint == "" {
			hint = "Check the URL and that the service is running"
		}
		e.Message = fmt.Sprintf("could not reach %s: %v. %s", where, innermost(err), hint)
	default:
		e.Retryable = true
		e.Message = fmt.Sprintf("request to %s failed: %v", where, err)
	}
	if t.apiKey != "" {
		// The marker every pflow output uses; the run's redactor masks the
		// key's encoded forms too.
		e.Message = strings.ReplaceAll(e.Message, t.apiKey, redact.Redacted)
	}
	return e
}

func isNetErr(err error) bool {
	var ue *url.Error
	var ne net.Error
	var oe *net.OpError
	return errors.As(err, &ue) || errors.As(err, &ne) || errors.As(err, &oe)
}

func innermost(err error) error {
	for {
		u := errors.Unwrap(err)
		if u == nil {
			return err
		}
		err = u
	}
}

// providerMessage extracts error.message from a provider error body.
func providerMessage(raw string) string {
	var body struct {
		Error struct {
			Message string `json:"message"`
		} `json:"error"`
		Message string `json:"message"`
	}
	if json.Unmarshal([]byte(raw), &body) == nil {
		if body.Error.Message != "" {
			return body.Error.Message
		}
		if body.Message != "" {
			return body.Message
		}
	}
	return brief(raw)
}

func suffix(detail string) string {
	if detail == "" {
		return ""
	}
	return ": " + detail
}

// brief is a provider's text in a message: trimmed, cut at 200 bytes.
func brief(s string) string { return value.Truncate(strings.TrimSpace(s), 200, "…") }
