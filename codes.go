package remedy

import (
	"strings"

	"github.com/remedy-go/remedy/internal/codename"
)

// codeInfo is what a well-known error code says about a failure whatever the status: its
// category, and whether the same call can succeed later (+1), never can (-1), or it depends (0).
type codeInfo struct {
	category Category
	// transient: +1 retryable, -1 not, when only the status speaks; waitsOnCaller: not,
	// whatever the body or a header says (see resolveRetry).
	transient int8
}

// waitsOnCaller marks a code whose failure waits on the caller, not on time: the same request
// never succeeds, whatever the server's flag says.
const waitsOnCaller int8 = -2

// wellKnownCodes is keyed by the code lowercased with every non-alphanumeric removed, so that
// RATE_LIMIT_EXCEEDED, rate-limit-exceeded and RateLimitExceeded are one entry.
var wellKnownCodes = map[string]codeInfo{}

func init() {
	add := func(cat Category, transient int8, codes string) {
		for _, c := range strings.Fields(codes) {
			wellKnownCodes[c] = codeInfo{category: cat, transient: transient}
		}
	}
	add(CategoryValidation, 0, `invalidargument invalidparameter invalidparams invalidrequest
		invalidrequesterror validationerror validationexception validationfailed badrequest
		invalidbody invalidjson invalidparameter badargument missingfield missingparameter invalid
		invalidparametervalue notfound resourcenotfound resourcenotfoundexception nosuchkey
		nosuchbucket methodnotfound parseerror baduserinput graphqlvalidationfailed
		graphqlparsefailed contextlengthexceeded requesttoolarge notfounderror itemnotfound
		invalidarguments channelnotfound unsupportedgranttype invalidscope outofrange
		invalidinstanceidnotfound invalidinstanceidmalformed requestresourcenotfound
		parameterinvalid unprocessableentity unknownfield invalidinput malformed badroute`)
	add(CategoryAuth, -1, `unauthenticated unauthorized permissiondenied forbidden accessdenied
		accessdeniedexception authenticationerror permissionerror invalidauth invalidapikey
		invalidtoken invalidgrant missingscope notauthed servicedisabled invalidclient
		unauthorizedclient expiredtoken expiredtokenexception insufficientscope accountinactive
		tokenrevoked unrecognizedclientexception signaturedoesnotmatch invalidclienttokenid`)
	add(CategoryRateLimit, 1, `ratelimited ratelimit ratelimitexceeded ratelimiterror throttled
		throttling throttlingexception toomanyrequests toomanyrequestsexception slowdown
		requestlimitexceeded provisionedthroughputexceededexception requestthrottled
		requestthrottledexception limitexceeded`)
	add(CategoryRateLimit, 0, `resourceexhausted quotaexceeded requests`)
	add(CategoryRateLimit, -1, `insufficientquota billinghardlimitreached`)
	add(CategoryState, 0, `failedprecondition alreadyexists conflict invalidstate
		idempotencykeyreused idempotencyerror preconditionfailed resourceconflict
		resourceinuseexception conditionalcheckfailedexception
		conflictexception`)
	add(CategoryState, 1, `aborted idempotencyinflight locktimeout`)
	add(CategoryDependency, 1, `unavailable serviceunavailable deadlineexceeded timeout timedout
		servertimeout overloaded overloadederror badgateway gatewaytimeout upstreamtimeout
		serviceunavailableexception servicenotavailable temporarilyunavailable tryagain
		requesttimeout requesttimeoutexception`)
	add(CategoryInternal, 0, `internal internalerror internalservererror apierror servererror
		unknown dataloss internalfailure internalservererrorexception internalserviceerror
		serviceexception invalidoutput`)
	// Codes whose retryable: true means "after the caller has done something" — paid, sent
	// an idempotency key, had the user approve (a confirmation challenge, a spent token) —
	// never "send the same request again" (AgentBack sets it so).
	add(CategoryState, waitsOnCaller, `paymentrequired idempotencykeyrequired confirmationrequired confirmationinvalid`)
}

func lookupCode(code string) codeInfo {
	var buf [64]byte
	norm, ok := codename.Norm(&buf, code)
	if !ok {
		return codeInfo{}
	}
	return wellKnownCodes[norm]
}

// statusCategory is the category a status implies when neither the body nor its code says.
func statusCategory(status int) Category {
	switch {
	case status == 401 || status == 403 || status == 407:
		return CategoryAuth
	case status == 429:
		return CategoryRateLimit
	case status == 409 || status == 412 || status == 423 || status == 424 || status == 425 || status == 428:
		return CategoryState
	case status == 408 || status == 502 || status == 503 || status == 504 || status >= 520 && status <= 529:
		return CategoryDependency
	case status >= 500:
		return CategoryInternal
	case status >= 400:
		return CategoryValidation
	}
	return ""
}

// normCategory maps the category words servers use onto the six categories.
func normCategory(s string) Category {
	switch strings.ToLower(s) {
	case "validation", "invalid_request", "invalid_input", "bad_request", "client", "input", "not_found":
		return CategoryValidation
	case "auth", "authentication", "authorization", "permission", "permissions", "forbidden", "unauthorized":
		return CategoryAuth
	case "rate_limit", "rate_limited", "ratelimit", "throttling", "throttled", "quota":
		return CategoryRateLimit
	case "state", "conflict", "precondition":
		return CategoryState
	case "dependency", "upstream", "timeout", "unavailable", "transient", "network":
		return CategoryDependency
	case "internal", "server", "server_error", "bug":
		return CategoryInternal
	}
	return ""
}

func normSeverity(s string) Severity {
	switch strings.ToLower(s) {
	case "info", "notice", "debug":
		return SeverityInfo
	case "warning", "warn":
		return SeverityWarning
	case "error":
		return SeverityError
	case "fatal", "critical", "emergency", "alert", "panic":
		return SeverityFatal
	}
	return ""
}

// HTTPOnly reports whether code is a failure of HTTP's own framing, which a tool call cannot
// meet and its caller cannot act on: the request's media type (unsupported_media_type) and its
// JSON syntax (invalid_json) — a tool's arguments always arrive as a JSON object. The tools a
// server describes over MCP, and the tool definitions a Toolset gives a model, leave such codes
// out of their error catalogues.
func HTTPOnly(code string) bool {
	return code == "unsupported_media_type" || code == "invalid_json"
}
