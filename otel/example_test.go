package remedyotel_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"time"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/exporters/stdout/stdouttrace"
	"go.opentelemetry.io/otel/propagation"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"

	"github.com/remedy-go/remedy/client"
	remedyotel "github.com/remedy-go/remedy/otel"
	"github.com/remedy-go/remedy/server"
)

// A server and a client, both traced into the stdout exporter (here into a buffer, to print
// the span tree): the report is busy once, so the call makes two attempts, and the server's
// span of each is a child of the attempt's.
func Example() {
	var out bytes.Buffer // os.Stdout in a real program
	exp, err := stdouttrace.New(stdouttrace.WithWriter(&out))
	if err != nil {
		fmt.Println(err)
		return
	}
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(exp))
	otel.SetTracerProvider(tp)
	otel.SetTextMapPropagator(propagation.TraceContext{})

	type Query struct {
		Currency string `query:"currency" schema:"enum=usd,eur"`
	}
	type Report struct {
		Revenue int `json:"revenue"`
	}
	busy := true
	api, err := server.New(server.WithObserver(remedyotel.ServerObserver()))
	if err != nil {
		panic(err)
	}
	err = server.Get(api, "/v1/report", func(ctx context.Context, q Query) (Report, error) {
		if busy {
			busy = false
			p := server.Error(server.CodeUnavailable, "the report is being rebuilt")
			p.RetryAfter = 10 * time.Millisecond
			return Report{}, p
		}
		return Report{Revenue: 1200}, nil
	}, server.OperationID("report"))
	if err != nil {
		fmt.Println(err)
		return
	}
	srv := httptest.NewServer(api)

	c, err := client.New(client.WithBaseURL(srv.URL),
		client.WithOperations(client.Operation{Name: "report", Method: "GET", Path: "/v1/report"}),
		client.WithHooks(remedyotel.ClientHooks()),
		client.WithHTTPClient(&http.Client{Transport: remedyotel.Transport(nil)}))
	if err != nil {
		fmt.Println(err)
		return
	}
	resp, err := c.Call(context.Background(), "report", map[string]string{"currency": "usd"})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(resp.Status, string(resp.Body))
	srv.Close() // waits for the server's spans to end
	tp.Shutdown(context.Background())

	// What the exporter wrote: one JSON object per span.
	type span struct {
		Name        string
		SpanContext struct{ SpanID string }
		Parent      struct{ SpanID string }
	}
	var spans []span
	for dec := json.NewDecoder(&out); dec.More(); {
		var s span
		if err := dec.Decode(&s); err != nil {
			fmt.Println(err)
			return
		}
		spans = append(spans, s)
	}
	// The tree, each span's children in the order of their names (the order they ended
	// in varies).
	var tree func(parent, indent string) string
	tree = func(parent, indent string) string {
		var below []string
		for _, s := range spans {
			if s.Parent.SpanID == parent {
				below = append(below, indent+s.Name+"\n"+tree(s.SpanContext.SpanID, indent+"  "))
			}
		}
		slices.Sort(below)
		return strings.Join(below, "")
	}
	fmt.Print(tree("0000000000000000", ""))
	// Output:
	// 200 {"revenue":1200}
	// report
	//   GET
	//     GET /v1/report
	//   GET
	//     GET /v1/report
}
