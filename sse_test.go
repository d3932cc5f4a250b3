package remedy_test

import (
	"bytes"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/remedy-go/remedy"
)

// A failure inside an event stream (an MCP server's answer on streamable HTTP) is read as the
// failure it is, from the JSON-RPC response among the stream's events — not taken for a
// success — and Classify decides the same.
func TestParseEventStream(t *testing.T) {
	t.Parallel()
	const toolError = `{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"{\"error\":{\"code\":\"invalid_body\",\"message\":\"currency must be one of usd, eur\",\"retryable\":false}}"}],"isError":true}}`
	const rpcError = `{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"unknown tool: void_invoice"}}`
	const progress = `{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":1,"progress":0.5}}`
	const success = `{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"ok"}]}}`
	sse := http.Header{"Content-Type": {"text/event-stream"}}
	for _, c := range []struct {
		name   string
		header http.Header
		body   string
		code   string // the failure's code; "" for a success
	}{
		{"one event", sse, "event: message\nid: 1\ndata: " + toolError + "\n\n", "invalid_body"},
		{"after a notification", sse, "event: message\ndata: " + progress + "\n\nevent: message\ndata: " + toolError + "\n\n", "invalid_body"},
		{"a notification after the response", sse, "data: " + rpcError + "\n\ndata: " + progress + "\n\n", "-32602"},
		{"data over several lines, CRLF", sse, "data: {\"jsonrpc\":\"2.0\",\"id\":1,\r\ndata: \"error\":{\"code\":-32603,\"message\":\"boom\"}}\r\n\r\n", "-32603"},
		{"comments and CR line ends", sse, ": hello\r: keep-alive\rdata: " + rpcError + "\r\r", "-32602"},
		{"no blank line at the end", sse, "data: " + rpcError, "-32602"},
		{"charset in the type", http.Header{"Content-Type": {"text/event-stream; charset=utf-8"}}, "data: " + rpcError + "\n\n", "-32602"},
		{"no Content-Type, a stream by its start", nil, "event: message\ndata: " + toolError + "\n\n", "invalid_body"},
		{"a success in a stream", sse, "data: " + progress + "\n\ndata: " + success + "\n\n", ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			e, ok := remedy.Parse(200, c.header, []byte(c.body))
			v := remedy.Classify(200, c.header, []byte(c.body))
			if c.code == "" {
				if ok || v.Failure {
					t.Fatalf("a success read as a failure: %+v", e)
				}
				return
			}
			if !ok || !v.Failure {
				t.Fatalf("the failure in the stream was taken for a success")
			}
			if e.Code != c.code || v.Retryable != e.Retryable || v.Dialect != e.Dialect {
				t.Errorf("code %q (want %q), dialect %s; Classify %+v", e.Code, c.code, e.Dialect, v)
			}
		})
	}
	// A stream whose events carry no JSON is no JSON: a 502's stream is classified by its status.
	if e, ok := remedy.Parse(502, sse, []byte(": keep-alive\n\n")); !ok || e.Dialect != remedy.DialectUnstructured {
		t.Errorf("a stream of comments: %+v %v", e, ok)
	}
	// A body of another type that merely starts like a stream is not read as one.
	if _, ok := remedy.Parse(200, http.Header{"Content-Type": {"text/plain"}}, []byte("data: "+rpcError+"\n\n")); ok {
		t.Error("a text/plain body was read as an event stream")
	}
}

// A stream cut at the bound keeps its whole events and leaves out the one it cut, whose data
// may be cut too: the failure of an earlier event still decides, and a cut response decides
// nothing.
func TestParseEventStreamCut(t *testing.T) {
	t.Parallel()
	sse := http.Header{"Content-Type": {"text/event-stream"}}
	rpcError := `{"jsonrpc":"2.0","id":1,"error":{"code":-32603,"message":"internal"}}`
	padding := "data: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/message\",\"params\":{\"data\":\"" + strings.Repeat("x", remedy.DefaultMaxBody) + "\"}}\n\n"
	e, ok := remedy.Parse(200, sse, []byte("data: "+rpcError+"\n\n"+padding))
	if !ok || e.Code != "-32603" {
		t.Fatalf("the response before the cut: %+v %v", e, ok)
	}
	// The response itself cut at the bound: nothing read says whether the call failed, and that
	// is not a success.
	cut := []byte(padding[:len(padding)-10] + "\n\ndata: " + rpcError + "\n\n")
	resp := &http.Response{StatusCode: 200, Header: sse, Body: io.NopCloser(bytes.NewReader(cut))}
	e, ok = remedy.ParseResponse(resp)
	if !ok || e.Dialect != remedy.DialectTruncated || e.Retryable || !strings.Contains(e.Message, "not known") {
		t.Errorf("a stream whose response is past the bound: %+v %v", e, ok)
	}
}

// The attack of issue 35, row 10: 1.2 MiB of progress notifications, then a JSON-RPC error.
// Parse and Classify, which hold the whole body, find the error past the bound; ParseResponse,
// which reads only up to its bound, says it cannot tell — neither reads the call as a success.
// A long stream that answers with a result is still a success where its answer was read.
func TestParseEventStreamLongerThanTheBound(t *testing.T) {
	t.Parallel()
	sse := http.Header{"Content-Type": {"text/event-stream"}}
	const progress = "data: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\",\"params\":{\"progressToken\":1,\"progress\":0.5}}\n\n"
	const rpcError = `{"jsonrpc":"2.0","id":7,"error":{"code":-32603,"message":"the charge failed"}}`
	const result = `{"jsonrpc":"2.0","id":7,"result":{"content":[{"type":"text","text":"charged"}]}}`
	long := strings.Repeat(progress, (remedy.DefaultMaxBody*6/5)/len(progress)+1)
	failing := []byte(long + "data: " + rpcError + "\n\n")
	succeeding := []byte(long + "data: " + result + "\n\n")
	if len(failing) <= remedy.DefaultMaxBody*6/5 {
		t.Fatalf("the stream is %d bytes, not past the bound", len(failing))
	}

	e, ok := remedy.Parse(200, sse, failing)
	if !ok || e.Code != "-32603" || e.Message != "the charge failed" {
		t.Errorf("Parse: %+v %v", e, ok)
	}
	if v := remedy.Classify(200, sse, failing); !v.Failure || v.Retryable != e.Retryable {
		t.Errorf("Classify: %+v", v)
	}
	if e, ok := remedy.Parse(200, sse, succeeding); ok {
		t.Errorf("a long stream that answers with a result: %+v", e)
	}
	// An answer itself longer than the bound is read as a JSON body of its size: a result is a
	// success, and a failure status reads the decision members at its start.
	big := `{"jsonrpc":"2.0","id":7,"result":{"content":[{"type":"text","text":"` + strings.Repeat("r", remedy.DefaultMaxBody) + `"}]}}`
	if e, ok := remedy.Parse(200, sse, []byte(progress+"data: "+big+"\n\n")); ok {
		t.Errorf("a stream whose result is longer than the bound: %+v", e)
	}
	bigError := `{"error":{"code":"export_too_large","retryable":false,"message":"` + strings.Repeat("m", remedy.DefaultMaxBody) + `"}}`
	if e, ok := remedy.Parse(500, sse, []byte(progress+"data: "+bigError+"\n\n")); !ok || e.Dialect != remedy.DialectTruncated || e.Code != "export_too_large" {
		t.Errorf("a 500 stream whose failure is longer than the bound: %+v %v", e, ok)
	}

	for _, body := range [][]byte{failing, succeeding} {
		resp := &http.Response{StatusCode: 200, Header: sse, Body: io.NopCloser(bytes.NewReader(body))}
		e, ok := remedy.ParseResponse(resp)
		if !ok || e.Dialect != remedy.DialectTruncated || e.Retryable {
			t.Errorf("ParseResponse at the default bound: %+v %v", e, ok)
		}
		rest, _ := io.ReadAll(resp.Body)
		if !bytes.Equal(rest, body) {
			t.Error("ParseResponse did not leave the body whole")
		}
	}
	resp := &http.Response{StatusCode: 200, Header: sse, Body: io.NopCloser(bytes.NewReader(failing))}
	if e, ok := remedy.ParseResponse(resp, remedy.WithMaxBody(int64(len(failing)))); !ok || e.Code != "-32603" {
		t.Errorf("ParseResponse with a bound the stream fits: %+v %v", e, ok)
	}
}
