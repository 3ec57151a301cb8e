package replication

import (
	"testing"
	"time"

	"github.com/hashicorp/raft"
)

// fakeFuture is a response of fakePipeline.
type fakeFuture struct {
	raft.AppendFuture
	n uint64
}

// fakePipeline stands for raft's network pipeline: its response reader
// hands each response to Consumer, unbuffered, and counts them in sent.
type fakePipeline struct {
	out    chan raft.AppendFuture
	sent   chan uint64
	closed chan struct{}
}

func (p *fakePipeline) AppendEntries(*raft.AppendEntriesRequest, *raft.AppendEntriesResponse) (raft.AppendFuture, error) {
	return nil, nil
}
func (p *fakePipeline) Consumer() <-chan raft.AppendFuture { return p.out }
func (p *fakePipeline) Close() error                       { close(p.closed); return nil }

// respond hands n responses to the consumer, as the transport's reader
// does, or gives up when closed.
func (p *fakePipeline) respond(n int) {
	for i := 1; i <= n; i++ {
		select {
		case p.out <- fakeFuture{n: uint64(i)}:
			p.sent <- uint64(i)
		case <-p.closed:
			return
		}
	}
}

// TestDrainedPipelineNeverWaitsOnItsConsumer: with raft's decoder gone
// (nobody reads Consumer), the transport's responses are still taken, so
// its sender is never held; a consumer that reads gets them all, in order;
// Close ends the queue.
func TestDrainedPipelineNeverWaitsOnItsConsumer(t *testing.T) {
	inner := &fakePipeline{out: make(chan raft.AppendFuture), sent: make(chan uint64, 1000), closed: make(chan struct{})}
	d := newDrainedPipeline(inner)
	const n = 500
	go inner.respond(n)
	deadline := time.After(10 * time.Second)
	for got := 0; got < n; got++ {
		select {
		case <-inner.sent:
		case <-deadline:
			t.Fatalf("the transport handed over %d of %d responses with nobody consuming: it waits on the decoder", got, n)
		}
	}
	for i := uint64(1); i <= n; i++ {
		f := <-d.Consumer()
		if f.(fakeFuture).n != i {
			t.Fatalf("response %d came as %d", i, f.(fakeFuture).n)
		}
	}
	if err := d.Close(); err != nil {
		t.Fatal(err)
	}
	d.Close() // twice is fine
	select {
	case <-inner.closed:
	default:
		t.Fatal("Close did not close the transport's pipeline")
	}
}
