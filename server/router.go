package server

import (
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"

	"github.com/remedy-go/remedy"
	"github.com/remedy-go/remedy/internal/closest"
)

// segment is one segment of a route: a literal, or a parameter.
type segment struct {
	lit   string
	param string
}

// parseRoute reads a path template: "/v1/orders/{id}".
func parseRoute(path string) ([]segment, error) {
	if !strings.HasPrefix(path, "/") {
		return nil, errors.New("the path must begin with /")
	}
	if path == "/" {
		return nil, nil
	}
	var segs []segment
	seen := map[string]bool{}
	for part := range strings.SplitSeq(path[1:], "/") {
		switch {
		case part == "":
			return nil, errors.New("the path has an empty segment")
		case strings.HasPrefix(part, "{") && strings.HasSuffix(part, "}"):
			name := part[1 : len(part)-1]
			if !validID.MatchString(name) {
				return nil, fmt.Errorf("path parameter %q: want a letter, then letters, digits, '_', '.' or '-'", part)
			}
			if seen[name] {
				return nil, fmt.Errorf("path parameter {%s} appears twice", name)
			}
			seen[name] = true
			segs = append(segs, segment{param: name})
		case strings.ContainsAny(part, "{}"):
			return nil, fmt.Errorf("path segment %q: a parameter must be a whole segment", part)
		case part == "." || part == "..":
			return nil, fmt.Errorf("path segment %q is not allowed", part)
		default:
			segs = append(segs, segment{lit: part})
		}
	}
	return segs, nil
}

// router matches requests to operations with a net/http.ServeMux, one method-and-wildcard
// pattern per operation ("POST /v1/orders/{p0}/pay"). The mux only matches: the pipeline
// runs the operation it names, and what is ours is said when it names none (a 404 that
// suggests the closest operations, a 405 in the envelope with Allow). The mux's own answers
// (its plain-text 404 and 405, its redirects to a cleaned path) never reach a caller.
//
// The zero router routes nothing; add builds the mux at the first operation.
type router struct {
	mux     *http.ServeMux
	ops     []*Operation // in registration order
	methods []string     // the methods of the routes, sorted, for Allow
	depth   int          // the most segments a route has
	longest int          // the longest literal segment of a route, in bytes
	// literal holds the routes without parameters by path, for the requests that spell one
	// exactly: the mux would choose it (nothing is more specific), and a map finds it in
	// half the mux's time.
	literal map[string][]*Operation
}

// endpoint is what the mux holds for an operation. The router asks the mux which endpoint a
// request matches and never lets it serve one.
type endpoint struct{ op *Operation }

// ServeHTTP is never called: the mux only matches.
func (e *endpoint) ServeHTTP(w http.ResponseWriter, r *http.Request) { http.NotFound(w, r) }

// muxPattern is the route as a ServeMux pattern: its parameters are named by position (p0,
// p1...), since our names may hold '.' and '-', which the mux does not take, and the root
// is "/{$}", since "/" alone is every path to the mux.
func muxPattern(method string, route []segment) string {
	if len(route) == 0 {
		return method + " /{$}"
	}
	var b strings.Builder
	b.WriteString(method)
	b.WriteByte(' ')
	n := 0
	for _, s := range route {
		b.WriteByte('/')
		if s.param == "" {
			b.WriteString(s.lit)
			continue
		}
		b.WriteString("{p" + strconv.Itoa(n) + "}")
		n++
	}
	return b.String()
}

// muxPatterns says whether ServeMux matches methods and wildcards, as it does unless the
// program runs with GODEBUG=httpmuxgo121=1, which gives it back its Go 1.21 rules: literal
// paths only, under which no route of ours would ever match.
var muxPatterns = sync.OnceValue(func() bool {
	m := http.NewServeMux()
	m.Handle("GET /{x}", &endpoint{})
	_, p := m.Handler(&http.Request{Method: http.MethodGet, Host: "h", URL: &url.URL{Path: "/a"}})
	return p == "GET /{x}"
})

// add routes to op. Two routes of one method conflict when some path matches both and
// neither is more specific (a literal where the other has a parameter, and nowhere the
// reverse): ServeMux would not know which to choose, so the second is refused, naming the
// first and a path they share.
func (rt *router) add(op *Operation) error {
	if !muxPatterns() {
		return errors.New("net/http.ServeMux has its Go 1.21 rules (GODEBUG=httpmuxgo121=1), which have no methods or wildcards: the API cannot route")
	}
	for _, o := range rt.ops {
		if o.Method != op.Method {
			continue
		}
		example, overlap, same := overlaps(o.route, op.route)
		switch {
		case !overlap:
		case same:
			return fmt.Errorf("%s %s is already routed to %s (%s)", op.Method, op.Path, o.ID, o.Path)
		case !moreSpecific(o.route, op.route) && !moreSpecific(op.route, o.route):
			return fmt.Errorf("%s %s conflicts with %s (%s %s): both match %s and neither is more specific; "+
				"put a literal where one has a parameter", op.Method, op.Path, o.ID, o.Method, o.Path, example)
		}
	}
	if rt.mux == nil {
		rt.mux = http.NewServeMux()
	}
	if err := handle(rt.mux, muxPattern(op.Method, op.route), &endpoint{op}); err != nil {
		return fmt.Errorf("net/http.ServeMux refuses the route: %w", err)
	}
	rt.ops = append(rt.ops, op)
	if !slices.ContainsFunc(op.route, func(s segment) bool { return s.param != "" }) {
		if rt.literal == nil {
			rt.literal = map[string][]*Operation{}
		}
		rt.literal[op.Path] = append(rt.literal[op.Path], op)
	}
	rt.depth = max(rt.depth, len(op.route))
	for _, s := range op.route {
		rt.longest = max(rt.longest, len(s.lit))
	}
	if i, found := slices.BinarySearch(rt.methods, op.Method); !found {
		rt.methods = slices.Insert(rt.methods, i, op.Method)
	}
	return nil
}

// handle registers a pattern, and returns as an error what ServeMux.Handle would panic with.
// The mux checks a pattern before it changes anything, so a refused pattern leaves it as it
// was.
func handle(mux *http.ServeMux, pattern string, h http.Handler) (err error) {
	defer func() {
		if v := recover(); v != nil {
			if e, ok := v.(error); ok {
				err = e
			} else {
				err = fmt.Errorf("%v", v)
			}
		}
	}()
	mux.Handle(pattern, h)
	return nil
}

// overlaps says whether some path matches both routes (then example is one), and whether
// they are the same route but for their parameters' names.
func overlaps(a, b []segment) (example string, overlap, same bool) {
	if len(a) != len(b) {
		return "", false, false
	}
	same = true
	var ex strings.Builder
	for i := range a {
		switch {
		case a[i].param != "" && b[i].param != "":
			ex.WriteString("/x")
			continue
		case a[i].param == "" && b[i].param == "":
			if a[i].lit != b[i].lit {
				return "", false, false
			}
			ex.WriteString("/" + a[i].lit)
			continue
		case a[i].param == "":
			ex.WriteString("/" + a[i].lit)
		default:
			ex.WriteString("/" + b[i].lit)
		}
		same = false
	}
	if ex.Len() == 0 {
		ex.WriteByte('/')
	}
	return ex.String(), true, same
}

// moreSpecific says whether route a, which overlaps b, has a parameter only where b has one.
func moreSpecific(a, b []segment) bool {
	for i := range a {
		if a[i].param != "" && b[i].param == "" {
			return false
		}
	}
	return true
}

// match finds the request's operation, and its path parameters' values as the URL spells
// them (escapes and all), in the route's order, appended to vals. A path the mux would
// redirect to its cleaned form is matched as written: a dot segment (. or ..) is a segment
// like any other, which a parameter takes (and pathIssues refuses), and an empty one matches
// nothing.
func (rt *router) match(r *http.Request, vals []string) (*Operation, []string) {
	if rt.mux == nil {
		return nil, nil
	}
	path := r.URL.EscapedPath()
	if ops := rt.literal[path]; ops != nil {
		if op := byMethod(ops, r.Method); op != nil {
			return op, vals
		}
	}
	var e *endpoint
	ok := false
	if len(path) <= muxMaxPath {
		h, _ := rt.mux.Handler(r)
		e, ok = h.(*endpoint)
	}
	if !ok {
		// Not found, a redirect to the cleaned path, which a dot segment asks for, or a path
		// too long to give the mux as it is.
		probe := rt.probe(r)
		if probe == nil || probe == r {
			return nil, nil // the mux has said no to the path as it is
		}
		h, _ := rt.mux.Handler(probe)
		if e, ok = h.(*endpoint); !ok {
			return nil, nil
		}
	}
	if !fits(e.op.route, path) {
		return nil, nil
	}
	if path == "/" {
		return e.op, vals
	}
	i := 0
	for seg := range strings.SplitSeq(path[1:], "/") {
		if e.op.route[i].param != "" {
			vals = append(vals, seg)
		}
		i++
	}
	return e.op, vals
}

// byMethod is the operation of ops for method, GET's for HEAD as the mux has it, or nil.
func byMethod(ops []*Operation, method string) *Operation {
	var get *Operation
	for _, o := range ops {
		switch o.Method {
		case method:
			return o
		case http.MethodGet:
			get = o
		}
	}
	if method == http.MethodHead {
		return get
	}
	return nil
}

// fits says whether an escaped path has as many segments as a route. The mux does not check:
// it reads an escaped slash as a trailing one, so that "/%2F" would be the root's, and
// "/a/%2F" a literal "%2F"'s.
func fits(route []segment, path string) bool {
	if path == "" || path[0] != '/' {
		return false
	}
	if path == "/" {
		return len(route) == 0
	}
	return strings.Count(path, "/") == len(route)
}

// escapedSlash reports whether a path segment is an escaped slash and nothing else.
func escapedSlash(seg string) bool { return strings.EqualFold(seg, "%2F") }

// muxMaxPath bounds the paths given to the mux as they are: a miss costs it two copies of the
// path, so a longer one is matched through its probe.
const muxMaxPath = 1024

// probe is a request the mux matches as r's path is written, and at a bounded cost: r itself
// when the mux can be given r's path as it is, or nil when no route can match it (its path
// does not begin with /, has an empty segment, or more segments than any route). Otherwise
// its path is r's with each dot segment escaped (the mux unescapes a segment before
// comparing it, and cleans the dots away before that), and each segment longer than any
// literal of the routes, however escaped, or that is an escaped slash alone (the mux reads
// "%2F" as a trailing slash, and matches it to no parameter), replaced by "{" (escaped): a
// parameter takes it, as it takes the long one, and no literal is "{" (or "/"). The mux's
// miss costs copies of the path it is given, which is then short whatever r's is.
func (rt *router) probe(r *http.Request) *http.Request {
	path := r.URL.EscapedPath()
	if path == "" || path[0] != '/' {
		return nil
	}
	if path == "/" {
		return r
	}
	if strings.Count(path, "/") > rt.depth {
		return nil
	}
	rewrite := len(path) > muxMaxPath
	for seg := range strings.SplitSeq(path[1:], "/") {
		switch {
		case seg == "":
			return nil
		case seg == "." || seg == ".." || len(seg) > 3*rt.longest || escapedSlash(seg):
			rewrite = true
		}
	}
	if !rewrite {
		return r
	}
	var b strings.Builder
	for seg := range strings.SplitSeq(path[1:], "/") {
		switch {
		case seg == "." || seg == "..":
			seg = strings.ReplaceAll(seg, ".", "%2E")
		case len(seg) > 3*rt.longest || escapedSlash(seg):
			seg = "%7B"
		}
		b.WriteByte('/')
		b.WriteString(seg)
	}
	u, err := url.ParseRequestURI(b.String())
	if err != nil {
		return nil
	}
	return &http.Request{Method: r.Method, Host: r.Host, URL: u}
}

// allowed lists the methods other than r's that have a route matching r's path, with those
// routes' operations.
func (rt *router) allowed(r *http.Request) (methods []string, ops []*Operation) {
	if rt.mux == nil {
		return nil, nil
	}
	probe := rt.probe(r)
	if probe == nil {
		return nil, nil
	}
	probe = &http.Request{Host: probe.Host, URL: probe.URL} // r's method stays r's
	for _, m := range rt.methods {
		if m == r.Method || (m == http.MethodGet && r.Method == http.MethodHead) {
			continue
		}
		probe.Method = m
		h, _ := rt.mux.Handler(probe)
		if e, ok := h.(*endpoint); ok && fits(e.op.route, r.URL.EscapedPath()) {
			methods = append(methods, m)
			ops = append(ops, e.op)
		}
	}
	return methods, ops
}

// route finds the request's operation: 404 not_found naming the closest operations when
// no route matches the path, 405 method_not_allowed with Allow when one does but not for
// this method.
func route(next handler) handler {
	return func(x *exchange) error {
		a := x.api
		var buf [4]string // the exchange keeps a copy, when there are any
		op, vals := a.routes.match(x.r, buf[:0])
		if op == nil {
			allow, ops := a.routes.allowed(x.r)
			if len(allow) == 0 {
				p := Error(CodeNotFound, "no operation at "+clip(x.r.Method+" "+x.r.URL.Path))
				p.Suggestions = a.closest(x.r.Method, x.r.URL.Path, 3)
				return p
			}
			sug := make([]string, 0, len(ops))
			for _, o := range ops {
				sug = append(sug, o.Method+" "+o.Path+" ("+o.ID+")")
			}
			slices.Sort(sug)
			list := strings.Join(allow, ", ")
			p := Error(CodeMethodNotAllowed, clip(x.r.Method)+" is not allowed at "+clip(x.r.URL.Path)+"; allowed: "+list)
			p.Suggestions = sug
			p.Header = map[string]string{"Allow": list}
			return p
		}
		x.op = op
		if len(vals) > 0 {
			x.pathVals = slices.Clone(vals)
		}
		if bad := op.pathIssues(vals); len(bad) > 0 {
			return x.invalid(bad, nil)
		}
		return next(x)
	}
}

// pathIssues refuses the path parameters' values (as the URL spells them, in the route's
// order) that a handler could mistake for more than one segment: a value that does not decode,
// or that decoded is a dot segment (. or ..), holds a slash or a backslash (sent as %2F or
// %5C), a control character (NUL included), or is not UTF-8. Each is an issue of code
// invalid_path_segment at the parameter, which goes out as 400 invalid_parameter before any
// other stage sees the value.
func (o *Operation) pathIssues(vals []string) []remedy.Issue {
	var bad []remedy.Issue
	i := 0
	for _, s := range o.route {
		if s.param == "" {
			continue
		}
		if i >= len(vals) {
			break
		}
		raw := vals[i]
		i++
		why := ""
		val, err := url.PathUnescape(raw)
		switch {
		case err != nil:
			why = "is not a valid URL path segment"
		case val == "." || val == "..":
			why = "must not be . or .."
		case strings.ContainsAny(val, `/\`):
			why = "must not hold a slash or a backslash"
		case strings.ContainsFunc(val, unicode.IsControl):
			why = "must not hold a control character"
		case !utf8.ValidString(val):
			why = "must be UTF-8"
		default:
			continue
		}
		bad = append(bad, remedy.Issue{Path: "/" + pointerEscape(s.param), Code: "invalid_path_segment",
			Message: s.param + " is a path parameter: it " + why})
	}
	return bad
}

// suggestMaxPath bounds the bytes of a request's path that closest compares: the routes
// are far shorter, and a longer path is near none of them anyway.
const suggestMaxPath = 256

// closest names up to k operations whose method and path are nearest to the request's. Only
// the path's first suggestMaxPath bytes are read, so that a huge path costs no more than a
// long one.
func (a *API) closest(method, path string, k int) []string {
	type cand struct {
		d    int
		text string
	}
	req := strings.Trim(path, "/")
	req = req[:min(len(req), suggestMaxPath)]
	got := strings.Split(req, "/")
	var cs []cand
	for _, o := range a.ops {
		d := closest.Distance(req, strings.Trim(shape(o.route, got), "/"))
		if o.Method != method {
			d++
		}
		// Only operations within half the path's length are worth suggesting.
		if d <= max(3, len(req)/2) {
			cs = append(cs, cand{d, o.Method + " " + o.Path + " (" + o.ID + ")"})
		}
	}
	slices.SortFunc(cs, func(x, y cand) int {
		if x.d != y.d {
			return x.d - y.d
		}
		return strings.Compare(x.text, y.text)
	})
	var out []string
	for i := 0; i < len(cs) && i < k; i++ {
		out = append(out, cs[i].text)
	}
	return out
}

// shape writes a route as the request would spell it: each parameter takes the request's
// segment at the same place (got holds the request's segments), so that /v1/order/ord_1 is
// near /v1/orders/{id}.
func shape(route []segment, got []string) string {
	var b strings.Builder
	for i, s := range route {
		b.WriteByte('/')
		switch {
		case s.lit != "":
			b.WriteString(s.lit)
		case i < len(got):
			b.WriteString(got[i])
		default:
			b.WriteString("{" + s.param + "}")
		}
	}
	return b.String()
}
