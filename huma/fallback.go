package remedyhuma

import (
	"net/http"
	"slices"
	"strings"
	"sync"

	"github.com/danielgtaylor/huma/v2"

	"github.com/remedy-go/remedy/server"
)

// byAPI finds the contract Install put on an API, by the API it returned.
var byAPI sync.Map // huma.API → *installed

// Fallback returns the handler for the requests no operation of api (the API Install
// returned) matches, as server's API answers them: 405 method_not_allowed with Allow when the
// path is an operation's, else 404 not_found naming the closest operations — where a router
// would answer a page of text. Give it to the router as its fallback: with net/http's
// ServeMux (humago), mux.Handle("/", remedyhuma.Fallback(api)); with chi, r.NotFound and
// r.MethodNotAllowed. An api Install did not return is answered with the contract last
// installed.
func Fallback(api huma.API) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		in := current.Load()
		if v, ok := byAPI.Load(api); ok {
			in = v.(*installed)
		}
		if in == nil {
			http.NotFound(w, r)
			return
		}
		var allow, near []string
		best := 0
		for tmpl, item := range api.OpenAPI().Paths {
			shared, exact := matchPath(tmpl, r.URL.Path)
			if exact {
				allow = append(allow, methods(item)...)
				continue
			}
			switch {
			case shared > best:
				best, near = shared, nil
				fallthrough
			case shared == best && shared > 0:
				for _, m := range methods(item) {
					near = append(near, m+" "+tmpl)
				}
			}
		}
		path := r.URL.Path
		if len(path) > 200 {
			path = path[:200] + "…"
		}
		var p *server.Problem
		if len(allow) > 0 {
			slices.Sort(allow)
			list := strings.Join(allow, ", ")
			p = server.Error(server.CodeMethodNotAllowed, r.Method+" is not allowed at "+path+"; allowed: "+list)
			p.Header = map[string]string{"Allow": list}
		} else {
			p = server.Error(server.CodeNotFound, "no operation at "+r.Method+" "+path)
			slices.Sort(near)
			if len(near) > 3 {
				near = near[:3]
			}
			p.Suggestions = near
		}
		f := in.guard.Failure(r, p)
		for k, v := range f.Header {
			w.Header()[k] = v
		}
		w.WriteHeader(f.Status)
		w.Write(f.Body)
	})
}

// matchPath compares a path with an OpenAPI path template: how many leading segments match,
// and whether all do.
func matchPath(tmpl, path string) (shared int, exact bool) {
	ts := strings.Split(strings.Trim(tmpl, "/"), "/")
	ps := strings.Split(strings.Trim(path, "/"), "/")
	for shared < len(ts) && shared < len(ps) {
		t := ts[shared]
		if !(strings.HasPrefix(t, "{") && strings.HasSuffix(t, "}")) && t != ps[shared] {
			break
		}
		shared++
	}
	return shared, shared == len(ts) && shared == len(ps)
}

// methods are the methods of a path item's operations.
func methods(item *huma.PathItem) []string {
	var out []string
	for m, op := range map[string]*huma.Operation{http.MethodGet: item.Get, http.MethodPut: item.Put, http.MethodPost: item.Post,
		http.MethodDelete: item.Delete, http.MethodOptions: item.Options, http.MethodHead: item.Head,
		http.MethodPatch: item.Patch, http.MethodTrace: item.Trace} {
		if op != nil {
			out = append(out, m)
		}
	}
	return out
}
