// Package remedy is the failure contract: it reads any failure response — its own envelope,
// RFC 9457 problem details, the error shapes of the major public APIs and the default errors of
// the frameworks most APIs are built on — as one normalized [Envelope] that says what went
// wrong, which field to fix, and whether and when a retry can succeed; and it writes that
// envelope back (JSON, problem details, a prompt for a model). The README tells the same story
// in the same order.
//
// Reading a failure: [Parse] (or [ParseResponse] for an *http.Response) returns the
// [Envelope]; [Classify] is the allocation-free path for code that only needs the retry
// decision; [Envelope.Prompt] writes a short repair instruction for a model. Retryable has
// one meaning throughout: the same request, sent again unchanged, can succeed later. A failure
// that names fields to fix is therefore never retryable, whatever it says: AgentBack's
// retryable: true on a validation failure ("can succeed with corrected input") is read as
// false ([Envelope.NamesFix]), and the correction is the caller's to make.
//
// The names both sides use on the wire ([HeaderIdempotencyKey], [ArgConfirmationToken],
// [Replayed], …) are here too. Built on this package: package client calls APIs through the
// bounded try → rewrite → retry loop; package server is the reference server; package
// conformance tests a server against the contract; package retryable is the adapter for
// go-retryablehttp.
package remedy

import (
	"encoding/json"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"
	"unsafe"

	"github.com/remedy-go/remedy/internal/boundread"
	"github.com/remedy-go/remedy/internal/httpop"
	"github.com/remedy-go/remedy/internal/tape"
)

// Dialect names the family of error format a body was recognized as.
type Dialect string

// The dialects Parse reads, tried in the order of specificity listed in dialects.go.
const (
	DialectAgent       Dialect = "agent"            // {"error":{statusCode, code, issues[], ...}} and the canonical encoding
	DialectAgentSpec   Dialect = "agent_error_spec" // {"error":{code, field, allowed_values, retry_after_ms, ...}}
	DialectProblem     Dialect = "rfc9457"          // RFC 9457 / RFC 7807 problem details with agent extensions
	DialectAX          Dialect = "ax"               // {error_code, message, suggestion, details[]}
	DialectGoogle      Dialect = "google"           // google.rpc.Status, in {"error":{...}} or at the top level (grpc-gateway)
	DialectConnect     Dialect = "connect"          // the Connect protocol's JSON error {code, message, details[{type, value, debug}]}
	DialectTwirp       Dialect = "twirp"            // twirp's error {code, msg, meta}
	DialectStripe      Dialect = "stripe"
	DialectOpenAI      Dialect = "openai"
	DialectAnthropic   Dialect = "anthropic"
	DialectGitHub      Dialect = "github"
	DialectJSONAPI     Dialect = "jsonapi"
	DialectOData       Dialect = "odata" // OData v4, Microsoft Graph, Azure
	DialectAWSJSON     Dialect = "aws_json"
	DialectAWSXML      Dialect = "aws_xml"
	DialectSlack       Dialect = "slack"
	DialectGraphQL     Dialect = "graphql"
	DialectJSONRPC     Dialect = "jsonrpc"
	DialectMCP         Dialect = "mcp" // MCP tool results with isError
	DialectKubernetes  Dialect = "kubernetes"
	DialectCloudflare  Dialect = "cloudflare"
	DialectOAuth2      Dialect = "oauth2"       // RFC 6749 §5.2 {"error":"invalid_grant", "error_description"}
	DialectGenericJSON Dialect = "generic_json" // a JSON object with a message but no known shape
	// DialectUnstructured: no structure to read (plain text, HTML, empty, or a body that is not
	// valid, unambiguous JSON); the envelope is classified by status and headers alone.
	DialectUnstructured Dialect = "unstructured"
	// DialectTruncated: a failure whose body was longer than the bound read, so that what
	// arrived is not a whole document, but whose start states what decides: the members
	// code (error_code, and a type or google.rpc.Code name inside "error"), retryable
	// (is_retriable), retry_after_ms, retry_after_seconds, severity, category and message, at
	// the top level or in a top-level "error" object, each counted only when the delimiter
	// after it arrived. They are read by the rules every dialect shares (a body flag decides as
	// RetryFromBody); nothing else is read from a prefix (no issues: a partial list would
	// mislead a rewriter). A cut body whose start states none of them is DialectUnstructured.
	// An event stream cut before the event that answers the call, at a status that is not a
	// failure, is DialectTruncated too: not retryable, its message saying that whether the call
	// failed is not known (ParseResponse with a larger WithMaxBody reads it).
	DialectTruncated Dialect = "truncated"
)

// RetrySource says whose word Envelope.Retryable was read from. A failure that names fields
// to fix is not retryable whatever that word was, and RetrySource still names the source that
// spoke: a body's retryable: true on a validation failure with issues is Retryable false,
// RetryFromBody.
type RetrySource string

// Retry sources, in order of precedence: an explicit flag in the body beats a header, which
// beats the default for the status.
const (
	RetryFromBody   RetrySource = "body"   // retryable / is_retriable / Google RetryInfo in the body
	RetryFromHeader RetrySource = "header" // X-Should-Retry, Stripe-Should-Retry, an exhausted rate-limit header
	RetryFromStatus RetrySource = "status" // the status's default, refined by well-known codes
	RetryFromNone   RetrySource = "none"   // nothing said anything: not retryable
)

// Severity is how bad a failure is; fatal means no retry or repair can help.
type Severity string

// Severities.
const (
	SeverityInfo    Severity = "info"
	SeverityWarning Severity = "warning"
	SeverityError   Severity = "error"
	SeverityFatal   Severity = "fatal"
)

// Category is the broad kind of a failure, which tells an agent what sort of fix applies.
type Category string

// Categories.
const (
	CategoryValidation Category = "validation" // fix the arguments
	CategoryAuth       Category = "auth"       // credentials or permissions
	CategoryRateLimit  Category = "rate_limit" // wait, then retry unchanged
	CategoryState      Category = "state"      // the resource is not in the state the call needs
	CategoryDependency Category = "dependency" // an upstream or the server itself is unavailable
	CategoryInternal   Category = "internal"   // a server bug
)

// Envelope is a failure, normalized: whatever dialect the server spoke, the same fields mean the
// same thing. A nil field means the server did not say.
type Envelope struct {
	// Status is the HTTP status. For a failure carried inside a success (an MCP tool result, a
	// 207) or without a transport (status 0), it is the status the body states, if any.
	Status  int
	Code    string // stable machine code, as the server spells it
	Type    string // RFC 9457 type URI
	Title   string
	Message string

	// Retryable says whether the same request, sent again unchanged, can succeed later; no
	// part of remedy resends a request unchanged unless it is. RetrySource says whose word
	// was read: an explicit body flag, else a header, else the status's default. A failure
	// that names fields to fix (issues or an example request in a validation failure, a
	// field or its values elsewhere: see Decide, rule 9) is not retryable whatever that word
	// was, for sent unchanged it fails the same way: AgentBack's retryable: true there means
	// "can succeed with corrected input", and the correction is the Rewriter's.
	Retryable   bool
	RetrySource RetrySource
	// RetryAfter is how long the server asked to wait; zero when it did not say. It is read
	// as the server gave it, never capped here: capping is the caller's policy.
	RetryAfter time.Duration

	Severity Severity // the body's word, else error
	Category Category // the body's word, else from the code, else the status; empty when nothing tells

	// Issues holds every field-level fact, whatever the dialect called it.
	Issues []Issue
	// Schema is the violated JSON Schema (sub)schema, when the server inlined it.
	Schema json.RawMessage

	Hint              string
	Suggestions       []string
	NextOperation     string
	NextOperationArgs json.RawMessage
	ConfirmationToken string
	CurrentStatus     string // the resource's state, for state conflicts
	RequiredStatus    string // the state the operation needs
	TraceID           string
	RequestID         string
	DocsURL           string
	RelatedCodes      []string
	ExampleRequest    json.RawMessage
	Intent            string // RFC 9457 agent extension: what the operation was for
	DeprecatedType    string // RFC 9457 agent extension: the type URI this one replaces
	Replayed          bool   // Idempotency-Replayed: true

	// Errors holds nested failures (batches, lists of problems). The top level summarizes them
	// and carries the most actionable one's code.
	Errors []Envelope

	Dialect Dialect
}

// Issue is one field-level fact: which field, what was wrong, what would be right.
type Issue struct {
	Path           string          // RFC 6901 JSON Pointer into the request; "" is the whole document
	Code           string          // machine code of the violation (e.g. "required", "enum", "invalid")
	Message        string          // human text
	Expected       json.RawMessage // a type name, or a schema fragment for ranges, patterns and formats
	Received       json.RawMessage // what arrived
	AllowedValues  []json.RawMessage
	SuggestedValue json.RawMessage
	// Field is the field as the server named it, when the name could not be read as a path
	// into the request, less a leading Go type's name: a Go struct namespace's fields
	// ("Lines[1].SKU", Go names, from "CreateItem.Lines[1].SKU"), a decoder's path of JSON
	// names without its array indices ("lines.quantity"). Path is then "". A rewriter that
	// knows the operation's schema may map it onto one property (see rewrite.Default).
	Field string
}

// Error implements error: "code (status): message".
func (e *Envelope) Error() string {
	if e == nil {
		return "remedy: <nil envelope>"
	}
	b := make([]byte, 0, len(e.Code)+len(e.Message)+16)
	b = append(b, e.Code...)
	if e.Status != 0 {
		b = append(b, " ("...)
		b = strconv.AppendInt(b, int64(e.Status), 10)
		b = append(b, ')')
	}
	if e.Message != "" {
		b = append(b, ": "...)
		b = append(b, e.Message...)
	}
	return string(b)
}

// DefaultMaxBody is how much of a body Parse and ParseResponse read unless told otherwise.
const DefaultMaxBody = 1 << 20

// Parse reads a response as a failure. ok is true when the response is a failure — any status
// of 400 or more, and failures carried inside a 2xx (GraphQL errors, JSON-RPC error, MCP
// isError, Slack ok:false, Cloudflare success:false); then the envelope is never nil. A status
// of 0 means there was no HTTP status (an MCP result, a message on a queue): the body alone
// decides.
//
// Parse never panics and takes time linear in the body; it reads at most DefaultMaxBody bytes
// of it, except that an event stream is scanned whole for the event that answers the call,
// whose data is then read up to that bound (progress notifications do not push a failure past
// it). A body it cannot read unambiguously (invalid JSON or UTF-8, duplicate keys, nesting
// deeper than 64) gives an envelope classified by status and headers, with Dialect
// DialectUnstructured. A failure's body longer than DefaultMaxBody is read only for the
// members at its start that decide a retry (DialectTruncated), when it states them. JSON
// values nested deeper than 32 levels (a schema, an expected value) are not kept. The envelope
// does not alias body. Its strings and raw JSON values may share one block of memory: treat
// the raw values as read-only (appending to one copies it, for each ends at its capacity).
func Parse(status int, header http.Header, body []byte) (*Envelope, bool) {
	body, truncated := readBound(header, body)
	return parse(status, header, body, truncated)
}

// readBound cuts a body to the DefaultMaxBody bytes Parse and Classify read. An event stream
// longer than that is scanned whole for the event that answers it (sse.go; in linear time),
// and that event's data is what they read: the notifications a server sends on the way,
// however many, do not push its answer past the bound.
func readBound(header http.Header, body []byte) (b []byte, truncated bool) {
	if len(body) <= DefaultMaxBody {
		return body, false
	}
	s := strings.TrimSpace(strings.TrimPrefix(tape.View(body), "\ufeff"))
	if s != "" && s[0] != '{' && eventStream(httpop.Header(header, "Content-Type"), s) {
		if data, _, ok := streamJSON(s, true); ok {
			// Read only, as body is: the bytes of data, in body or of its own; an answer
			// longer than the bound is cut as a JSON body of its size would be.
			b := unsafe.Slice(unsafe.StringData(data), len(data))
			if len(b) > DefaultMaxBody {
				return b[:DefaultMaxBody], true
			}
			return b, false
		}
	}
	return body[:DefaultMaxBody], true
}

// parse reads body in place and detaches the envelope from it before returning.
func parse(status int, header http.Header, body []byte, truncated bool) (*Envelope, bool) {
	s := tape.View(body)
	if plainSuccess(status, s, truncated) {
		return nil, false
	}
	p := parser{status: status, header: header, body: s, full: true, truncated: truncated}
	if !p.run() {
		return nil, false
	}
	e := new(Envelope)
	*e = p.e
	if !p.owned {
		detach(e, s)
	}
	return e, true
}

// Verdict is the retry decision for a response, without the details: what Classify returns.
type Verdict struct {
	Failure     bool
	Status      int
	Retryable   bool
	RetrySource RetrySource
	RetryAfter  time.Duration
	Severity    Severity
	Category    Category
	Dialect     Dialect
}

// Classify is Parse without the details: it decides whether the response is a failure, whether
// a retry can succeed and how long to wait, by exactly the rules Parse uses, and allocates
// nothing for the common dialects. Use it on hot paths that only need the decision. It keeps
// no issues, so a failure that says it is retryable and whose issues only their content can
// judge (in a state or internal failure, a resource not found, a dialect that packs them in
// its message) is read in full, as are nested failures.
func Classify(status int, header http.Header, body []byte) Verdict {
	body, truncated := readBound(header, body)
	if plainSuccess(status, tape.View(body), truncated) {
		return Verdict{Status: status}
	}
	// The body is only read, never retained: no string escapes this call except the
	// constants the verdict is made of.
	p := parser{status: status, header: header, body: tape.View(body), truncated: truncated}
	if !p.run() {
		return Verdict{Status: status}
	}
	e := &p.e
	if p.needFull {
		e, _ = Parse(status, header, body)
	}
	return Verdict{
		Failure: true, Status: e.Status, Retryable: e.Retryable, RetrySource: e.RetrySource,
		RetryAfter: e.RetryAfter, Severity: e.Severity, Category: e.Category, Dialect: e.Dialect,
	}
}

// ParseOption configures ParseResponse.
type ParseOption func(*parseConfig)

type parseConfig struct{ maxBody int64 }

// WithMaxBody bounds how many bytes of the body ParseResponse reads (default DefaultMaxBody). A
// larger body is classified from the prefix that was read: by the decision members that
// prefix states (DialectTruncated), else by status and headers.
func WithMaxBody(n int64) ParseOption {
	return func(c *parseConfig) {
		if n > 0 {
			c.maxBody = n
		}
	}
}

// ParseResponse is Parse for an *http.Response. It reads at most the bound of the body and
// leaves the response usable: resp.Body afterwards yields the whole body from its start (what
// was read, then the rest), and closing it closes the original. A read error is treated as the
// end of the body: the failure is classified from what arrived.
func ParseResponse(resp *http.Response, opts ...ParseOption) (*Envelope, bool) {
	if resp == nil {
		return nil, false
	}
	cfg := parseConfig{maxBody: DefaultMaxBody}
	for _, o := range opts {
		o(&cfg)
	}
	return parseResponse(resp, cfg.maxBody)
}

func parseResponse(resp *http.Response, maxBody int64) (*Envelope, bool) {
	var body []byte
	truncated := false
	if resp.Body != nil && resp.Body != http.NoBody {
		var err error
		body, err = boundread.Read(resp.Body, maxBody+1, resp.ContentLength)
		if int64(len(body)) > maxBody {
			truncated = true
		}
		resp.Body = &replayBody{prefix: body, rest: resp.Body, err: err}
		if truncated {
			body = body[:maxBody]
		}
	}
	return parse(resp.StatusCode, resp.Header, body, truncated)
}

// replayBody gives back what ParseResponse read, then the unread rest of the original body.
type replayBody struct {
	prefix []byte
	rest   io.ReadCloser
	err    error // the error the first read ended with, returned once the prefix is drained
}

func (r *replayBody) Read(p []byte) (int, error) {
	if len(r.prefix) > 0 {
		n := copy(p, r.prefix)
		r.prefix = r.prefix[n:]
		return n, nil
	}
	if r.err != nil {
		return 0, r.err
	}
	return r.rest.Read(p)
}

func (r *replayBody) Close() error { return r.rest.Close() }
