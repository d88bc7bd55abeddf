package openai

import (
	"crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/url"
	"strconv"
	"strings"
	"syscall"
	"time"

	goopenai "github.com/sashabaranov/go-openai"

	"github.com/mnemo-mcp/mnemo/memory"
)

// failure is one failed attempt, described by a message built only from safe
// parts: status code, a sanitized error type or code, and our own words.
// Provider messages and bodies are read for classification, never shown.
type failure struct {
	msg    string
	status int // HTTP status, 0 when no response arrived

	transient  bool   // wraps memory.ErrLLMUnavailable: a later call may succeed
	retry      bool   // worth retrying within this call
	retryAfter string // the Retry-After header, if any

	rejectsJSONMode bool // a 400/422 that blames response_format or json mode
	jsonPromptRule  bool // OpenAI's "messages must contain the word json": not an endpoint limitation
}

// Error implements error.
func (f *failure) Error() string { return f.msg }

// Unwrap returns memory.ErrLLMUnavailable for failures that may pass.
func (f *failure) Unwrap() error {
	if f.transient {
		return memory.ErrLLMUnavailable
	}
	return nil
}

// errReplyTooLarge stops reading a success body past maxReplyBytes.
var errReplyTooLarge = errors.New("reply too large")

// settingNames are the settings a failure message tells the user to
// check, and the API the endpoint should serve.
type settingNames struct {
	baseURL, apiKey, model string
	api                    string // "chat completions", "embeddings"
	reply                  string // what a reply is: "chat completion", "embeddings"
}

var (
	llmSettings       = settingNames{"MNEMO_LLM_BASE_URL", "MNEMO_LLM_API_KEY", "MNEMO_LLM_MODEL", "chat completions", "chat completion"}
	embeddingSettings = settingNames{"MNEMO_EMBEDDING_BASE_URL", "MNEMO_EMBEDDING_API_KEY", "MNEMO_EMBEDDING_MODEL", "embeddings", "embeddings"}
)

// classify maps an error from go-openai to a *failure. rec holds what the
// transport saw (status, Retry-After); timedOut is set when the per-attempt
// deadline fired; names are the settings the message points at.
func classify(err error, rec *exchange, timedOut bool, timeout time.Duration, model string, names settingNames) *failure {
	f := classifyErr(err, rec, timedOut, timeout, model, names)
	f.retryAfter = rec.retryAfter
	return f
}

func classifyErr(err error, rec *exchange, timedOut bool, timeout time.Duration, model string, names settingNames) *failure {
	if timedOut {
		return &failure{msg: fmt.Sprintf("no reply within %s: the endpoint is slow or overloaded; retry later", timeout),
			status: rec.status, transient: true, retry: true}
	}

	// RequestError first: it may hold a partly decoded APIError without a status.
	var reqErr *goopenai.RequestError
	var apiErr *goopenai.APIError
	switch {
	case errors.As(err, &reqErr):
		var d detail
		if errors.As(reqErr.Err, &apiErr) {
			d = apiDetail(apiErr)
		}
		d.text += " " + string(reqErr.Body)
		return statusFailure(reqErr.HTTPStatusCode, d, model, names)
	case errors.As(err, &apiErr):
		return statusFailure(apiErr.HTTPStatusCode, apiDetail(apiErr), model, names)
	case errors.Is(err, errReplyTooLarge):
		return &failure{msg: fmt.Sprintf("the reply exceeded %d MiB: check %s", maxReplyBytes>>20, names.baseURL), status: rec.status}
	case errors.Is(err, goopenai.ErrChatCompletionInvalidModel):
		return &failure{msg: fmt.Sprintf("model %q does not support %s: check %s", model, names.api, names.model)}
	}

	var syntaxErr *json.SyntaxError
	var typeErr *json.UnmarshalTypeError
	var certErr *tls.CertificateVerificationError
	var netErr net.Error
	var urlErr *url.Error
	switch {
	case errors.As(err, &syntaxErr), errors.As(err, &typeErr):
		return &failure{msg: fmt.Sprintf("the reply is not %s JSON: check that %s is an OpenAI-compatible API root (usually ending in /v1)", names.reply, names.baseURL),
			status: rec.status}
	case errors.As(err, &certErr):
		return &failure{msg: "the endpoint's TLS certificate was not accepted: check " + names.baseURL}
	case errors.As(err, &netErr) && netErr.Timeout():
		return &failure{msg: "the connection to the endpoint timed out; retry later", transient: true, retry: true}
	case rec.status >= 400:
		// The error body could not be read; the status still tells what happened.
		return statusFailure(rec.status, detail{}, model, names)
	case errors.As(err, &urlErr), errors.As(err, &netErr),
		errors.Is(err, io.ErrUnexpectedEOF), errors.Is(err, syscall.ECONNRESET):
		return &failure{msg: "cannot reach the endpoint (" + connCause(err) + "): check " + names.baseURL + " and that the server is running",
			transient: true, retry: true}
	}
	return &failure{msg: fmt.Sprintf("the request failed (%T): check %s and %s", err, names.baseURL, names.model), status: rec.status}
}

// detail is what an error response said: a sanitized label for messages and
// the raw text for classification only.
type detail struct {
	code  string // sanitized error code, else type
	param string // sanitized offending parameter
	text  string // provider message or body; never put in a message
}

func apiDetail(e *goopenai.APIError) detail {
	d := detail{code: sanitizeToken(codeString(e.Code)), text: e.Message}
	if d.code == "" {
		d.code = sanitizeToken(e.Type)
	}
	if e.Param != nil {
		d.param = sanitizeToken(*e.Param)
	}
	return d
}

// statusFailure turns an HTTP error status into a failure that says what to
// fix, or a transient one for 408/425/429/5xx.
func statusFailure(status int, d detail, model string, names settingNames) *failure {
	label := strconv.Itoa(status)
	if d.code != "" {
		label += " " + d.code
	}
	text := strings.ToLower(d.text)
	f := &failure{status: status}
	switch {
	case status == 401:
		f.msg = fmt.Sprintf("the endpoint rejected the API key (%s): check %s", label, names.apiKey)
	case status == 403:
		f.msg = fmt.Sprintf("the endpoint denied access (%s): check that %s may use model %q", label, names.apiKey, model)
	case status == 404 && strings.Contains(text, "model"):
		f.msg = fmt.Sprintf("model %q not found (%s): check %s", model, label, names.model)
	case status == 404:
		f.msg = fmt.Sprintf("no %s API at the base URL (%s): check %s (usually ending in /v1) and %s", names.api, label, names.baseURL, names.model)
	case status == 429 && (d.code == "insufficient_quota" || strings.Contains(text, "insufficient_quota") || strings.Contains(text, "exceeded your current quota")):
		// Waiting seconds will not help; the pending work is retried later.
		f.msg = fmt.Sprintf("the account's quota is exhausted (%s): check the provider's billing", label)
		f.transient = true
	case status == 429:
		f.msg = fmt.Sprintf("rate limited by the endpoint (%s): retry later", label)
		f.transient, f.retry = true, true
	case status == 408 || status == 425 || status >= 500:
		f.msg = fmt.Sprintf("the endpoint failed (%s): retry later", label)
		f.transient, f.retry = true, true
	case status == 413:
		f.msg = fmt.Sprintf("the request is too large for the endpoint (%s): shorten the prompt", label)
	case d.code == "context_length_exceeded" || strings.Contains(text, "context length") || strings.Contains(text, "context_length"):
		f.msg = fmt.Sprintf("the prompt is too long for model %q (%s): use a model with a larger context or send less", model, label)
	case status == 400 || status == 422:
		param := ""
		if d.param != "" {
			param = ", parameter " + d.param
		}
		f.msg = fmt.Sprintf("the endpoint rejected the request (%s%s): check %s and that the endpoint is OpenAI-compatible", label, param, names.model)
		f.rejectsJSONMode = mentionsJSONMode(text) || d.param == "response_format"
		f.jsonPromptRule = strings.Contains(text, "must contain the word")
	default:
		f.msg = fmt.Sprintf("the endpoint refused the request (%s): check %s", label, names.baseURL)
	}
	return f
}

// mentionsJSONMode reports whether an error text (lower case) blames the
// response format. "unsupported" alone also counts: the request is then
// retried once without response_format, and the fallback is only remembered
// if that retry succeeds.
func mentionsJSONMode(text string) bool {
	for _, s := range []string{"response_format", "response format", "json_object", "json mode", "unsupported", "not supported"} {
		if strings.Contains(text, s) {
			return true
		}
	}
	return false
}

// connCause names a connection failure without URLs: the innermost network
// operation error, e.g. "dial tcp 127.0.0.1:1: connect: connection refused".
func connCause(err error) string {
	var urlErr *url.Error
	if errors.As(err, &urlErr) {
		err = urlErr.Err
	}
	msg := err.Error()
	if len(msg) > 160 {
		msg = msg[:160] + "…"
	}
	return msg
}

func codeString(code any) string {
	switch c := code.(type) {
	case string:
		return c
	case int:
		if c != 0 { // go-openai decodes "code": null as 0
			return strconv.Itoa(c)
		}
	case float64:
		return strconv.FormatFloat(c, 'f', -1, 64)
	}
	return ""
}

// sanitizeToken keeps s only if it looks like an identifier (error type,
// code, parameter or finish reason), so no free text from the endpoint leaks.
func sanitizeToken(s string) string {
	if len(s) > 48 {
		return ""
	}
	for _, r := range s {
		ok := r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' ||
			strings.ContainsRune("_.-[]", r)
		if !ok {
			return ""
		}
	}
	return s
}
