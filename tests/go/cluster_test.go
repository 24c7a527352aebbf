// gocql against a three-node Cairn cluster: three `cairn serve` processes on 127.0.0.1,
// 127.0.0.2 and 127.0.0.3 with the same ports (as ccm runs Cassandra: drivers take every
// node's CQL port from the one they connected to) and the same seeds form one ring. gocql,
// given only 127.0.0.1, discovers the other two with their tokens; with
// TokenAwareHostPolicy(RoundRobinHostPolicy()) every request for a key of an RF=1 keyspace goes
// to the node `cairn nodetool getendpoints` names; and QUORUM writes and reads of an RF=3
// keyspace work through every node as coordinator.
package cairntest

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gocql/gocql"
)

var clusterHosts = []string{"127.0.0.1", "127.0.0.2", "127.0.0.3"}

// freePortsOn returns n distinct ports free on every one of hosts (a port free on 127.0.0.1
// may be taken on 127.0.0.2: internode connections bind their source address).
func freePortsOn(t *testing.T, hosts []string, n int) []int {
	t.Helper()
	var ports []int
	var held []net.Listener
	defer func() {
		for _, l := range held {
			l.Close()
		}
	}()
	for attempts := 0; len(ports) < n; attempts++ {
		if attempts > 100 {
			t.Fatalf("no port free on all of %v", hosts)
		}
		first, err := net.Listen("tcp", net.JoinHostPort(hosts[0], "0"))
		if err != nil {
			t.Fatalf("free port: %v", err)
		}
		held = append(held, first)
		port := first.Addr().(*net.TCPAddr).Port
		free := true
		for _, h := range hosts[1:] {
			l, err := net.Listen("tcp", net.JoinHostPort(h, strconv.Itoa(port)))
			if err != nil {
				free = false
				break
			}
			held = append(held, l)
		}
		if free {
			ports = append(ports, port)
		}
	}
	return ports
}

// ring is three running nodes sharing their ports.
type ring struct {
	native, api int
}

// nodetool runs `cairn nodetool` against the REST API of the node at host.
func (r ring) nodetool(t *testing.T, host string, args ...string) (string, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	all := append([]string{"nodetool", "-h", host, "-p", strconv.Itoa(r.api)}, args...)
	out, err := exec.CommandContext(ctx, cairnBin(t), all...).CombinedOutput()
	if err != nil {
		return "", fmt.Errorf("nodetool %v: %v: %s", args, err, out)
	}
	return string(out), nil
}

// startRing starts the three nodes at once (discovery must form one group) and returns when
// the first sees all three up.
func startRing(t *testing.T) ring {
	t.Helper()
	bin := cairnBin(t)
	root := t.TempDir()
	ports := freePortsOn(t, clusterHosts, 4)
	r := ring{native: ports[0], api: ports[1]}
	var procs []*process
	for i, host := range clusterHosts {
		config := filepath.Join(root, fmt.Sprintf("n%d.yaml", i+1))
		yaml := fmt.Sprintf("cluster_name: gocql cluster\nstorage_port: %d\n"+
			"seed_provider:\n  - class_name: org.apache.cassandra.locator.SimpleSeedProvider\n"+
			"    parameters:\n      - seeds: %q\n", ports[3], strings.Join(clusterHosts, ","))
		if err := os.WriteFile(config, []byte(yaml), 0o644); err != nil {
			t.Fatal(err)
		}
		cmd := exec.Command(bin, "serve", "--config", config,
			"--data-dir", filepath.Join(root, fmt.Sprintf("n%d", i+1)), "--listen-address", host,
			"--native-port", strconv.Itoa(ports[0]), "--api-port", strconv.Itoa(ports[1]),
			"--metrics-port", strconv.Itoa(ports[2]))
		procs = append(procs, spawn(t, cmd))
	}
	for i, p := range procs {
		p.awaitListening(t, clusterHosts[i], r.native)
	}
	// A bound socket accepts before the node has joined: wait for the ring itself.
	deadline := time.Now().Add(60 * time.Second)
	for {
		out, err := r.nodetool(t, clusterHosts[0], "status")
		up := 0
		for _, line := range strings.Split(out, "\n") {
			if f := strings.Fields(line); len(f) > 1 && f[0] == "UN" {
				up++
			}
		}
		if err == nil && up == len(clusterHosts) {
			return r
		}
		if time.Now().After(deadline) {
			t.Fatalf("three nodes not UN within 60s: %v\n%s", err, out)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// coordinators records the host that served each observed request.
type coordinators struct {
	mu    sync.Mutex
	hosts []string
}

func (c *coordinators) ObserveQuery(_ context.Context, q gocql.ObservedQuery) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if q.Host != nil {
		c.hosts = append(c.hosts, q.Host.ConnectAddress().String())
	}
}

// last is the host of the latest request, and forgets it.
func (c *coordinators) last() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.hosts) == 0 {
		return ""
	}
	h := c.hosts[len(c.hosts)-1]
	c.hosts = nil
	return h
}

// discovered records the hosts gocql accepts while allowing only those in allow (every host
// when allow is empty).
type discovered struct {
	mu    sync.Mutex
	hosts map[string]*gocql.HostInfo
}

func (d *discovered) filter(allow ...string) gocql.HostFilter {
	return gocql.HostFilterFunc(func(h *gocql.HostInfo) bool {
		addr := h.ConnectAddress().String()
		d.mu.Lock()
		d.hosts[addr] = h
		d.mu.Unlock()
		if len(allow) == 0 {
			return true
		}
		for _, a := range allow {
			if a == addr {
				return true
			}
		}
		return false
	})
}

func (r ring) session(t *testing.T, seen *discovered, obs gocql.QueryObserver, only ...string) *gocql.Session {
	t.Helper()
	contact := clusterHosts[0]
	if len(only) > 0 {
		contact = only[0]
	}
	cluster := gocql.NewCluster(contact)
	cluster.Port = r.native
	cluster.ProtoVersion = 4
	cluster.Timeout = 20 * time.Second
	cluster.ConnectTimeout = 10 * time.Second
	cluster.PoolConfig.HostSelectionPolicy = gocql.TokenAwareHostPolicy(gocql.RoundRobinHostPolicy())
	cluster.HostFilter = seen.filter(only...)
	cluster.QueryObserver = obs
	s, err := cluster.CreateSession()
	if err != nil {
		t.Fatalf("gocql CreateSession: %v", err)
	}
	t.Cleanup(s.Close)
	return s
}

func TestGocqlCluster(t *testing.T) {
	r := startRing(t)
	seen := &discovered{hosts: map[string]*gocql.HostInfo{}}
	coord := &coordinators{}
	s := r.session(t, seen, coord)

	// Discovery: the two nodes not given are found through system.peers, each with the 16
	// tokens `nodetool ring` lists for it.
	ringOut, err := r.nodetool(t, clusterHosts[0], "ring")
	if err != nil {
		t.Fatal(err)
	}
	want := map[string][]string{}
	for _, line := range strings.Split(ringOut, "\n") {
		if f := strings.Fields(line); len(f) > 1 && strings.HasPrefix(f[0], "127.0.0.") {
			want[f[0]] = append(want[f[0]], f[len(f)-1])
		}
	}
	got := map[string][]string{}
	seen.mu.Lock()
	for a, h := range seen.hosts {
		got[a] = append([]string(nil), h.Tokens()...)
	}
	seen.mu.Unlock()
	for _, m := range []map[string][]string{want, got} {
		for _, toks := range m {
			sort.Strings(toks)
		}
	}
	if len(want) != 3 || fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("gocql's hosts and tokens:\n%v\nnodetool ring's:\n%v", got, want)
	}
	for a, toks := range got {
		if len(toks) != 16 {
			t.Fatalf("%s has %d tokens", a, len(toks))
		}
	}

	exec1(t, s, `CREATE KEYSPACE go_rf1 WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}`)
	exec1(t, s, `CREATE TABLE go_rf1.kv (k int PRIMARY KEY, v text)`)

	t.Run("token aware routing", func(t *testing.T) {
		// For RF=1 each key has one replica, so the coordinator gocql picks from the token
		// ring must be exactly the node Cairn names; keys 0..29 cover all three nodes.
		owners := map[string]int{}
		for k := 0; k < 30; k++ {
			out, err := r.nodetool(t, clusterHosts[k%3], "getendpoints", "go_rf1", "kv", strconv.Itoa(k))
			if err != nil {
				t.Fatal(err)
			}
			replica := strings.TrimSpace(out)
			owners[replica]++
			if err := s.Query(`INSERT INTO go_rf1.kv (k, v) VALUES (?, ?)`, k, fmt.Sprint("v", k)).Exec(); err != nil {
				t.Fatalf("insert %d: %v", k, err)
			}
			if got := coord.last(); got != replica {
				t.Errorf("key %d: gocql sent the write to %s, its replica is %s", k, got, replica)
			}
			var v string
			if err := s.Query(`SELECT v FROM go_rf1.kv WHERE k = ?`, k).Scan(&v); err != nil || v != fmt.Sprint("v", k) {
				t.Fatalf("read %d: %q %v", k, v, err)
			}
			if got := coord.last(); got != replica {
				t.Errorf("key %d: gocql sent the read to %s, its replica is %s", k, got, replica)
			}
		}
		if len(owners) != 3 {
			t.Errorf("30 keys are on %d nodes (%v): the ring is not balanced", len(owners), owners)
		}
	})

	t.Run("quorum through every node", func(t *testing.T) {
		exec1(t, s, `CREATE KEYSPACE go_rf3 WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 3}`)
		exec1(t, s, `CREATE TABLE go_rf3.kv (k int PRIMARY KEY, v text)`)
		// One session per node, each allowed to send to that node only: every node
		// coordinates writes, and reads them (and the others' writes) back at QUORUM.
		var each []*gocql.Session
		for _, host := range clusterHosts {
			each = append(each, r.session(t, &discovered{hosts: map[string]*gocql.HostInfo{}}, coord, host))
		}
		for i, w := range each {
			for k := 0; k < 10; k++ {
				key := i*100 + k
				if err := w.Query(`INSERT INTO go_rf3.kv (k, v) VALUES (?, ?)`, key, fmt.Sprint("q", key)).
					Consistency(gocql.Quorum).Exec(); err != nil {
					t.Fatalf("QUORUM write of %d through %s: %v", key, clusterHosts[i], err)
				}
				if got := coord.last(); got != clusterHosts[i] {
					t.Fatalf("write through %s went to %s", clusterHosts[i], got)
				}
			}
		}
		for i, rd := range each {
			for j := range each {
				for k := 0; k < 10; k++ {
					key := j*100 + k
					var v string
					if err := rd.Query(`SELECT v FROM go_rf3.kv WHERE k = ?`, key).
						Consistency(gocql.Quorum).Scan(&v); err != nil || v != fmt.Sprint("q", key) {
						t.Fatalf("QUORUM read of %d through %s: %q %v", key, clusterHosts[i], v, err)
					}
				}
			}
			var n int
			if err := rd.Query(`SELECT COUNT(*) FROM go_rf3.kv`).Consistency(gocql.Quorum).Scan(&n); err != nil || n != 30 {
				t.Fatalf("QUORUM count through %s: %d %v", clusterHosts[i], n, err)
			}
		}
	})
}
