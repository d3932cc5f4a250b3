// Command stdout traces and measures a remedy client and server into OpenTelemetry's stdout
// exporters: a report that is busy once is called through the loop, which retries it; the
// spans (the call, its two attempts, the server's span under each) and the metrics are
// printed as JSON. It runs offline, on loopback:
//
//	cd otel && go run ./examples/stdout
package main

import (
	"context"
	"fmt"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"os"
	"time"

	"go.opentelemetry.io/otel/exporters/stdout/stdoutmetric"
	"go.opentelemetry.io/otel/exporters/stdout/stdouttrace"
	"go.opentelemetry.io/otel/propagation"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"

	"github.com/remedy-go/remedy/client"
	remedyotel "github.com/remedy-go/remedy/otel"
	"github.com/remedy-go/remedy/server"
)

func main() {
	if err := run(os.Stdout); err != nil {
		log.Fatal(err)
	}
}

// Query is the report's input; Report its result.
type (
	Query struct {
		Currency string `query:"currency" schema:"enum=usd,eur"`
	}
	Report struct {
		Revenue int `json:"revenue"`
	}
)

func run(out io.Writer) error {
	ctx := context.Background()
	spans, err := stdouttrace.New(stdouttrace.WithWriter(out), stdouttrace.WithPrettyPrint())
	if err != nil {
		return err
	}
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(spans))
	metrics, err := stdoutmetric.New(stdoutmetric.WithWriter(out), stdoutmetric.WithPrettyPrint())
	if err != nil {
		return err
	}
	reader := sdkmetric.NewManualReader()
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
	opts := []remedyotel.Option{remedyotel.WithTracerProvider(tp), remedyotel.WithMeterProvider(mp),
		remedyotel.WithPropagator(propagation.TraceContext{})}

	busy := true
	api, err := server.New(server.WithObserver(remedyotel.ServerObserver(opts...)))
	if err != nil {
		return err
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
		return err
	}
	srv := httptest.NewServer(api)
	defer srv.Close()

	c, err := client.New(client.WithBaseURL(srv.URL),
		client.WithOperations(client.Operation{Name: "report", Method: "GET", Path: "/v1/report"}),
		client.WithHooks(remedyotel.ClientHooks(opts...)),
		client.WithHTTPClient(&http.Client{Transport: remedyotel.Transport(nil, opts...)}))
	if err != nil {
		return err
	}
	resp, err := c.Call(ctx, "report", map[string]string{"currency": "usd"})
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "report: %d %s after %d attempts\n", resp.Status, resp.Body, len(resp.Attempts))
	srv.Close() // waits for the server's spans to end
	if err := tp.Shutdown(ctx); err != nil {
		return err
	}
	// The metrics, collected once and exported.
	rm := new(metricdata.ResourceMetrics)
	if err := reader.Collect(ctx, rm); err != nil {
		return err
	}
	return metrics.Export(ctx, rm)
}
