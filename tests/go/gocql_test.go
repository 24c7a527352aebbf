// End-to-end test of Cairn through the gocql driver: starts the `cairn serve` binary
// (CAIRN_BIN, default ../../target/release/cairn) with a temporary data directory on a free
// loopback port, then prepares, writes, pages and reads through the real driver. The same
// source runs with upstream gocql (go.mod) and ScyllaDB's fork (`-modfile=go.scylla.mod`),
// which reads system.peers_v2 at connect with no fallback.
package cairntest

import (
	"bytes"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/gocql/gocql"
)

// node is a running `cairn serve` process.
type node struct {
	cmd  *exec.Cmd
	port int
	log  *bytes.Buffer
}

func cairnBin(t *testing.T) string {
	bin := os.Getenv("CAIRN_BIN")
	if bin == "" {
		bin = filepath.Join("..", "..", "target", "release", "cairn")
	}
	abs, err := filepath.Abs(bin)
	if err != nil {
		t.Fatalf("CAIRN_BIN %q: %v", bin, err)
	}
	if _, err := os.Stat(abs); err != nil {
		t.Fatalf("cairn binary not found at %s (set CAIRN_BIN or build with `cargo build --release -p cairn`): %v", abs, err)
	}
	return abs
}

func freePort(t *testing.T) int {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("free port: %v", err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// syncBuffer collects the node's output from two pipes.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// startNode starts `cairn serve` with extra arguments (e.g. `--config FILE`) and returns its
// CQL port once it listens.
func startNode(t *testing.T, extra ...string) int {
	t.Helper()
	bin := cairnBin(t)
	dir := t.TempDir()
	port := freePort(t)
	// Every listener on a port of its own, so this node runs beside any other.
	args := []string{"serve", "--data-dir", dir, "--native-port", strconv.Itoa(port),
		"--api-port", strconv.Itoa(freePort(t)), "--metrics-port", strconv.Itoa(freePort(t))}
	spawn(t, exec.Command(bin, append(args, extra...)...)).awaitListening(t, "127.0.0.1", port)
	return port
}

// process is a started `cairn serve`.
type process struct {
	out    *syncBuffer
	exited chan error
}

// spawn starts cmd (a `cairn serve`) and stops it when the test ends, showing its output if
// the test failed.
func spawn(t *testing.T, cmd *exec.Cmd) *process {
	t.Helper()
	p := &process{out: &syncBuffer{}, exited: make(chan error, 1)}
	cmd.Stdout = p.out
	cmd.Stderr = p.out
	if err := cmd.Start(); err != nil {
		t.Fatalf("start %s: %v", cmd.Path, err)
	}
	go func() { p.exited <- cmd.Wait() }()
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		<-p.exited
		if t.Failed() {
			t.Logf("cairn output (%v):\n%s", cmd.Args, p.out.String())
		}
	})
	return p
}

// awaitListening returns once the process accepts connections at host:port.
func (p *process) awaitListening(t *testing.T, host string, port int) {
	t.Helper()
	addr := net.JoinHostPort(host, strconv.Itoa(port))
	deadline := time.Now().Add(30 * time.Second)
	for {
		select {
		case err := <-p.exited:
			p.exited <- err
			t.Fatalf("cairn exited before listening: %v\n%s", err, p.out.String())
		default:
		}
		c, err := net.DialTimeout("tcp", addr, time.Second)
		if err == nil {
			c.Close()
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("cairn did not listen on %s within 30s: %v\n%s", addr, err, p.out.String())
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func connect(t *testing.T, port int) *gocql.Session {
	t.Helper()
	cluster := gocql.NewCluster("127.0.0.1")
	cluster.Port = port
	cluster.ProtoVersion = 4
	cluster.Consistency = gocql.One
	cluster.Timeout = 20 * time.Second
	cluster.ConnectTimeout = 10 * time.Second
	cluster.NumConns = 2
	s, err := cluster.CreateSession()
	if err != nil {
		t.Fatalf("gocql CreateSession: %v", err)
	}
	t.Cleanup(s.Close)
	return s
}

func exec1(t *testing.T, s *gocql.Session, stmt string, args ...interface{}) {
	t.Helper()
	if err := s.Query(stmt, args...).Exec(); err != nil {
		t.Fatalf("%s: %v", stmt, err)
	}
}

func requestCode(err error) (int, string) {
	var re gocql.RequestError
	if errors.As(err, &re) {
		return re.Code(), re.Message()
	}
	// ScyllaDB's fork returns most server errors as its bare error frame, whose accessors
	// are GetCode and GetMessage.
	var frame interface {
		GetCode() int
		GetMessage() string
	}
	if errors.As(err, &frame) {
		return frame.GetCode(), frame.GetMessage()
	}
	return -1, fmt.Sprintf("%T %v", err, err)
}

func TestGocql(t *testing.T) {
	port := startNode(t)
	s := connect(t, port)

	exec1(t, s, `CREATE KEYSPACE gocql_ks WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}`)
	exec1(t, s, `CREATE TABLE gocql_ks.rows (pk int, ck int, v text, n bigint, b blob, PRIMARY KEY (pk, ck))`)

	// 2000 rows: partition 0 holds ck 0..1499, partitions 1..50 hold ck 0..9 each.
	// gocql prepares statements with bound values itself (PREPARE, then EXECUTE).
	const big = 1500
	type key struct{ pk, ck int }
	var keys []key
	for ck := 0; ck < big; ck++ {
		keys = append(keys, key{0, ck})
	}
	for pk := 1; pk <= 50; pk++ {
		for ck := 0; ck < 10; ck++ {
			keys = append(keys, key{pk, ck})
		}
	}
	if len(keys) != 2000 {
		t.Fatalf("%d keys", len(keys))
	}
	const insert = `INSERT INTO gocql_ks.rows (pk, ck, v, n, b) VALUES (?, ?, ?, ?, ?)`
	work := make(chan key)
	errs := make(chan error, 8)
	var wg sync.WaitGroup
	for w := 0; w < 8; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for k := range work {
				v := fmt.Sprintf("v%d-%d", k.pk, k.ck)
				if err := s.Query(insert, k.pk, k.ck, v, int64(k.pk)*1_000_000_000_000+int64(k.ck), []byte{byte(k.pk), byte(k.ck)}).Exec(); err != nil {
					select {
					case errs <- fmt.Errorf("insert %v: %w", k, err):
					default:
					}
					return
				}
			}
		}()
	}
	go func() {
		defer close(work)
		for _, k := range keys {
			select {
			case work <- k:
			case err := <-errs:
				errs <- err
				return
			}
		}
	}()
	wg.Wait()
	select {
	case err := <-errs:
		t.Fatal(err)
	default:
	}

	t.Run("single rows", func(t *testing.T) {
		var v string
		var n int64
		var b []byte
		if err := s.Query(`SELECT v, n, b FROM gocql_ks.rows WHERE pk = ? AND ck = ?`, 0, 1234).Scan(&v, &n, &b); err != nil {
			t.Fatalf("select row: %v", err)
		}
		if v != "v0-1234" || n != 1234 || !bytes.Equal(b, []byte{0, 1234 % 256}) {
			t.Fatalf("row (0,1234) = %q %d %v", v, n, b)
		}
		if err := s.Query(`SELECT v, n, b FROM gocql_ks.rows WHERE pk = ? AND ck = ?`, 37, 9).Scan(&v, &n, &b); err != nil {
			t.Fatalf("select row: %v", err)
		}
		if v != "v37-9" || n != 37_000_000_000_009 || !bytes.Equal(b, []byte{37, 9}) {
			t.Fatalf("row (37,9) = %q %d %v", v, n, b)
		}
		err := s.Query(`SELECT v FROM gocql_ks.rows WHERE pk = ? AND ck = ?`, 0, big+1).Scan(&v)
		if !errors.Is(err, gocql.ErrNotFound) {
			t.Fatalf("missing row: want ErrNotFound, got %v", err)
		}
	})

	t.Run("paging one partition", func(t *testing.T) {
		iter := s.Query(`SELECT ck, v FROM gocql_ks.rows WHERE pk = ?`, 0).PageSize(50).Iter()
		var ck int
		var v string
		i := 0
		for iter.Scan(&ck, &v) {
			if ck != i || v != fmt.Sprintf("v0-%d", i) {
				t.Fatalf("row %d: got ck=%d v=%q", i, ck, v)
			}
			i++
		}
		if err := iter.Close(); err != nil {
			t.Fatalf("iter: %v", err)
		}
		if i != big {
			t.Fatalf("paged %d rows, want %d", i, big)
		}
	})

	t.Run("manual pages", func(t *testing.T) {
		var state []byte
		seen, pages := 0, 0
		for {
			iter := s.Query(`SELECT ck FROM gocql_ks.rows WHERE pk = ?`, 0).PageSize(50).PageState(state).Iter()
			n := iter.NumRows()
			var ck int
			for iter.Scan(&ck) {
				if ck != seen {
					t.Fatalf("page %d: got ck=%d want %d", pages, ck, seen)
				}
				seen++
			}
			state = iter.PageState()
			if err := iter.Close(); err != nil {
				t.Fatalf("page %d: %v", pages, err)
			}
			pages++
			if len(state) == 0 {
				break
			}
			if n != 50 {
				t.Fatalf("non-final page %d has %d rows", pages, n)
			}
			if pages > big {
				t.Fatal("paging does not end")
			}
		}
		if seen != big || pages != big/50 && pages != big/50+1 {
			t.Fatalf("%d rows in %d pages", seen, pages)
		}
	})

	t.Run("paging the whole table", func(t *testing.T) {
		iter := s.Query(`SELECT pk, ck FROM gocql_ks.rows`).PageSize(50).Iter()
		var pk, ck int
		seen := map[key]bool{}
		last := key{-1, -1}
		for iter.Scan(&pk, &ck) {
			k := key{pk, ck}
			if seen[k] {
				t.Fatalf("row %v twice", k)
			}
			seen[k] = true
			if pk == last.pk && ck != last.ck+1 {
				t.Fatalf("partition %d out of order: %d after %d", pk, ck, last.ck)
			}
			if pk != last.pk && ck != 0 {
				t.Fatalf("partition %d starts at ck %d", pk, ck)
			}
			last = k
		}
		if err := iter.Close(); err != nil {
			t.Fatalf("iter: %v", err)
		}
		if len(seen) != len(keys) {
			t.Fatalf("scanned %d rows, want %d", len(seen), len(keys))
		}
	})

	t.Run("types", func(t *testing.T) {
		exec1(t, s, `CREATE TABLE gocql_ks.types (id uuid PRIMARY KEY, i int, b bigint, t text, bl blob, f boolean, d double, ts timestamp)`)
		id := gocql.TimeUUID()
		ts := time.UnixMilli(1_700_000_000_123).UTC()
		exec1(t, s, `INSERT INTO gocql_ks.types (id, i, b, t, bl, f, d, ts) VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
			id, int32(-7), int64(1)<<40, "héllo", []byte{0xca, 0xfe}, true, 2.5, ts)
		var (
			gid gocql.UUID
			i   int32
			b   int64
			tx  string
			bl  []byte
			f   bool
			d   float64
			gts time.Time
		)
		if err := s.Query(`SELECT id, i, b, t, bl, f, d, ts FROM gocql_ks.types WHERE id = ?`, id).
			Scan(&gid, &i, &b, &tx, &bl, &f, &d, &gts); err != nil {
			t.Fatalf("select types: %v", err)
		}
		got := []interface{}{gid, i, b, tx, bl, f, d, gts.UTC()}
		want := []interface{}{id, int32(-7), int64(1) << 40, "héllo", []byte{0xca, 0xfe}, true, 2.5, ts}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("types: got %v want %v", got, want)
		}
	})

	t.Run("batch", func(t *testing.T) {
		batch := s.NewBatch(gocql.UnloggedBatch)
		for ck := 0; ck < 20; ck++ {
			batch.Query(`INSERT INTO gocql_ks.rows (pk, ck, v) VALUES (?, ?, ?)`, 100, ck, fmt.Sprintf("b%d", ck))
		}
		if err := s.ExecuteBatch(batch); err != nil {
			t.Fatalf("batch: %v", err)
		}
		var count int64
		if err := s.Query(`SELECT COUNT(*) FROM gocql_ks.rows WHERE pk = ?`, 100).Scan(&count); err != nil {
			t.Fatalf("count: %v", err)
		}
		if count != 20 {
			t.Fatalf("batch wrote %d rows, want 20", count)
		}
	})

	t.Run("errors", func(t *testing.T) {
		code, msg := requestCode(s.Query(`SELEKT * FROM gocql_ks.rows`).Exec())
		if code != gocql.ErrCodeSyntax {
			t.Errorf("syntax error: code %#x (%s), want %#x", code, msg, gocql.ErrCodeSyntax)
		}
		code, msg = requestCode(s.Query(`SELECT * FROM gocql_ks.nope WHERE pk = ?`, 1).Exec())
		if code != gocql.ErrCodeInvalid {
			t.Errorf("unknown table: code %#x (%s), want %#x", code, msg, gocql.ErrCodeInvalid)
		}
		err := s.Query(`CREATE TABLE gocql_ks.rows (pk int PRIMARY KEY)`).Exec()
		var ae *gocql.RequestErrAlreadyExists
		if !errors.As(err, &ae) || ae.Keyspace != "gocql_ks" || ae.Table != "rows" {
			t.Errorf("table exists: got %T %v", err, err)
		}
	})

	t.Run("keyspace metadata", func(t *testing.T) {
		km, err := s.KeyspaceMetadata("gocql_ks")
		if err != nil {
			t.Fatalf("KeyspaceMetadata: %v", err)
		}
		tm, ok := km.Tables["rows"]
		if !ok {
			t.Fatalf("table rows missing from metadata: %v", km.Tables)
		}
		if len(tm.PartitionKey) != 1 || tm.PartitionKey[0].Name != "pk" ||
			len(tm.ClusteringColumns) != 1 || tm.ClusteringColumns[0].Name != "ck" {
			t.Fatalf("primary key metadata: pk=%v ck=%v", tm.PartitionKey, tm.ClusteringColumns)
		}
	})
}

// addr is a user type as gocql maps it: struct fields matched by their cql tags.
type addr struct {
	Street string `cql:"street"`
	Zip    *int   `cql:"zip"`
}

func TestGocqlUserTypes(t *testing.T) {
	port := startNode(t)
	s := connect(t, port)
	exec1(t, s, `CREATE KEYSPACE gocql_udt WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}`)
	exec1(t, s, `CREATE TYPE gocql_udt.addr (street text, zip int)`)
	exec1(t, s, `CREATE TABLE gocql_udt.t (k int PRIMARY KEY, f frozen<addr>, n addr, l list<frozen<addr>>)`)

	one := 1
	a := addr{Street: "a", Zip: &one}
	b := addr{Street: "b"}
	// Bound values (gocql prepares the statement and marshals by the bind metadata's type).
	exec1(t, s, `INSERT INTO gocql_udt.t (k, f, n, l) VALUES (?, ?, ?, ?)`, 1, a, b, []addr{a, b})
	read := func() (addr, addr, []addr) {
		var f, n addr
		var l []addr
		if err := s.Query(`SELECT f, n, l FROM gocql_udt.t WHERE k = ?`, 1).Scan(&f, &n, &l); err != nil {
			t.Fatalf("select user types: %v", err)
		}
		return f, n, l
	}
	f, n, l := read()
	if !reflect.DeepEqual(f, a) || !reflect.DeepEqual(n, b) || !reflect.DeepEqual(l, []addr{a, b}) {
		t.Fatalf("read back f=%+v n=%+v l=%+v", f, n, l)
	}
	// A field of the non-frozen value, bound; the other field stays.
	exec1(t, s, `UPDATE gocql_udt.t SET n.zip = ? WHERE k = ?`, 7, 1)
	_, n, _ = read()
	if n.Street != "b" || n.Zip == nil || *n.Zip != 7 {
		t.Fatalf("after SET n.zip: %+v", n)
	}
}
