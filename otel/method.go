package remedyotel

import (
	"net/http"

	"go.opentelemetry.io/otel/attribute"
	semconv "go.opentelemetry.io/otel/semconv/v1.40.0"
)

// knownMethods are the methods the HTTP semantic conventions know by default: RFC 9110's,
// PATCH and QUERY. The match is exact, as the conventions say: "get" is not GET.
var knownMethods = map[string]bool{
	http.MethodGet: true, http.MethodHead: true, http.MethodPost: true, http.MethodPut: true,
	http.MethodDelete: true, http.MethodConnect: true, http.MethodOptions: true,
	http.MethodTrace: true, http.MethodPatch: true, "QUERY": true,
}

// requestMethod is how a span names an HTTP request method, and its http.request.method.
// Any other method is named "HTTP" and said as _OTHER, with http.request.method_original
// holding it: a client may send any token as a method, and each must not make a span name
// or an attribute value of its own.
func requestMethod(m string) (name string, attrs []attribute.KeyValue) {
	if knownMethods[m] {
		return m, []attribute.KeyValue{semconv.HTTPRequestMethodKey.String(m)}
	}
	return "HTTP", []attribute.KeyValue{semconv.HTTPRequestMethodOther, semconv.HTTPRequestMethodOriginal(m)}
}
