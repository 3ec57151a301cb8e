package resp

// Encoder renders replies into Buf and, whenever Buf holds at least Limit
// bytes, hands it to Flush (which writes it out and returns the buffer to
// continue in), so a huge reply is never whole in memory: only the
// chunk being filled is. Aggregates are rendered element by element, and
// a Streamer renders its own elements the same way.
type Encoder struct {
	// Buf is the output not yet flushed.
	Buf []byte
	// Proto is the protocol rendered (2 or 3).
	Proto int
	// Limit is the size at which Buf is flushed; 0 never flushes (the
	// whole reply ends up in Buf, as AppendReply).
	Limit int
	// Flush takes the filled buffer and returns the one to continue in;
	// false stops the encoder (the output failed): the rest of the reply
	// is skipped.
	Flush func(b []byte) ([]byte, bool)

	stopped bool
}

// Streamer is a Reply that renders itself through an Encoder, a piece at a
// time (a long list of entries), calling Check after each piece and
// stopping once Stopped. It must render what an equivalent value would.
type Streamer interface {
	StreamRESP(e *Encoder)
}

// Reset makes e render into buf with proto and limit (Flush is kept), as a
// new Encoder would.
func (e *Encoder) Reset(buf []byte, proto, limit int) {
	e.Buf, e.Proto, e.Limit, e.stopped = buf, proto, limit, false
}

// Stopped reports whether Flush failed: the rest of the reply is dropped.
func (e *Encoder) Stopped() bool { return e.stopped }

// Check flushes Buf if it has reached Limit.
func (e *Encoder) Check() {
	if e.Limit <= 0 || len(e.Buf) < e.Limit || e.stopped || e.Flush == nil {
		return
	}
	var ok bool
	e.Buf, ok = e.Flush(e.Buf)
	if !ok {
		e.stopped = true
	}
}

// Reply renders r, flushing as Buf fills.
func (e *Encoder) Reply(r Reply) {
	if e.stopped {
		return
	}
	switch v := r.(type) {
	case Streamer:
		v.StreamRESP(e)
	case Array:
		if v == nil {
			e.Buf = AppendNull(e.Buf, e.Proto, '*')
			break
		}
		e.Buf = AppendHeader(e.Buf, '*', len(v))
		e.elems(v)
	case Map:
		if e.Proto == 3 {
			e.Buf = AppendHeader(e.Buf, '%', len(v))
		} else {
			e.Buf = AppendHeader(e.Buf, '*', 2*len(v))
		}
		for _, kv := range v {
			e.Reply(kv.K)
			e.Reply(kv.V)
		}
	case Set:
		e.Buf = AppendHeader(e.Buf, aggregate(e.Proto, '~'), len(v))
		e.elems(v)
	case Push:
		e.Buf = AppendHeader(e.Buf, aggregate(e.Proto, '>'), len(v))
		e.elems(v)
	default:
		e.Buf = AppendReply(e.Buf, r, e.Proto)
	}
	e.Check()
}

// elems renders an aggregate's elements.
func (e *Encoder) elems(v []Reply) {
	for _, x := range v {
		if e.stopped {
			return
		}
		e.Reply(x)
	}
}

// AppendStreamer renders s whole at the end of b: a Streamer's
// AppendRESP (Appender).
func AppendStreamer(b []byte, s Streamer, proto int) []byte {
	e := Encoder{Buf: b, Proto: proto}
	s.StreamRESP(&e)
	return e.Buf
}
