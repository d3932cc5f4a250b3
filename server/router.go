package server

import (
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/remedy-go/remedy"
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

// router matches request paths to operations: a tree of segments where a literal beats a
// parameter at the same place.
type router struct {
	root node
}

type node struct {
	lits  map[string]*node
	param *node
	ops   map[string]*Operation // by method
}

func (rt *router) add(op *Operation) error {
	n := &rt.root
	for _, s := range op.route {
		if s.param != "" {
			if n.param == nil {
				n.param = &node{}
			}
			n = n.param
			continue
		}
		if n.lits == nil {
			n.lits = map[string]*node{}
		}
		next := n.lits[s.lit]
		if next == nil {
			next = &node{}
			n.lits[s.lit] = next
		}
		n = next
	}
	if n.ops == nil {
		n.ops = map[string]*Operation{}
	}
	if o := n.ops[op.Method]; o != nil {
		return fmt.Errorf("%s %s is already routed to %s (%s)", op.Method, op.Path, o.ID, o.Path)
	}
	n.ops[op.Method] = op
	return nil
}

// match finds the node of a path, and the path parameters' values in order.
func (rt *router) match(path string, vals []string) (*node, []string) {
	if path == "" || path[0] != '/' {
		return nil, nil
	}
	if path == "/" {
		return &rt.root, vals
	}
	return rt.root.match(path[1:], vals)
}

func (n *node) match(rest string, vals []string) (*node, []string) {
	seg, tail, more := strings.Cut(rest, "/")
	if seg == "" {
		return nil, nil
	}
	next := func(c *node) (*node, []string) {
		if !more {
			if c.ops == nil {
				return nil, nil
			}
			return c, vals
		}
		return c.match(tail, vals)
	}
	if c := n.lits[seg]; c != nil {
		if m, v := next(c); m != nil {
			return m, v
		}
	}
	if n.param != nil {
		vals = append(vals, seg)
		if m, v := next(n.param); m != nil {
			return m, v
		}
		vals = vals[:len(vals)-1]
	}
	return nil, nil
}

// route finds the request's operation: 404 not_found naming the closest operations when
// no route matches the path, 405 method_not_allowed with Allow when one does but not for
// this method.
func route(next handler) handler {
	return func(x *exchange) error {
		a := x.api
		var buf [4]string // the exchange keeps a copy, when there are any
		n, vals := a.routes.match(x.r.URL.EscapedPath(), buf[:0])
		if n == nil {
			p := Error(CodeNotFound, "no operation at "+clip(x.r.Method+" "+x.r.URL.Path))
			p.Suggestions = a.closest(x.r.Method, x.r.URL.Path, 3)
			return p
		}
		op := n.ops[x.r.Method]
		if op == nil && x.r.Method == http.MethodHead {
			op = n.ops[http.MethodGet]
		}
		if op == nil {
			allow := make([]string, 0, len(n.ops))
			var sug []string
			for m, o := range n.ops {
				allow = append(allow, m)
				sug = append(sug, o.Method+" "+o.Path+" ("+o.ID+")")
			}
			slices.Sort(allow)
			slices.Sort(sug)
			p := Error(CodeMethodNotAllowed, clip(x.r.Method)+" is not allowed at "+clip(x.r.URL.Path)+"; allowed: "+strings.Join(allow, ", "))
			p.Suggestions = sug
			p.Header = map[string]string{"Allow": strings.Join(allow, ", ")}
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
		d := distance(req, strings.Trim(shape(o.route, got), "/"))
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

// distance is the Levenshtein distance between two strings, by bytes.
func distance(a, b string) int {
	if len(a) > 256 || len(b) > 256 {
		// Long paths are not worth the quadratic cost; compare their starts.
		a, b = a[:min(len(a), 256)], b[:min(len(b), 256)]
	}
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}
