package remedy

import (
	"encoding/base64"
	"math"
	"strings"
	"time"

	"github.com/remedy-go/remedy/internal/tape"
	"github.com/remedy-go/remedy/internal/waits"
)

// The RPC frameworks' JSON errors, which sit at the top level of the body:
//
//   - grpc-gateway writes a google.rpc.Status: {"code":3,"message":"…","details":[{"@type":…}]}.
//     The code is a number, which many hand-written APIs also send beside a message, so the body
//     is read as a google.rpc.Status only when it has exactly the members protojson writes for
//     one with grpc-gateway's default marshaler (code, message and details, the last even when
//     empty) and either its details are google.protobuf.Any values (each an object with an
//     "@type" URL) or, with no details, the HTTP status is the one grpc-gateway maps the code
//     to. The code then reads as its google.rpc.Code name (3 → INVALID_ARGUMENT), as Google's
//     {"error":{"status":…}} form gives it.
//   - connect writes {"code":"invalid_argument","message":"…","details":[{"type","value","debug"}]}:
//     read when the code is one of connect's, there is no member but these, and either every
//     detail has its type and value strings or, with no details, the status and Content-Type
//     are the ones connect writes for that code (so that, without a status, only a body with
//     details is connect's). A detail's debug (its JSON form, present when
//     the server knew the type) is read when present, its binary value (a protobuf message,
//     base64) otherwise.
//   - twirp writes {"code":"invalid_argument","msg":"…","meta":{"argument":"…"}}: read when the
//     code is one of twirp's, msg is there, there is no member but these, meta's values are
//     strings, and the status, when there is one, is twirp's for the code.
//
// Each framework's details are google.rpc's (grpc-gateway and connect) or twirp's argument:
// field violations and the argument become issues, RetryInfo's delay the wait, ErrorInfo's
// reason the code.

// grpcCodes are google.rpc.Code's names, indexed by number, with the HTTP status grpc-gateway
// answers each with (runtime.HTTPStatusFromCode).
var grpcCodes = [...]struct {
	name   string
	status int
}{
	{"OK", 200}, {"CANCELLED", 499}, {"UNKNOWN", 500}, {"INVALID_ARGUMENT", 400},
	{"DEADLINE_EXCEEDED", 504}, {"NOT_FOUND", 404}, {"ALREADY_EXISTS", 409},
	{"PERMISSION_DENIED", 403}, {"RESOURCE_EXHAUSTED", 429}, {"FAILED_PRECONDITION", 400},
	{"ABORTED", 409}, {"OUT_OF_RANGE", 400}, {"UNIMPLEMENTED", 501}, {"INTERNAL", 500},
	{"UNAVAILABLE", 503}, {"DATA_LOSS", 500}, {"UNAUTHENTICATED", 401},
}

// connectStatus is the HTTP status connect answers each of its codes with
// (connectCodeToHTTP); 0 for a word that is not one of its codes.
func connectStatus(code string) int {
	switch code {
	case "canceled":
		return 499
	case "unknown", "internal", "data_loss":
		return 500
	case "invalid_argument", "failed_precondition", "out_of_range":
		return 400
	case "deadline_exceeded":
		return 504
	case "not_found":
		return 404
	case "already_exists", "aborted":
		return 409
	case "permission_denied":
		return 403
	case "resource_exhausted":
		return 429
	case "unimplemented":
		return 501
	case "unavailable":
		return 503
	case "unauthenticated":
		return 401
	}
	return 0
}

// twirpStatus is the HTTP status twirp answers each of its codes with
// (twirp.ServerHTTPStatusFromErrorCode); 0 for a word that is not one of its codes.
func twirpStatus(code string) int {
	switch code {
	case "canceled", "deadline_exceeded":
		return 408
	case "unknown", "internal", "data_loss":
		return 500
	case "invalid_argument", "malformed", "out_of_range":
		return 400
	case "not_found", "bad_route":
		return 404
	case "already_exists", "aborted":
		return 409
	case "permission_denied":
		return 403
	case "unauthenticated":
		return 401
	case "resource_exhausted":
		return 429
	case "failed_precondition":
		return 412
	case "unimplemented":
		return 501
	case "unavailable":
		return 503
	}
	return 0
}

// readRPC reads grpc-gateway's, connect's and twirp's errors (see above).
func (p *parser) readRPC() Dialect {
	t := &p.top
	switch t.code.Kind() {
	case tape.Number:
		if t.details.IsArray() && t.message.IsString() {
			return p.readGatewayStatus()
		}
	case tape.String:
		if t.msg.IsString() {
			return p.readTwirp()
		}
		return p.readConnect()
	}
	return ""
}

// onlyMembers reports whether the top-level object has no member but those named.
func (p *parser) onlyMembers(a, b, c string) bool {
	for it := p.top.root.Iter(); it.Next(); {
		if k := it.Key(); k != a && k != b && k != c {
			return false
		}
	}
	return true
}

func (p *parser) readGatewayStatus() Dialect {
	t := &p.top
	n := t.code.Num()
	if n != math.Trunc(n) || n < 1 || n >= float64(len(grpcCodes)) || !p.onlyMembers("code", "message", "details") {
		return ""
	}
	code := grpcCodes[int(n)]
	if t.details.Len() == 0 && p.status != code.status {
		return ""
	}
	for it := t.details.Iter(); it.Next(); {
		if !strings.Contains(it.Val().Member("@type").Str(), "/") {
			return ""
		}
	}
	p.e.Message = t.message.Str()
	p.bodyStatus = code.status // the status the gateway gives the code, for a body without one
	p.googleDetails(t.details, code.name)
	return DialectGoogle
}

func (p *parser) readConnect() Dialect {
	t := &p.top
	code := t.code.Str()
	status := connectStatus(code)
	if status == 0 || !p.onlyMembers("code", "message", "details") ||
		t.message.Exists() && !t.message.IsString() || t.details.Exists() && !t.details.IsArray() {
		return ""
	}
	if t.details.Len() == 0 && (p.status != status || !strings.HasPrefix(p.h.contentType, "application/json")) {
		return ""
	}
	for it := t.details.Iter(); it.Next(); {
		d := it.Val()
		if !d.Member("type").IsString() || !d.Member("value").IsString() {
			return ""
		}
	}
	p.e.Code, p.e.Message = code, t.message.Str()
	p.bodyStatus = status
	for it := t.details.Iter(); it.Next(); {
		d := it.Val()
		// The type is the message's full name, or a type URL ending with it.
		name := d.Member("type").Str()
		name = name[strings.LastIndexByte(name, '/')+1:]
		kind, ok := strings.CutPrefix(name, "google.rpc.")
		if !ok {
			continue
		}
		if debug := d.Member("debug"); debug.IsObject() {
			p.googleDetail(kind, debug)
			continue
		}
		if !p.full {
			// The binary form is decoded on the full parse only; what it says may decide.
			switch kind {
			case "ErrorInfo", "RetryInfo", "BadRequest":
				p.needFull = true
			}
			continue
		}
		p.binaryDetail(kind, d.Member("value").Str())
	}
	return DialectConnect
}

func (p *parser) readTwirp() Dialect {
	t := &p.top
	code := t.code.Str()
	status := twirpStatus(code)
	if status == 0 || p.status != 0 && p.status != status || !p.onlyMembers("code", "msg", "meta") ||
		t.meta.Exists() && !t.meta.IsObject() {
		return ""
	}
	for it := t.meta.Iter(); it.Next(); {
		if !it.Val().IsString() {
			return ""
		}
	}
	e := &p.e
	e.Code, e.Message = code, t.msg.Str()
	p.bodyStatus = status
	// twirp.InvalidArgumentError(argument, validationMsg) sets meta.argument; its message is
	// argument+" "+validationMsg, and twirp.RequiredArgumentError's validationMsg is "is
	// required". Any other text after the argument is the application's own.
	if arg := t.meta.Member("argument"); arg.IsString() && code == "invalid_argument" {
		is := Issue{Message: e.Message}
		if p.full {
			is.Path = toPointer(arg.Str())
		}
		if e.Message == arg.Str()+" is required" {
			is.Code = "required"
		}
		p.addIssue(is)
	}
	return DialectTwirp
}

// --- google.rpc details in protobuf's binary form ---

// maxBinaryDetail bounds the size of a detail's binary value that is decoded.
const maxBinaryDetail = 16 << 10

// binaryDetail reads one google.rpc detail from its base64 binary value: the facts
// googleDetail reads from the JSON form.
func (p *parser) binaryDetail(kind, value string) {
	if len(value) > base64.StdEncoding.EncodedLen(maxBinaryDetail) {
		return
	}
	// Connect writes the value unpadded; a padded one is accepted as connect's own reader does.
	b, err := base64.RawStdEncoding.DecodeString(strings.TrimRight(value, "="))
	if err != nil {
		return
	}
	switch kind {
	case "ErrorInfo":
		if r := wireString(b, 1); r != "" {
			p.googleReason(r)
		}
	case "RetryInfo":
		if d, ok := wireMessage(b, 1); ok {
			if w := wireDuration(d); w.OK {
				p.googleRetry(w)
			}
		}
	case "BadRequest":
		if !wireValid(b) {
			return
		}
		for r := (wireReader{b: b}); ; {
			f, ok := r.next()
			if !ok {
				break
			}
			if f.num == 1 && f.typ == wireBytes && wireValid(f.bytes) {
				p.addIssue(Issue{Path: toPointer(wireString(f.bytes, 1)), Code: wireString(f.bytes, 3), Message: wireString(f.bytes, 2)})
			}
		}
	case "QuotaFailure", "PreconditionFailure":
		// QuotaFailure.Violation's description is field 2, PreconditionFailure.Violation's 3.
		field := uint64(2)
		if kind == "PreconditionFailure" {
			field = 3
		}
		if v, ok := wireMessage(b, 1); ok && p.e.Hint == "" {
			p.e.Hint = wireString(v, field)
		}
	case "Help":
		if l, ok := wireMessage(b, 1); ok && p.e.DocsURL == "" {
			p.e.DocsURL = wireString(l, 2)
		}
	case "RequestInfo":
		if id := wireString(b, 1); id != "" {
			p.e.RequestID = id
		}
	}
}

// wireDuration is a google.protobuf.Duration's wait: seconds (field 1) and nanos (field 2);
// a negative one is no wait.
func wireDuration(b []byte) wait {
	var sec, nanos int64
	for r := (wireReader{b: b}); ; {
		f, ok := r.next()
		if !ok {
			if r.err {
				return wait{}
			}
			break
		}
		if f.typ != wireVarint {
			continue
		}
		switch f.num {
		case 1:
			sec = int64(f.varint)
		case 2:
			nanos = int64(int32(f.varint))
		}
	}
	if sec < 0 || nanos < 0 || nanos >= 1e9 {
		return wait{}
	}
	w := waits.FromFloat(float64(sec), float64(time.Second))
	if d := w.D + time.Duration(nanos); d >= w.D {
		w.D = d
	}
	return w
}
