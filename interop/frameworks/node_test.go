package frameworks

import (
	"encoding/json"
	"strconv"
	"testing"
	"time"

	"github.com/remedy-go/remedy"
	"github.com/remedy-go/remedy/internal/testkit/interop"
)

// nodeDir holds the Node frameworks: package.json, its lockfile and servers.mjs.
var nodeDir = "node"

// startGuard bounds the start of servers.mjs, which loads eight frameworks: it is never reached
// unless something hangs (on a loaded machine the start takes tens of seconds).
const startGuard = 3 * time.Minute

// nodeServers starts node/servers.mjs, which starts every Node framework on a free loopback
// port, and returns the base URL of each by name. Without Node 22 and the packages the test
// skips, or fails when REMEDY_REQUIRE_NODE=1 says they must be there (CI, after npm ci). The
// process ends with the test: its standard input is closed and it is killed.
func nodeServers(t *testing.T) map[string]string {
	t.Helper()
	node := interop.NeedNode(t, nodeDir, "fastify", "the Node frameworks",
		"run `cd interop/frameworks/node && npm ci --ignore-scripts` (it installs the frameworks and Node 22 from npm)")
	line := interop.StartNode(t, node, nodeDir, startGuard, "servers.mjs")
	var ports map[string]int
	if err := json.Unmarshal([]byte(line), &ports); err != nil || len(ports) == 0 {
		t.Fatalf("servers.mjs printed %q, not its ports", line)
	}
	bases := make(map[string]string, len(ports))
	for name, port := range ports {
		bases[name] = "http://127.0.0.1:" + strconv.Itoa(port)
	}
	return bases
}

// The requests every Node framework answers (servers.mjs serves the same API in each).
var (
	postEnum     = request{method: "POST", path: "/orders", body: `{"color":"purple","quantity":1}`}
	postMax      = request{method: "POST", path: "/orders", body: `{"color":"red","quantity":101}`}
	postRequired = request{method: "POST", path: "/orders", body: `{"quantity":1}`}
	postType     = request{method: "POST", path: "/orders", body: `{"color":"red","quantity":"many"}`}
	postNested   = request{method: "POST", path: "/orders", body: `{"color":"red","quantity":1,"lines":[{"sku":"a","quantity":1},{"sku":"b","quantity":101}]}`}
	getQuery     = request{method: "GET", path: "/orders?limit=500"}
	getUnknown   = request{method: "GET", path: "/nope"}
	getLimited   = request{method: "GET", path: "/limited"}
)

// TestNodeFrameworks records the default failures of the Node frameworks and validators.
func TestNodeFrameworks(t *testing.T) {
	bases := nodeServers(t)
	for _, fw := range nodeFrameworks {
		t.Run(fw.name, func(t *testing.T) {
			base, ok := bases[fw.name]
			if !ok {
				t.Fatalf("servers.mjs started no %s", fw.name)
			}
			run(t, base, fw.recs)
		})
	}
}

// nodeFramework is one framework of servers.mjs and what it answers.
type nodeFramework struct {
	name string
	recs []recording
}

// Facts the frameworks state, as JSON.
const (
	max100   = `{"maximum":100}`
	max50    = `{"maximum":50}`
	integer  = `"integer"`
	notFound = "not_found"
)

var allowedColors = []string{`"red"`, `"green"`, `"blue"`}

// rateLimited is the answer of a rate limit of 2 requests a minute to its third request.
func rateLimited(name string, dialect remedy.Dialect, code string, clock map[string]string) recording {
	return recording{name: name, dialect: dialect, req: getLimited, repeat: 2, clock: clock,
		want: want{status: 429, code: code, retryable: true, retryAfter: time.Minute}}
}

var nodeFrameworks = []nodeFramework{
	// fastify validates with ajv and answers its first error as one message,
	// "<where><instancePath> <ajv's message>" (fastify's defaultSchemaErrorFormatter).
	{"fastify", []recording{
		{name: "fastify-enum", dialect: remedy.DialectGenericJSON, req: postEnum, want: want{status: 400, code: "FST_ERR_VALIDATION",
			issues: []issue{{path: "/color", code: "enum"}}}},
		{name: "fastify-max", dialect: remedy.DialectGenericJSON, req: postMax, want: want{status: 400, code: "FST_ERR_VALIDATION",
			issues: []issue{{path: "/quantity", code: "maximum", expected: max100}}}},
		{name: "fastify-required", dialect: remedy.DialectGenericJSON, req: postRequired, want: want{status: 400, code: "FST_ERR_VALIDATION",
			issues: []issue{{path: "/color", code: "required"}}}},
		{name: "fastify-type", dialect: remedy.DialectGenericJSON, req: postType, want: want{status: 400, code: "FST_ERR_VALIDATION",
			issues: []issue{{path: "/quantity", code: "type", expected: integer}}}},
		{name: "fastify-nested", dialect: remedy.DialectGenericJSON, req: postNested, want: want{status: 400, code: "FST_ERR_VALIDATION",
			issues: []issue{{path: "/lines/1/quantity", code: "maximum", expected: max100}}}},
		{name: "fastify-query", dialect: remedy.DialectGenericJSON, req: getQuery, want: want{status: 400, code: "FST_ERR_VALIDATION",
			issues: []issue{{path: "/limit", code: "maximum", expected: max50}}}},
		{name: "fastify-unknown-route", dialect: remedy.DialectGenericJSON, req: getUnknown, want: want{status: 404, code: notFound}},
		rateLimited("fastify-rate-limit", remedy.DialectGenericJSON, "too_many_requests",
			map[string]string{"Retry-After": "60", "X-Ratelimit-Reset": "60"}),
	}},
	// express-openapi-validator lists ajv's errors with a path led by where the value
	// travelled, and a code "<keyword>.openapi.validation"; an enum's message lists its values.
	{"express-openapi-validator", []recording{
		{name: "express-openapi-validator-enum", dialect: remedy.DialectGenericJSON, req: postEnum, want: want{status: 400, code: "bad_request",
			issues: []issue{{path: "/color", code: "enum", allowed: allowedColors}}}},
		{name: "express-openapi-validator-max", dialect: remedy.DialectGenericJSON, req: postMax, want: want{status: 400, code: "bad_request",
			issues: []issue{{path: "/quantity", code: "maximum", expected: max100}}}},
		{name: "express-openapi-validator-required", dialect: remedy.DialectGenericJSON, req: postRequired, want: want{status: 400, code: "bad_request",
			issues: []issue{{path: "/color", code: "required"}}}},
		{name: "express-openapi-validator-type", dialect: remedy.DialectGenericJSON, req: postType, want: want{status: 400, code: "bad_request",
			issues: []issue{{path: "/quantity", code: "type", expected: integer}}}},
		{name: "express-openapi-validator-nested", dialect: remedy.DialectGenericJSON, req: postNested, want: want{status: 400, code: "bad_request",
			issues: []issue{{path: "/lines/1/quantity", code: "maximum", expected: max100}}}},
		{name: "express-openapi-validator-query", dialect: remedy.DialectGenericJSON, req: getQuery, want: want{status: 400, code: "bad_request",
			issues: []issue{{path: "/limit", code: "maximum", expected: max50}}}},
		// The path of a route that is not in the document is the request's path, not a field.
		{name: "express-openapi-validator-unknown-route", dialect: remedy.DialectGenericJSON, req: getUnknown, want: want{status: 404, code: notFound}},
	}},
	// express-validator's default message, "Invalid value", names no rule: what it states is
	// the field, where it travelled and the value that arrived.
	{"express-validator", []recording{
		{name: "express-validator-enum", dialect: remedy.DialectGenericJSON, req: postEnum, want: want{status: 400, code: "bad_request",
			issues: []issue{{path: "/color", received: `"purple"`}}}},
		{name: "express-validator-max", dialect: remedy.DialectGenericJSON, req: postMax, want: want{status: 400, code: "bad_request",
			issues: []issue{{path: "/quantity", received: `101`}}}},
		{name: "express-validator-required", dialect: remedy.DialectGenericJSON, req: postRequired, want: want{status: 400, code: "bad_request",
			issues: []issue{{path: "/color"}}}},
		{name: "express-validator-type", dialect: remedy.DialectGenericJSON, req: postType, want: want{status: 400, code: "bad_request",
			issues: []issue{{path: "/quantity", received: `"many"`}}}},
		{name: "express-validator-nested", dialect: remedy.DialectGenericJSON, req: postNested, want: want{status: 400, code: "bad_request",
			issues: []issue{{path: "/lines/1/quantity", received: `101`}}}},
		{name: "express-validator-query", dialect: remedy.DialectGenericJSON, req: getQuery, want: want{status: 400, code: "bad_request",
			issues: []issue{{path: "/limit", received: `"500"`}}}},
		// Express's own answer to a route it does not have: an HTML page.
		{name: "express-unknown-route", dialect: remedy.DialectUnstructured, req: getUnknown, want: want{status: 404, code: notFound}},
		// express-rate-limit's default answer: text, with Retry-After and the draft-8 RateLimit
		// header.
		rateLimited("express-rate-limit", remedy.DialectUnstructured, "too_many_requests",
			map[string]string{"Retry-After": "60", "Ratelimit": `"2-in-1min"; r=0; t=60`}),
	}},
	// NestJS's ValidationPipe answers class-validator's messages, "<property> <template>", the
	// property led by its parents' path for nested objects ("lines.1.quantity").
	// IsIn and IsEnum share their template, as IsNotEmpty and ArrayNotEmpty share theirs: such
	// a message states the values, not which decorator failed.
	{"nestjs", []recording{
		{name: "nestjs-enum", dialect: remedy.DialectGenericJSON, req: postEnum, want: want{status: 400, code: "bad_request",
			issues: []issue{{path: "/color", allowed: allowedColors}}}},
		{name: "nestjs-max", dialect: remedy.DialectGenericJSON, req: postMax, want: want{status: 400, code: "bad_request",
			issues: []issue{{path: "/quantity", code: "max", expected: max100}}}},
		{name: "nestjs-required", dialect: remedy.DialectGenericJSON, req: postRequired, want: want{status: 400, code: "bad_request",
			issues: []issue{{path: "/color", allowed: allowedColors}, {path: "/color"}}}},
		// class-validator checks every constraint of a property: a string fails IsInt and Max.
		{name: "nestjs-type", dialect: remedy.DialectGenericJSON, req: postType, want: want{status: 400, code: "bad_request",
			issues: []issue{{path: "/quantity", code: "isInt", expected: integer}, {path: "/quantity", code: "max", expected: max100}}}},
		{name: "nestjs-nested", dialect: remedy.DialectGenericJSON, req: postNested, want: want{status: 400, code: "bad_request",
			issues: []issue{{path: "/lines/1/quantity", code: "max", expected: max100}}}},
		{name: "nestjs-query", dialect: remedy.DialectGenericJSON, req: getQuery, want: want{status: 400, code: "bad_request",
			issues: []issue{{path: "/limit", code: "max", expected: max50}}}},
		{name: "nestjs-unknown-route", dialect: remedy.DialectGenericJSON, req: getUnknown, want: want{status: 404, code: notFound}},
	}},
	// @hono/zod-validator's default hook answers zod's result: zod 3's issues as a list.
	{"hono-zod3", honoZod("hono-zod3", []issue{{path: "/color", code: "invalid_type"}}, "invalid_enum_value", `"purple"`)},
	// zod 4's error serializes as its message: the issues as a JSON string.
	{"hono-zod4", honoZod("hono-zod4", []issue{{path: "/color", code: "invalid_value", allowed: allowedColors}}, "invalid_value", "")},
	// celebrate's errors() answers Joi's first error: the keys (its path, dotted) and Joi's
	// message, "\"<label>\" <template>".
	{"celebrate", []recording{
		{name: "celebrate-enum", dialect: remedy.DialectGenericJSON, req: postEnum, want: want{status: 400, code: "bad_request",
			issues: []issue{{path: "/color", code: "any.only", allowed: allowedColors}}}},
		{name: "celebrate-max", dialect: remedy.DialectGenericJSON, req: postMax, want: want{status: 400, code: "bad_request",
			issues: []issue{{path: "/quantity", code: "number.max", expected: max100}}}},
		{name: "celebrate-required", dialect: remedy.DialectGenericJSON, req: postRequired, want: want{status: 400, code: "bad_request",
			issues: []issue{{path: "/color", code: "any.required"}}}},
		{name: "celebrate-type", dialect: remedy.DialectGenericJSON, req: postType, want: want{status: 400, code: "bad_request",
			issues: []issue{{path: "/quantity", code: "number.base", expected: `"number"`}}}},
		{name: "celebrate-nested", dialect: remedy.DialectGenericJSON, req: postNested, want: want{status: 400, code: "bad_request",
			issues: []issue{{path: "/lines/1/quantity", code: "number.max", expected: max100}}}},
		{name: "celebrate-query", dialect: remedy.DialectGenericJSON, req: getQuery, want: want{status: 400, code: "bad_request",
			issues: []issue{{path: "/limit", code: "number.max", expected: max50}}}},
	}},
	// Prism answers a request its document does not allow with a problem whose validation
	// list locates each of ajv's errors and names its keyword.
	{"prism", []recording{
		{name: "prism-enum", dialect: remedy.DialectProblem, req: postEnum, want: want{status: 422, code: "UNPROCESSABLE_ENTITY",
			issues: []issue{{path: "/color", code: "enum", allowed: allowedColors}}}},
		{name: "prism-max", dialect: remedy.DialectProblem, req: postMax, want: want{status: 422, code: "UNPROCESSABLE_ENTITY",
			issues: []issue{{path: "/quantity", code: "maximum", expected: max100}}}},
		{name: "prism-required", dialect: remedy.DialectProblem, req: postRequired, want: want{status: 422, code: "UNPROCESSABLE_ENTITY",
			issues: []issue{{path: "/color", code: "required"}}}},
		{name: "prism-type", dialect: remedy.DialectProblem, req: postType, want: want{status: 422, code: "UNPROCESSABLE_ENTITY",
			issues: []issue{{path: "/quantity", code: "type", expected: integer}}}},
		{name: "prism-nested", dialect: remedy.DialectProblem, req: postNested, want: want{status: 422, code: "UNPROCESSABLE_ENTITY",
			issues: []issue{{path: "/lines/1/quantity", code: "maximum", expected: max100}}}},
		{name: "prism-query", dialect: remedy.DialectProblem, req: getQuery, want: want{status: 422, code: "UNPROCESSABLE_ENTITY",
			issues: []issue{{path: "/limit", code: "maximum", expected: max50}}}},
		{name: "prism-unknown-route", dialect: remedy.DialectProblem, req: getUnknown, want: want{status: 404, code: "NO_PATH_MATCHED_ERROR"}},
	}},
}

// honoZod is what Hono with @hono/zod-validator answers, zod 3 or 4 (name) deciding the
// missing field's issue and the enum's code and received value.
func honoZod(name string, required []issue, enumCode, enumReceived string) []recording {
	return []recording{
		{name: name + "-enum", dialect: remedy.DialectGenericJSON, req: postEnum, want: want{status: 400, code: "bad_request",
			issues: []issue{{path: "/color", code: enumCode, received: enumReceived, allowed: allowedColors}}}},
		{name: name + "-max", dialect: remedy.DialectGenericJSON, req: postMax, want: want{status: 400, code: "bad_request",
			issues: []issue{{path: "/quantity", code: "too_big", expected: max100}}}},
		{name: name + "-required", dialect: remedy.DialectGenericJSON, req: postRequired, want: want{status: 400, code: "bad_request",
			issues: required}},
		{name: name + "-type", dialect: remedy.DialectGenericJSON, req: postType, want: want{status: 400, code: "bad_request",
			issues: []issue{{path: "/quantity", code: "invalid_type", expected: `"number"`}}}},
		{name: name + "-nested", dialect: remedy.DialectGenericJSON, req: postNested, want: want{status: 400, code: "bad_request",
			issues: []issue{{path: "/lines/1/quantity", code: "too_big", expected: max100}}}},
		{name: name + "-query", dialect: remedy.DialectGenericJSON, req: getQuery, want: want{status: 400, code: "bad_request",
			issues: []issue{{path: "/limit", code: "too_big", expected: max50}}}},
		{name: name + "-unknown-route", dialect: remedy.DialectUnstructured, req: getUnknown, want: want{status: 404, code: notFound}},
	}
}
