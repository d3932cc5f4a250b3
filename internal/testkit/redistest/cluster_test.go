package redistest

import (
	"context"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

func TestStartClusterServesEverySlot(t *testing.T) {
	var addrs []string
	t.Run("start", func(t *testing.T) {
		c := StartCluster(t, 3, 1)
		addrs = c.Addrs()
		if len(addrs) != 6 {
			t.Fatalf("%d nodes, want 6", len(addrs))
		}
		masters := c.Masters()
		if len(masters) != 3 {
			t.Fatalf("masters %v, want 3", masters)
		}
		for _, m := range masters {
			if r := c.ReplicasOf(m); len(r) != 1 {
				t.Errorf("master %s has replicas %v, want 1", m, r)
			}
		}
		ctx := context.Background()
		for _, addr := range addrs {
			for param, want := range map[string]string{"save": "", "appendonly": "no", "cluster-enabled": "yes"} {
				got, err := c.Node(addr).ConfigGet(ctx, param).Result()
				if err != nil || got[param] != want {
					t.Errorf("%s: CONFIG GET %s = %q, %v; want %q", addr, param, got[param], err, want)
				}
			}
		}
		// A cluster client reaches every slot: keys on each master.
		client := redis.NewClusterClient(&redis.ClusterOptions{Addrs: addrs})
		defer client.Close()
		served := map[string]bool{}
		for _, key := range []string{"a", "b", "c", "d", "e", "f", "g", "h"} {
			if err := client.Set(ctx, key, "v", time.Minute).Err(); err != nil {
				t.Fatalf("SET %s: %v", key, err)
			}
			served[c.MasterOf(int(client.ClusterKeySlot(ctx, key).Val()))] = true
		}
		if len(served) != 3 {
			t.Errorf("8 keys on masters %v, want all 3", served)
		}
		// Whatever MasterOf answers is the node that holds the key.
		slot := int(client.ClusterKeySlot(ctx, "a").Val())
		if n, err := c.Node(c.MasterOf(slot)).Exists(ctx, "a").Result(); err != nil || n != 1 {
			t.Errorf("the master of slot %d does not hold the key a: %d, %v", slot, n, err)
		}
	})
	for _, addr := range addrs {
		if conn, err := net.DialTimeout("tcp", addr, time.Second); err == nil {
			conn.Close()
			t.Errorf("a cluster node still listens on %s after the test that started it ended", addr)
		}
	}
}

// Killing a master promotes its replica, and WaitHealthy waits for it.
func TestClusterKillPromotesReplica(t *testing.T) {
	c := StartCluster(t, 3, 1)
	master := c.Masters()[0]
	replica := c.ReplicasOf(master)[0]
	c.Kill(master)
	c.WaitHealthy()
	if masters := c.Masters(); !slices.Contains(masters, replica) || slices.Contains(masters, master) {
		t.Errorf("masters after killing %s: %v, want its replica %s among them", master, masters, replica)
	}
}

func TestStartClusterWithoutRedisCLI(t *testing.T) {
	server, err := exec.LookPath("redis-server")
	if err != nil {
		t.Skip("redis-server is not installed")
	}
	// A PATH with redis-server alone.
	dir := t.TempDir()
	if err := os.Symlink(server, filepath.Join(dir, "redis-server")); err != nil {
		t.Skip(err)
	}
	t.Setenv("PATH", dir)

	t.Setenv(RequireEnv, "")
	f := run(t, func(tb *fakeTB) { StartCluster(tb, 3, 0) })
	if f.fail != "" || !strings.Contains(f.skipped, "apt-get install redis-tools") {
		t.Errorf("without redis-cli: skipped %q, failed %q; want a skip saying what to install", f.skipped, f.fail)
	}
	t.Setenv(RequireEnv, "1")
	f = run(t, func(tb *fakeTB) { StartCluster(tb, 3, 0) })
	if f.skipped != "" || !strings.Contains(f.fail, "redis-cli is required") {
		t.Errorf("without redis-cli, %s=1: skipped %q, failed %q; want a failure", RequireEnv, f.skipped, f.fail)
	}
}
