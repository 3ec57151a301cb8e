package server

import (
	"time"

	"streamd/replication/state"
	"streamd/replication/wire"
	"streamd/server/xargs"
	"streamd/server/xreply"
	"streamd/streams"
)

// cmdXREAD plans XREAD [COUNT n] [MAXCOUNT n] [MAXSIZE n] [BLOCK ms]
// STREAMS key… id…. "$" reads
// after the stream's last ID at the time of the command: nothing now, so the
// first try reads after the maximum ID for it, and a blocking read resolves
// it (wire.LastIDs) once subscribed, keeping it across wake-ups. "+" reads
// the last entry (Redis 7.4).
func cmdXREAD(c *Client, args [][]byte) (Plan, Reply) {
	a, r := xargs.ParseRead(args, false, time.Now().UnixMilli())
	if r != nil {
		return Plan{}, r
	}
	rs, dollar, r := a.ReadStreams()
	if r != nil {
		return Plan{}, r
	}
	p := Plan{Op: wire.XRead{DB: c.DB(), Count: a.Count, Streams: rs, MaxCount: a.MaxCount, MaxSize: a.MaxSize},
		Format: xreadFormat(c)}
	if a.Block {
		p.Block = &Blocking{Timeout: a.Timeout}
		if len(dollar) > 0 {
			p.Block.Prepare = func(s *Server, p *Plan) Reply {
				return resolveDollar(s, p, dollar)
			}
		}
	}
	return p, nil
}

// resolveDollar sets the "$" streams of a blocking XREAD to their last IDs.
func resolveDollar(s *Server, p *Plan, dollar []int) Reply {
	q := p.Op.(wire.XRead)
	names := make([]string, len(dollar))
	for i, j := range dollar {
		names[i] = q.Streams[j].Key
	}
	res, err := s.keyShard(names[0]).Query(wire.LastIDs{DB: q.DB, Names: names})
	if err != nil {
		return xreply.Error(err)
	}
	ids, _ := res.([]streams.ID)
	rs := append([]wire.ReadStream(nil), q.Streams...)
	for i, j := range dollar {
		if i < len(ids) {
			rs[j].ID = ids[i]
		}
	}
	q.Streams = rs
	p.Op = q
	return nil
}

// cmdXREADGROUP plans XREADGROUP GROUP g c [COUNT n] [MAXCOUNT n] [MAXSIZE
// n] [BLOCK ms] [CLAIM min-idle-time] [NOACK] STREAMS key… id…. ">" reads
// entries never delivered to the group (after claiming idle pending ones
// with CLAIM); any other ID reads the consumer's pending history (never
// blocks).
func cmdXREADGROUP(c *Client, args [][]byte) (Plan, Reply) {
	a, r := xargs.ParseRead(args, true, time.Now().UnixMilli())
	if r != nil {
		return Plan{}, r
	}
	rs, at, r := a.GroupStreams()
	if r != nil {
		return Plan{}, groupCheckedError(c, a, at, r)
	}
	op := wire.XReadGroup{DB: c.DB(), Group: string(a.Group), Consumer: string(a.Consumer),
		Count: a.Count, NoAck: a.NoAck, Streams: rs, Claim: a.Claim, MinIdleMs: a.MinIdleMs,
		MaxCount: a.MaxCount, MaxSize: a.MaxSize}
	p := Plan{Op: op, Format: xreadFormat(c)}
	if a.Block {
		p.Block = &Blocking{Timeout: a.Timeout, Group: true}
		if w, ok := claimWake(op); ok {
			p.Block.ClaimWake = &w
		} else if v, ok := visibilityWake(op); ok {
			p.Block.VisibilityWake = &v
		}
	}
	return p, nil
}

// groupCheckedError answers an ID error at stream i of XREADGROUP the way
// Redis orders its checks: it looks each key and group up before parsing the
// key's ID, so a missing key or group among streams 0..i answers NOGROUP
// first.
func groupCheckedError(c *Client, a *xargs.Read, i int, idErr Reply) Reply {
	for _, k := range a.Keys[:i+1] {
		res, err := c.srv.keyShard(string(k)).Query(wire.XInfoGroups{Base: wire.Base{DB: c.DB(), Key: string(k)}})
		found := false
		if err == nil {
			for _, g := range res.([]state.GroupInfo) {
				if g.Name == string(a.Group) {
					found = true
					break
				}
			}
		}
		if !found {
			return ErrorReply("NOGROUP No such key '" + string(k) + "' or consumer group '" +
				string(a.Group) + "' in XREADGROUP with GROUP option")
		}
	}
	return idErr
}

// xreadFormat renders an XREAD/XREADGROUP answer (xreply.Read) in the
// client's protocol at the time of the answer.
func xreadFormat(c *Client) func(any, error) Reply {
	return func(res any, err error) Reply { return xreply.Read(res, err, c.Proto()) }
}

// claimWake is the query a blocked XREADGROUP ... CLAIM asks before each
// wait: when its oldest pending entry becomes idle enough. CLAIM applies to
// the ">" streams listed before the first history stream (Redis turns it
// off for the rest of the command there); ok is false when there are none.
func claimWake(op wire.XReadGroup) (wire.XClaimWake, bool) {
	if !op.Claim {
		return wire.XClaimWake{}, false
	}
	w := wire.XClaimWake{DB: op.DB, Group: op.Group, MinIdleMs: op.MinIdleMs}
	for _, rs := range op.Streams {
		if !rs.New {
			break
		}
		w.Names = append(w.Names, rs.Key)
	}
	return w, len(w.Names) > 0
}

// visibilityWake is the query a blocked plain XREADGROUP asks before each
// wait: when a pending entry of a ">" stream becomes due under its group's
// VISIBILITY (issue #15); ok is false when no stream is read with ">".
func visibilityWake(op wire.XReadGroup) (wire.XVisibilityWake, bool) {
	w := wire.XVisibilityWake{DB: op.DB, Group: op.Group}
	for _, rs := range op.Streams {
		if rs.New {
			w.Names = append(w.Names, rs.Key)
		}
	}
	return w, len(w.Names) > 0
}
