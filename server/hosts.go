package server

import (
	"net"
	"net/http"
	"net/netip"
	"strings"
)

// HostAllowed reports whether a request's Host header names a host the server answers to,
// the defence against DNS rebinding (a page on another site that makes a browser send
// requests to a server on the user's machine or network under the attacker's name).
//
// With no hosts, it applies the rule the MCP SDK applies by default: a request that arrived
// on a loopback address (127.0.0.0/8, ::1) must name a loopback host (localhost, 127.0.0.1,
// [::1], with any port), and a request that arrived on any other address is allowed. With
// hosts, the Host must be one of them, compared without regard to case: an entry without a
// port matches that name with any port, an entry with a port ("api.example.com:8443") only
// that port, and "*" matches every host. A request without a Host is refused.
//
// The MCP endpoint applies it always, with MCPOptions.AllowedHosts; WithHostCheck applies it
// to the other routes.
func HostAllowed(r *http.Request, hosts []string) bool {
	if r.Host == "" {
		return false
	}
	if len(hosts) == 0 {
		local, ok := r.Context().Value(http.LocalAddrContextKey).(net.Addr)
		return !ok || local == nil || !isLoopback(local.String()) || isLoopback(r.Host)
	}
	name, port := splitHost(r.Host)
	for _, h := range hosts {
		if h == "*" {
			return true
		}
		hn, hp := splitHost(h)
		if strings.EqualFold(hn, name) && (hp == "" || hp == port) {
			return true
		}
	}
	return false
}

// splitHost splits host[:port] (an IPv6 address in brackets) into the name, without
// brackets, and the port.
func splitHost(hostport string) (name, port string) {
	if h, p, err := net.SplitHostPort(hostport); err == nil {
		return h, p
	}
	return strings.TrimSuffix(strings.TrimPrefix(hostport, "["), "]"), ""
}

// isLoopback reports whether host[:port] names this machine: localhost or a loopback
// address.
func isLoopback(hostport string) bool {
	name, _ := splitHost(hostport)
	if strings.EqualFold(name, "localhost") {
		return true
	}
	ip, err := netip.ParseAddr(name)
	return err == nil && ip.IsLoopback()
}
