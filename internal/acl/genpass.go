package acl

import (
	"encoding/hex"
	"errors"
	"fmt"
)

// GenPassMaxBits is GENPASS_MAX_BITS.
const GenPassMaxBits = 4096

// GenPassDefaultBits is ACL GENPASS's default size.
const GenPassDefaultBits = 256

var errGenPassBits = fmt.Errorf("ACL GENPASS argument must be the number of bits for the output password, a positive number up to %d", GenPassMaxBits)

// GenPassBytes is how many random bytes GenPass needs for bits:
// ceil(bits/8).
func GenPassBytes(bits int) int { return (bits + 7) / 8 }

// GenPass is ACL GENPASS [bits]: ceil(bits/4) lower-case hex characters
// from random, which must hold at least GenPassBytes(bits) bytes from a
// cryptographic source. bits outside 1..4096 gets Redis's error text
// (without "ERR ").
func GenPass(bits int, random []byte) (string, error) {
	if bits <= 0 || bits > GenPassMaxBits {
		return "", errGenPassBits
	}
	if len(random) < GenPassBytes(bits) {
		return "", errors.New("acl: GenPass needs more random bytes")
	}
	return hex.EncodeToString(random[:GenPassBytes(bits)])[:(bits+3)/4], nil
}
