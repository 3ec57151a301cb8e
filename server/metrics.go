package server

import (
	"net/http"
	"time"

	"streamd/replication"
	"streamd/replication/state"
	"streamd/server/metrics"
)

// MetricsHandler returns the operators' HTTP endpoints (/metrics, /healthz,
// /readyz; see metrics.Handler), backed by a Prometheus registry owned by
// this handler that reads this server's figures at scrape time.
func (s *Server) MetricsHandler() http.Handler {
	return metrics.Handler(s.stats, metricsSource{s})
}

// metricsSource is the server as metrics.Source.
type metricsSource struct{ s *Server }

func (m metricsSource) ConnectedClients() int {
	m.s.mu.Lock()
	defer m.s.mu.Unlock()
	return len(m.s.clients) - m.s.internalClients
}

func (m metricsSource) Shards() []*replication.Shard {
	s := m.s
	if s.shard == nil {
		return nil
	}
	out := make([]*replication.Shard, s.node.NumShards())
	for i := range out {
		out[i] = s.node.Shard(i)
	}
	return out
}

func (m metricsSource) Keyspace() ([]state.DBInfo, error) {
	res, err := m.s.keyspaceInfo()
	if err != nil {
		return nil, err
	}
	dbs, _ := res.([]state.DBInfo)
	return dbs, nil
}

func (m metricsSource) MaxStreams() int { return m.s.config().MetricsMaxStreams }

func (m metricsSource) Ready() string { return m.s.ready() }

// ready reports why the server is not ready to serve, or "" when it is: it
// has started serving (Serve was called and Close was not) over an open
// shard. replication.Open returns a shard only once this node leads it and
// has replayed its log, and the shard is closed only after the server, so
// a serving server has a shard with a leader. A clustered node is ready
// when every shard has a known leader and is open (Node.Ready).
func (s *Server) ready() string {
	if s.shard == nil {
		return "no shard"
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	select {
	case <-s.done:
		return "shutting down"
	default:
	}
	if len(s.listeners) == 0 {
		return "not serving yet"
	}
	if s.node.Clustered() {
		return s.node.Ready()
	}
	return s.shard.Ready()
}

// sampleOps takes an ops/sec sample every 100ms until the server closes.
func (s *Server) sampleOps() {
	defer s.wg.Done()
	t := time.NewTicker(100 * time.Millisecond)
	defer t.Stop()
	for {
		select {
		case <-s.done:
			return
		case now := <-t.C:
			s.stats.Sample(now)
			s.sampleUsedMemory() // used_memory_peak, as Redis's cron; the OOM state
			s.nudgeGC(now)
			s.releaseIdleMemory(now)
		}
	}
}
