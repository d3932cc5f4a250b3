package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/redis/go-redis/v9"

	"github.com/remedy-go/remedy/examples/billing"
	"github.com/remedy-go/remedy/server"
	"github.com/remedy-go/remedy/server/redisstore"
)

const (
	// redisTimeout bounds the check that Redis answers, at start.
	redisTimeout = 5 * time.Second
	// shutdownGrace is how long requests in flight may finish once serve is told to stop
	// (MCP sessions included: the API's Shutdown ends their event streams once their calls
	// are answered); what is still open then is closed.
	shutdownGrace = 5 * time.Second
)

// serveLimits bound each connection, so that a slow or idle client cannot hold one: reading a
// request (its body included), writing a response (MCP event streams, open for as long as
// their session, excepted), and waiting between requests; and the size of a request's header.
var serveLimits = struct {
	read, write, idle time.Duration
	header            int
}{read: 30 * time.Second, write: time.Minute, idle: 2 * time.Minute, header: 64 << 10}

var serveCommand = &command{
	name:     "serve",
	summary:  "serve the example billing API: REST, /openapi.json and MCP at /mcp",
	synopsis: "remedy serve [--addr HOST:PORT] [--redis ADDR] [--rate N] [--allow-host HOST]... [--stateless] | --stdio",
	about: `Serve runs the example billing API on the reference server until it is
interrupted (SIGINT, SIGTERM), then shuts down gracefully. The same operations are
served over REST, described at /openapi.json, and as MCP tools at /mcp. Once it
listens it prints one line with the API's URL, the OpenAPI URL and the MCP URL
(with --addr 127.0.0.1:0 the port is chosen and the line gives the real one).

The API is in memory, with two customers, cus_ada and cus_grace (the document's
example). Beside the billing operations it serves archive_customer, which needs
confirmation and can run again, and its revenue report is rebuilt at start and
after every change: the first revenue_report then answers 503 with the wait to
retry after. So remedy probe --writes sees every rule at work, run after run,
with no --example.

With --redis, confirmation tokens and idempotency records are kept in that
Redis, so that several instances serve one API (MCP sessions are then stateless,
for the same reason). --stateless makes them stateless without Redis: every MCP
request is a session of its own, and the server sends the client no requests.

With --stdio, serve speaks MCP on its standard input and output instead of
listening (the way a desktop agent or an MCP client launches a local server): the
same tools, one session, until the input ends or serve is interrupted. Nothing but
protocol messages goes to standard output; logs go to standard error.

A request must name the host it is for in its Host header: one that arrived on a
loopback address must name a loopback host (localhost, 127.0.0.1, [::1]), on REST
and MCP alike, so that a web page cannot reach the API through DNS rebinding.
--allow-host adds names (and then every request, on any address, must name one of
them or a loopback host); --allow-host '*' turns the check off. A refused request
gets 403 forbidden.

Each connection is bounded: 10 s to send a request's header and 30 s the whole
request, a minute to receive the answer (MCP event streams excepted), 2 minutes
idle between requests, and 64 KiB of header.`,
	examples: []string{
		"remedy serve --addr 127.0.0.1:8080",
		"remedy serve --addr :8080 --redis 127.0.0.1:6379 --rate 20",
		"remedy serve --addr :8080 --allow-host api.example.com",
		"remedy serve --stdio",
	},
	exits: `0 stopped by a signal, after a graceful shutdown
2 usage error
3 it cannot listen on --addr, or Redis is unreachable`,
	run: serve,
}

func serve(ctx context.Context, in *invocation) error {
	addr := in.fs.String("addr", "127.0.0.1:8080", "listen on `HOST:PORT` (port 0: any free port)")
	redisAddr := in.fs.String("redis", "", "keep confirmations and idempotency records in the Redis at `ADDR` (host:port or redis:// URL)")
	rate := in.fs.Int("rate", 0, "allow each caller `N` requests per second (bursts of N); 0: no limit")
	var hosts []string
	in.fs.Func("allow-host", "also answer requests naming `HOST` (repeatable; host or host:port, * for any)", func(h string) error {
		if h = strings.TrimSpace(h); h == "" || strings.ContainsAny(h, "/ ") {
			return fmt.Errorf("not a host name: %q", h)
		}
		hosts = append(hosts, h)
		return nil
	})
	stateless := in.fs.Bool("stateless", false, "serve MCP without sessions: every request stands alone")
	stdio := in.fs.Bool("stdio", false, "speak MCP on standard input and output instead of listening on --addr")
	if _, err := in.parse(0, 0); err != nil {
		return err
	}
	if *stdio && (*stateless || *redisAddr != "" || len(hosts) > 0 || in.set("addr")) {
		return usagef("serve: --stdio serves no HTTP: it takes none of --addr, --allow-host, --redis, --stateless")
	}
	if *rate < 0 {
		return usagef("serve: --rate must be 0 or more, got %d", *rate)
	}

	logger := slog.New(slog.NewTextHandler(in.stderr, nil))
	opts := []server.Option{server.WithLogger(logger), server.WithHostCheck(allowedHosts(hosts)...)}
	if *rate > 0 {
		opts = append(opts, server.WithRateLimit(server.RateLimitOptions{PerSecond: float64(*rate), Burst: *rate}))
	}
	if *redisAddr != "" {
		store, closeRedis, err := redisStore(ctx, *redisAddr)
		if err != nil {
			return err
		}
		defer closeRedis()
		opts = append(opts,
			server.WithConfirmation(server.ConfirmationOptions{Store: store}),
			server.WithIdempotency(server.IdempotencyOptions{Store: store}),
			server.WithMCP(server.MCPOptions{Stateless: true}))
	} else if *stateless {
		opts = append(opts, server.WithMCP(server.MCPOptions{Stateless: true}))
	}
	api, _, err := billing.NewDemo(opts...)
	if err != nil {
		return cannotRunf("serve: %v", err)
	}
	if *stdio {
		return serveStdio(ctx, api, in)
	}

	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		return cannotRunf("serve: cannot listen on %s: %v", *addr, err)
	}
	base := "http://" + displayAddr(*addr, ln.Addr())
	fmt.Fprintf(in.stdout, "billing API at %s  OpenAPI %s%s  MCP %s%s\n",
		base, base, server.DefaultOpenAPIPath, base, server.DefaultMCPPath)

	ctx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
	defer stop()
	srv := newHTTPServer(api, log.New(in.stderr, "remedy: serve: ", 0))
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()
	select {
	case err := <-served:
		return cannotRunf("serve: %v", err)
	case <-ctx.Done():
	}
	stop() // a second interrupt ends the process at once

	sctx, cancel := context.WithTimeout(context.Background(), shutdownGrace)
	defer cancel()
	// The API first: it ends the MCP sessions and their event streams, which would otherwise
	// hold the server's shutdown for the whole grace period.
	apiErr := api.Shutdown(sctx)
	if err := srv.Shutdown(sctx); err != nil || apiErr != nil {
		srv.Close()
	}
	if err := <-served; !errors.Is(err, http.ErrServerClosed) {
		return cannotRunf("serve: %v", err)
	}
	return nil
}

// serveStdio speaks MCP on the invocation's standard input and output until the input ends or
// ctx is done (an interrupt).
func serveStdio(ctx context.Context, api *server.API, in *invocation) error {
	ctx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
	defer stop()
	t := &mcp.IOTransport{Reader: io.NopCloser(in.stdin), Writer: nopWriteCloser{in.stdout}}
	err := api.MCPServer().Run(ctx, t)
	if err == nil || errors.Is(err, io.EOF) || ctx.Err() != nil {
		return nil
	}
	return cannotRunf("serve: %v", err)
}

type nopWriteCloser struct{ io.Writer }

func (nopWriteCloser) Close() error { return nil }

// newHTTPServer serves h within serveLimits.
func newHTTPServer(h http.Handler, errorLog *log.Logger) *http.Server {
	return &http.Server{
		Handler:           h,
		ReadHeaderTimeout: 10 * time.Second,
		ReadTimeout:       serveLimits.read,
		WriteTimeout:      serveLimits.write,
		IdleTimeout:       serveLimits.idle,
		MaxHeaderBytes:    serveLimits.header,
		ErrorLog:          errorLog,
	}
}

// allowedHosts are the Host names serve answers to, REST and MCP alike, against DNS
// rebinding: with none given, HostAllowed's loopback rule; with some, those and the loopback
// names, so that the local URL serve prints keeps working.
func allowedHosts(given []string) []string {
	if len(given) == 0 {
		return nil
	}
	return append([]string{"localhost", "127.0.0.1", "::1"}, given...)
}

// redisStore connects to the Redis at addr, checks that it answers and returns a store on it.
func redisStore(ctx context.Context, addr string) (*redisstore.Store, func(), error) {
	var opts *redis.Options
	if strings.Contains(addr, "://") {
		o, err := redis.ParseURL(addr)
		if err != nil {
			return nil, nil, usagef("serve: --redis %q: %v", addr, err)
		}
		opts = o
	} else {
		opts = &redis.Options{Addr: addr}
	}
	quietRedis.Do(func() { redis.SetLogger(discardRedisLog{}) })
	rc := redis.NewClient(opts)
	ctx, cancel := context.WithTimeout(ctx, redisTimeout)
	defer cancel()
	if err := rc.Ping(ctx).Err(); err != nil {
		rc.Close()
		return nil, nil, cannotRunf("serve: Redis at %s is unreachable: %v", addr, err)
	}
	// The example API authenticates nobody: every caller is one principal, whose quota is
	// then the whole store's, as the in-memory default gives it.
	store := redisstore.New(rc, redisstore.Options{
		ScopeChallenges: server.DefaultMaxChallenges,
		ScopeRecords:    server.DefaultMaxRecords,
	})
	if err := store.Load(ctx); err != nil {
		rc.Close()
		return nil, nil, cannotRunf("serve: Redis at %s refused the store's scripts: %v", addr, err)
	}
	return store, func() { rc.Close() }, nil
}

// go-redis logs its pool's dial failures on stderr, several lines for one unreachable server;
// serve says what failed in one line instead, and the API answers 503 when Redis fails later.
var quietRedis sync.Once

type discardRedisLog struct{}

func (discardRedisLog) Printf(context.Context, string, ...any) {}

// displayAddr is the address to print for a listener asked to listen on requested: the real
// port, and a loopback host when it listens on every interface.
func displayAddr(requested string, a net.Addr) string {
	tcp, ok := a.(*net.TCPAddr)
	if !ok {
		return a.String()
	}
	host := tcp.IP.String()
	if tcp.IP.IsUnspecified() {
		host = "127.0.0.1"
		if h, _, err := net.SplitHostPort(requested); err == nil && strings.Contains(h, ":") {
			host = "::1"
		}
	}
	return net.JoinHostPort(host, strconv.Itoa(tcp.Port))
}
