package redistest

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// NodeTimeout is the cluster-node-timeout of a Cluster: how long a node may be unreachable
// before the others count it as failing and promote its replica. Short, so that a failover
// happens within a test, but long enough that a busy machine does not fail a node by mistake.
const NodeTimeout = 2 * time.Second

// clusterTimeout bounds each wait for the cluster: its creation, and its return to a healthy
// state after a change. Generous, so that a busy machine does not fail a test: the waits poll
// and end as soon as the cluster is ready.
const clusterTimeout = 90 * time.Second

// Cluster is a Redis Cluster of redis-server processes on 127.0.0.1, started by StartCluster.
// Its methods must be called from the test's goroutine or with the test still running.
type Cluster struct {
	tb      testing.TB
	nodes   []*process // in the order given to redis-cli
	mu      sync.Mutex
	clients map[string]*redis.Client
}

// StartCluster starts a Redis Cluster of masters masters, each with replicasPerMaster
// replicas, and waits until it is healthy (see WaitHealthy). Each node is a redis-server on a
// free port of 127.0.0.1, with cluster mode on, no persistence, its cluster configuration in a
// directory of tb.TempDir(), and cluster-node-timeout NodeTimeout; a replica always stands
// for election however stale its data (cluster-replica-validity-factor 0), so that a failover
// test does not depend on how long the machine took. `redis-cli --cluster create` assigns the
// 16384 slots evenly. Every node is killed in tb.Cleanup.
//
// Like Start, it skips the test when redis-server or redis-cli is not on PATH, and fails it
// instead with REMEDY_REQUIRE_REDIS=1.
func StartCluster(tb testing.TB, masters, replicasPerMaster int) *Cluster {
	tb.Helper()
	if masters < 3 {
		tb.Fatalf("redistest: a Redis Cluster needs at least 3 masters, not %d", masters)
	}
	server := lookPath(tb, "redis-server", "redis-server")
	cli := lookPath(tb, "redis-cli", "redis-tools")
	c := &Cluster{tb: tb, clients: map[string]*redis.Client{}}
	tb.Cleanup(c.closeClients) // before the nodes stop: cleanups run last-in, first-out
	dir := tb.TempDir()
	for i := range masters * (1 + replicasPerMaster) {
		c.nodes = append(c.nodes, startNode(tb, server, filepath.Join(dir, "node"+strconv.Itoa(i))))
	}

	ctx, cancel := context.WithTimeout(context.Background(), clusterTimeout)
	defer cancel()
	args := append([]string{"--cluster", "create"}, c.Addrs()...)
	args = append(args, "--cluster-replicas", strconv.Itoa(replicasPerMaster), "--cluster-yes")
	out, err := exec.CommandContext(ctx, cli, args...).CombinedOutput()
	if err != nil {
		tb.Fatalf("redistest: redis-cli %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	c.WaitHealthy()
	return c
}

// startNode starts one cluster node in dir, trying other ports when the ones it chose were
// taken meanwhile.
func startNode(tb testing.TB, bin, dir string) *process {
	tb.Helper()
	var failures []string
	for attempt := 1; attempt <= attempts; attempt++ {
		// The cluster bus has a port of its own, given explicitly: the default, the client
		// port + 10000, may be taken or beyond 65535.
		bus, err := freePort()
		if err != nil {
			tb.Fatalf("redistest: %v", err)
		}
		p, err := start(tb, bin, filepath.Join(dir, strconv.Itoa(attempt)),
			"--cluster-enabled", "yes",
			"--cluster-config-file", "nodes.conf", // in --dir
			"--cluster-port", strconv.Itoa(bus),
			"--cluster-node-timeout", strconv.FormatInt(NodeTimeout.Milliseconds(), 10),
			"--cluster-replica-validity-factor", "0",
			// A replica's first full sync starts at once, not after the default 5 s.
			"--repl-diskless-sync-delay", "0",
		)
		if err == nil {
			return p
		}
		failures = append(failures, fmt.Sprintf("attempt %d: %v", attempt, err))
		if !errors.Is(err, errExited) {
			break
		}
	}
	tb.Fatalf("redistest: could not start a cluster node:\n%s", strings.Join(failures, "\n"))
	return nil
}

// Addrs returns the address of every node, masters and replicas, as the seeds of
// redis.NewClusterClient.
func (c *Cluster) Addrs() []string {
	addrs := make([]string, len(c.nodes))
	for i, n := range c.nodes {
		addrs[i] = n.addr
	}
	return addrs
}

// Node returns a client of the one node at addr, for the commands a test sends to a node of
// its choice (CLUSTER SETSLOT, MIGRATE, INFO); it is closed when the test ends.
func (c *Cluster) Node(addr string) *redis.Client {
	c.mu.Lock()
	defer c.mu.Unlock()
	client, ok := c.clients[addr]
	if !ok {
		// One attempt per command: a test that polls a node it killed wants the error now.
		client = redis.NewClient(&redis.Options{Addr: addr, MaxRetries: -1, DialTimeout: 2 * time.Second})
		c.clients[addr] = client
	}
	return client
}

func (c *Cluster) closeClients() {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, client := range c.clients {
		client.Close()
	}
}

// Kill kills the node at addr with SIGKILL, as a crash would, and waits until it has exited.
func (c *Cluster) Kill(addr string) {
	c.tb.Helper()
	c.process(addr).stop()
}

// Pause stops the node at addr with SIGSTOP: it answers nothing, to clients or to the other
// nodes, until Resume, while the kernel keeps its connections open.
func (c *Cluster) Pause(addr string) {
	c.tb.Helper()
	if err := pause(c.process(addr).cmd.Process); err != nil {
		c.tb.Fatalf("redistest: pause %s: %v", addr, err)
	}
}

// Resume resumes a node stopped by Pause.
func (c *Cluster) Resume(addr string) {
	c.tb.Helper()
	if err := resume(c.process(addr).cmd.Process); err != nil {
		c.tb.Fatalf("redistest: resume %s: %v", addr, err)
	}
}

func (c *Cluster) process(addr string) *process {
	for _, n := range c.nodes {
		if n.addr == addr {
			return n
		}
	}
	c.tb.Fatalf("redistest: no node of the cluster at %s", addr)
	return nil
}

// alive reports whether the node's process still runs.
func (n *process) alive() bool {
	select {
	case <-n.exited:
		return false
	default:
		return true
	}
}

// NodeInfo is one line of CLUSTER NODES.
type NodeInfo struct {
	ID     string
	Addr   string // host:port, without the bus port
	Flags  []string
	Master string // the ID of its master, for a replica
	Slots  []int
}

// Is reports whether the node has the flag ("master", "slave", "fail", "myself", ...).
func (n NodeInfo) Is(flag string) bool { return slices.Contains(n.Flags, flag) }

// Nodes returns the cluster as the node at addr sees it (CLUSTER NODES).
func (c *Cluster) Nodes(ctx context.Context, addr string) ([]NodeInfo, error) {
	text, err := c.Node(addr).ClusterNodes(ctx).Result()
	if err != nil {
		return nil, err
	}
	return parseNodes(text)
}

// parseNodes parses the reply of CLUSTER NODES: per line, the ID, ip:port@bus[,hostname],
// flags, master ID or "-", ping sent, pong received, config epoch, link state, then slots and
// ranges of slots ("[slot->-id]" and "[slot-<-id]" mark one in migration, not counted here).
func parseNodes(text string) ([]NodeInfo, error) {
	var nodes []NodeInfo
	for line := range strings.SplitSeq(strings.TrimSpace(text), "\n") {
		f := strings.Fields(line)
		if len(f) < 8 {
			return nil, fmt.Errorf("CLUSTER NODES line %q", line)
		}
		addr, _, _ := strings.Cut(f[1], "@")
		n := NodeInfo{ID: f[0], Addr: addr, Flags: strings.Split(f[2], ",")}
		if f[3] != "-" {
			n.Master = f[3]
		}
		for _, r := range f[8:] {
			if strings.HasPrefix(r, "[") {
				continue
			}
			lo, hi, isRange := strings.Cut(r, "-")
			first, err := strconv.Atoi(lo)
			if err != nil {
				return nil, fmt.Errorf("CLUSTER NODES slot %q", r)
			}
			last := first
			if isRange {
				if last, err = strconv.Atoi(hi); err != nil {
					return nil, fmt.Errorf("CLUSTER NODES slot %q", r)
				}
			}
			for s := first; s <= last; s++ {
				n.Slots = append(n.Slots, s)
			}
		}
		nodes = append(nodes, n)
	}
	return nodes, nil
}

// MasterOf returns the address of the master that serves slot, as the live nodes agree
// (the cluster must be healthy).
func (c *Cluster) MasterOf(slot int) string {
	c.tb.Helper()
	for _, n := range c.view() {
		if n.Is("master") && !n.Is("fail") && slices.Contains(n.Slots, slot) {
			return n.Addr
		}
	}
	c.tb.Fatalf("redistest: no master serves slot %d", slot)
	return ""
}

// Masters returns the addresses of the live masters that serve slots.
func (c *Cluster) Masters() []string {
	c.tb.Helper()
	var addrs []string
	for _, n := range c.view() {
		if n.Is("master") && !n.Is("fail") && len(n.Slots) > 0 && c.process(n.Addr).alive() {
			addrs = append(addrs, n.Addr)
		}
	}
	return addrs
}

// ReplicasOf returns the addresses of the live replicas of the master at addr.
func (c *Cluster) ReplicasOf(addr string) []string {
	c.tb.Helper()
	nodes := c.view()
	var id string
	for _, n := range nodes {
		if n.Addr == addr {
			id = n.ID
		}
	}
	var addrs []string
	for _, n := range nodes {
		if id != "" && n.Master == id && c.process(n.Addr).alive() {
			addrs = append(addrs, n.Addr)
		}
	}
	return addrs
}

// ID returns the node ID of the node at addr.
func (c *Cluster) ID(addr string) string {
	c.tb.Helper()
	for _, n := range c.view() {
		if n.Addr == addr {
			return n.ID
		}
	}
	c.tb.Fatalf("redistest: no node at %s", addr)
	return ""
}

// view is the cluster as the first live node sees it.
func (c *Cluster) view() []NodeInfo {
	c.tb.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), clusterTimeout)
	defer cancel()
	for _, n := range c.nodes {
		if !n.alive() {
			continue
		}
		nodes, err := c.Nodes(ctx, n.addr)
		if err != nil {
			c.tb.Fatalf("redistest: CLUSTER NODES on %s: %v", n.addr, err)
		}
		return nodes
	}
	c.tb.Fatalf("redistest: no node of the cluster is alive")
	return nil
}

// WaitHealthy waits, for at most 90 s, until every live node of the cluster says
// cluster_state:ok, they all agree on the nodes, their roles and which master serves each of
// the 16384 slots, each such master is alive, and every live replica's link to its master is
// up. It polls: it returns as
// soon as the cluster is healthy, however fast or slow the machine.
func (c *Cluster) WaitHealthy() {
	c.tb.Helper()
	deadline := time.Now().Add(clusterTimeout)
	for {
		err := c.healthy()
		if err == nil {
			return
		}
		if time.Now().After(deadline) {
			var logs []string
			for _, n := range c.nodes {
				logs = append(logs, fmt.Sprintf("-- %s (%s):\n%s", n.addr, n.logPath, tail(n.logPath)))
			}
			c.tb.Fatalf("redistest: the cluster is not healthy after %v: %v\n%s", clusterTimeout, err, strings.Join(logs, "\n"))
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// healthy returns why the cluster is not healthy, or nil.
func (c *Cluster) healthy() error {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	var owners map[int]string // slot → master address, as the first live node sees it
	var roles string          // each node's role and master, as the first live node sees it
	for _, n := range c.nodes {
		if !n.alive() {
			continue
		}
		node := c.Node(n.addr)
		info, err := node.ClusterInfo(ctx).Result()
		if err != nil {
			return fmt.Errorf("CLUSTER INFO on %s: %w", n.addr, err)
		}
		if !strings.Contains(info, "cluster_state:ok") {
			return fmt.Errorf("%s: not cluster_state:ok", n.addr)
		}
		nodes, err := c.Nodes(ctx, n.addr)
		if err != nil {
			return fmt.Errorf("CLUSTER NODES on %s: %w", n.addr, err)
		}
		seen := map[int]string{}
		var seenRoles []string
		for _, m := range nodes {
			if m.Is("handshake") || m.Is("noaddr") {
				return fmt.Errorf("%s does not know %s yet", n.addr, m.Addr)
			}
			role := "master"
			if m.Is("slave") {
				role = "replica of " + m.Master
			}
			seenRoles = append(seenRoles, m.ID+" "+m.Addr+" "+role)
			if m.Is("myself") && m.Is("slave") {
				repl, err := node.Info(ctx, "replication").Result()
				if err != nil {
					return fmt.Errorf("INFO replication on %s: %w", n.addr, err)
				}
				if !strings.Contains(repl, "master_link_status:up") {
					return fmt.Errorf("replica %s: its link to its master is not up", n.addr)
				}
			}
			if !m.Is("master") || m.Is("fail") || m.Is("fail?") {
				continue
			}
			if len(m.Slots) > 0 && !c.process(m.Addr).alive() {
				return fmt.Errorf("%s sees the dead node %s as a master serving slots", n.addr, m.Addr)
			}
			for _, s := range m.Slots {
				seen[s] = m.Addr
			}
		}
		if len(seen) != 16384 {
			return fmt.Errorf("%s sees %d of the 16384 slots served", n.addr, len(seen))
		}
		slices.Sort(seenRoles)
		if owners == nil {
			owners, roles = seen, strings.Join(seenRoles, "\n")
		} else if !maps.Equal(owners, seen) {
			return fmt.Errorf("%s does not agree with the others on who serves which slot", n.addr)
		} else if strings.Join(seenRoles, "\n") != roles {
			// A replica's role reaches the other nodes by gossip, a moment after it has its own.
			return fmt.Errorf("%s does not agree with the others on the nodes and their roles", n.addr)
		}
	}
	if owners == nil {
		return errors.New("no node of the cluster is alive")
	}
	return nil
}
