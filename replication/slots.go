package replication

// SlotCount is the number of Redis Cluster hash slots.
const SlotCount = 16384

// KeySlot returns the Redis Cluster hash slot of key: CRC16 (XMODEM) of the
// key, or of its hashtag — the bytes between the first '{' and the first '}'
// after it, if not empty — modulo 16384, as Redis's keyHashSlot.
func KeySlot(key string) int {
	if i := indexByte(key, '{'); i >= 0 {
		if j := indexByte(key[i+1:], '}'); j > 0 {
			key = key[i+1 : i+1+j]
		}
	}
	return int(crc16(key) & (SlotCount - 1))
}

func indexByte(s string, c byte) int {
	for i := 0; i < len(s); i++ {
		if s[i] == c {
			return i
		}
	}
	return -1
}

// crc16Table is the CRC16-CCITT (XMODEM, polynomial 0x1021) table Redis uses.
var crc16Table = func() (t [256]uint16) {
	for i := range t {
		c := uint16(i) << 8
		for range 8 {
			if c&0x8000 != 0 {
				c = c<<1 ^ 0x1021
			} else {
				c <<= 1
			}
		}
		t[i] = c
	}
	return t
}()

// crc16 is CRC16-CCITT (XMODEM) of s.
func crc16(s string) uint16 {
	var crc uint16
	for i := 0; i < len(s); i++ {
		crc = crc<<8 ^ crc16Table[byte(crc>>8)^s[i]]
	}
	return crc
}

// ShardOfSlot maps a slot to one of n shards: shard i owns the contiguous
// slots [SlotRange(i, n)].
func ShardOfSlot(slot, n int) int { return slot * n / SlotCount }

// SlotRange returns the first and last slot shard i of n owns.
func SlotRange(i, n int) (first, last int) {
	first = (i*SlotCount + n - 1) / n
	last = ((i+1)*SlotCount+n-1)/n - 1
	return first, last
}
