package main

import (
	"fmt"
	"net/http"
	"net/url"
	"strings"
)

// headerFlag collects repeated --header 'Key: Value' flags.
type headerFlag struct{ h http.Header }

func (f *headerFlag) String() string {
	if f == nil || len(f.h) == 0 {
		return ""
	}
	var parts []string
	for k, vs := range f.h {
		for _, v := range vs {
			parts = append(parts, k+": "+v)
		}
	}
	return strings.Join(parts, ", ")
}

func (f *headerFlag) Set(s string) error {
	k, v, ok := strings.Cut(s, ":")
	k, v = strings.TrimSpace(k), strings.TrimSpace(v)
	if !ok || k == "" {
		return fmt.Errorf("want 'Name: value', got %q", s)
	}
	for _, r := range k {
		// RFC 9110 token characters.
		if r > 0x7e || r <= ' ' || strings.ContainsRune(`"(),/:;<=>?@[\]{}`, r) {
			return fmt.Errorf("%q is not a header name", k)
		}
	}
	if strings.ContainsAny(v, "\r\n") {
		return fmt.Errorf("the value of %s spans lines", k)
	}
	if f.h == nil {
		f.h = http.Header{}
	}
	f.h.Add(k, v)
	return nil
}

// headerTransport adds the caller's headers (credentials, usually) to every request sent to
// one of hosts, and to no other host: a redirect elsewhere does not carry them.
type headerTransport struct {
	base   http.RoundTripper
	header http.Header
	hosts  map[string]bool
}

func (t *headerTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	if len(t.header) == 0 || !t.hosts[r.URL.Host] {
		return t.base.RoundTrip(r)
	}
	r = r.Clone(r.Context())
	for k, vs := range t.header {
		if k == "Host" {
			r.Host = vs[len(vs)-1]
			continue
		}
		r.Header[k] = append([]string(nil), vs...)
	}
	return t.base.RoundTrip(r)
}

// httpClient returns a client that sends header to the hosts of urls.
func httpClient(header http.Header, urls ...*url.URL) *http.Client {
	hosts := map[string]bool{}
	for _, u := range urls {
		if u != nil {
			hosts[u.Host] = true
		}
	}
	return &http.Client{Transport: &headerTransport{base: http.DefaultTransport, header: header, hosts: hosts}}
}

// parseBaseURL checks that s is an absolute http(s) URL.
func parseBaseURL(s string) (*url.URL, error) {
	u, err := url.Parse(s)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, usagef("%q is not an absolute http(s) URL", s)
	}
	return u, nil
}
