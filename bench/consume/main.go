// Command consume is the group-consume half of bench/memory_speed.sh: some
// consumers of one group read a stream with XREADGROUP ... COUNT n STREAMS
// key > and acknowledge each batch with XACK (sent in the same round trip
// as the next read), until the group has nothing new; it prints the
// entries consumed per second. The stream and the group must exist (XGROUP
// CREATE key group 0). It measures; it asserts nothing.
//
//	go run ./bench/consume -addr 127.0.0.1:6379 -key s -group g -consumers 10 -count 100
package main

import (
	"flag"
	"fmt"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gomodule/redigo/redis"
)

func main() {
	addr := flag.String("addr", "127.0.0.1:6379", "server address")
	key := flag.String("key", "s", "stream key")
	group := flag.String("group", "g", "consumer group (must exist)")
	consumers := flag.Int("consumers", 10, "consumers, one connection each")
	count := flag.Int("count", 100, "XREADGROUP COUNT")
	flag.Parse()

	var consumed atomic.Int64
	errs := make(chan error, *consumers)
	var wg sync.WaitGroup
	start := time.Now()
	for i := 0; i < *consumers; i++ {
		wg.Add(1)
		go func(name string) {
			defer wg.Done()
			n, err := consume(*addr, *key, *group, name, *count)
			consumed.Add(n)
			if err != nil {
				errs <- fmt.Errorf("%s: %w", name, err)
			}
		}(fmt.Sprintf("c%d", i))
	}
	wg.Wait()
	elapsed := time.Since(start)
	close(errs)
	for err := range errs {
		fmt.Fprintln(os.Stderr, "consume:", err)
		os.Exit(1)
	}
	fmt.Printf("%d entries in %.3f s: %.0f entries/s\n", consumed.Load(), elapsed.Seconds(),
		float64(consumed.Load())/elapsed.Seconds())
}

// consume runs one consumer until a read returns nothing and its last batch
// is acknowledged; it returns the entries it acknowledged.
func consume(addr, key, group, name string, count int) (int64, error) {
	c, err := redis.Dial("tcp", addr)
	if err != nil {
		return 0, err
	}
	defer c.Close()
	var acked int64
	var pending []any // the XACK arguments of the last batch read
	for {
		if pending != nil {
			if err := c.Send("XACK", pending...); err != nil {
				return acked, err
			}
		}
		if err := c.Send("XREADGROUP", "GROUP", group, name, "COUNT", count, "STREAMS", key, ">"); err != nil {
			return acked, err
		}
		if err := c.Flush(); err != nil {
			return acked, err
		}
		if pending != nil {
			n, err := redis.Int64(c.Receive())
			if err != nil {
				return acked, fmt.Errorf("XACK: %w", err)
			}
			if n != int64(len(pending)-2) {
				return acked, fmt.Errorf("XACK acknowledged %d of %d", n, len(pending)-2)
			}
			acked += n
		}
		ids, err := readIDs(c)
		if err != nil {
			return acked, fmt.Errorf("XREADGROUP: %w", err)
		}
		if len(ids) == 0 {
			return acked, nil
		}
		pending = append([]any{key, group}, ids...)
	}
}

// readIDs receives an XREADGROUP reply and returns the IDs it delivered
// (none for a nil reply).
func readIDs(c redis.Conn) ([]any, error) {
	streams, err := redis.Values(c.Receive())
	if err == redis.ErrNil {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var ids []any
	for _, s := range streams {
		kv, err := redis.Values(s, nil)
		if err != nil || len(kv) != 2 {
			return nil, fmt.Errorf("bad stream reply %v (%v)", s, err)
		}
		entries, err := redis.Values(kv[1], nil)
		if err != nil {
			return nil, err
		}
		for _, e := range entries {
			f, err := redis.Values(e, nil)
			if err != nil || len(f) != 2 {
				return nil, fmt.Errorf("bad entry %v (%v)", e, err)
			}
			id, err := redis.String(f[0], nil)
			if err != nil {
				return nil, err
			}
			ids = append(ids, id)
		}
	}
	return ids, nil
}
