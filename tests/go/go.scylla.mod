// The same tests through ScyllaDB's gocql fork (what scylla-bench and ScyllaDB users run):
// `go test -modfile=go.scylla.mod ./...` (test.sh runs both). The fork keeps gocql's import
// path, so it comes in as a replacement of upstream gocql and the test source stays one copy.
module github.com/cairn-db/cairn/tests/go

go 1.25.0

require github.com/gocql/gocql v1.7.0

require (
	github.com/google/uuid v1.6.0 // indirect
	github.com/klauspost/compress v1.18.6 // indirect
	golang.org/x/sync v0.20.0 // indirect
	gopkg.in/inf.v0 v0.9.1 // indirect
)

replace github.com/gocql/gocql => github.com/scylladb/gocql v1.18.3
