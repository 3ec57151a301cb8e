package replication

import (
	"sync"

	"github.com/hashicorp/raft"
)

// Raft's pipelined replication (hashicorp/raft v1.8.0) can deadlock a
// leader's replication goroutine for a follower: when the follower answers
// a newer term or a failure, raft's pipeline decoder (pipelineDecode)
// returns and stops reading the pipeline's Consumer; the transport's
// response reader then blocks handing it the next response, stops taking
// new requests in flight, and the sender (pipelineSend, inside
// AppendEntries) blocks for ever on that back-pressure before it can see
// that the decoder finished. The goroutine is stuck, the pipeline never
// closes, and raft's Shutdown waits on it for ever (a node that lost its
// leadership under load could not stop).
//
// drainedPipeline takes the responses off the transport's pipeline as
// they come and queues them for raft's decoder, so the transport never
// waits on the decoder: once the decoder returns, the sender goes on, sees
// it, and closes the pipeline, which ends the queue. The queue holds at
// most what was in flight when the decoder stopped.

// AppendEntriesPipeline returns the transport's pipeline behind a
// drainedPipeline.
func (g *guardedTransport) AppendEntriesPipeline(id raft.ServerID, target raft.ServerAddress) (raft.AppendPipeline, error) {
	p, err := g.NetworkTransport.AppendEntriesPipeline(id, target)
	if err != nil {
		return nil, err
	}
	return newDrainedPipeline(p), nil
}

// drainedPipeline is an AppendPipeline whose responses are queued for
// their consumer instead of waiting on it.
type drainedPipeline struct {
	raft.AppendPipeline
	out  chan raft.AppendFuture
	stop chan struct{}
	once sync.Once
}

func newDrainedPipeline(p raft.AppendPipeline) *drainedPipeline {
	d := &drainedPipeline{AppendPipeline: p, out: make(chan raft.AppendFuture), stop: make(chan struct{})}
	go d.forward()
	return d
}

// forward moves responses from the transport's pipeline to out, in order,
// queueing those the consumer has not taken yet, until Close.
func (d *drainedPipeline) forward() {
	in := d.AppendPipeline.Consumer()
	var queue []raft.AppendFuture
	for {
		var out chan raft.AppendFuture
		var next raft.AppendFuture
		if len(queue) > 0 {
			out, next = d.out, queue[0]
		}
		select {
		case f := <-in:
			queue = append(queue, f)
		case out <- next:
			queue[0] = nil
			queue = queue[1:]
		case <-d.stop:
			return
		}
	}
}

// Consumer is where the responses come, in request order.
func (d *drainedPipeline) Consumer() <-chan raft.AppendFuture { return d.out }

// Close closes the transport's pipeline and ends the queue (once).
func (d *drainedPipeline) Close() error {
	var err error
	d.once.Do(func() {
		err = d.AppendPipeline.Close()
		close(d.stop)
	})
	return err
}
