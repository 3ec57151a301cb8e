package tlsconf

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/des"
	"crypto/pbkdf2"
	"crypto/sha1"
	"crypto/sha256"
	"crypto/sha512"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/asn1"
	"errors"
	"fmt"
)

// PKCS#8 encrypted private keys (RFC 5958, "ENCRYPTED PRIVATE KEY"), what
// OpenSSL 3 writes by default (`openssl genrsa -aes256`, `openssl pkcs8
// -topk8`): PBES2 (RFC 8018) with PBKDF2 and AES-CBC or 3DES-CBC, built
// from the standard library's primitives. The older PBES1 schemes
// (`-v1 …`) are refused with how to convert.

var (
	oidPBES2  = asn1.ObjectIdentifier{1, 2, 840, 113549, 1, 5, 13}
	oidPBKDF2 = asn1.ObjectIdentifier{1, 2, 840, 113549, 1, 5, 12}

	oidHMACSHA1   = asn1.ObjectIdentifier{1, 2, 840, 113549, 2, 7}
	oidHMACSHA224 = asn1.ObjectIdentifier{1, 2, 840, 113549, 2, 8}
	oidHMACSHA256 = asn1.ObjectIdentifier{1, 2, 840, 113549, 2, 9}
	oidHMACSHA384 = asn1.ObjectIdentifier{1, 2, 840, 113549, 2, 10}
	oidHMACSHA512 = asn1.ObjectIdentifier{1, 2, 840, 113549, 2, 11}

	oidAES128CBC  = asn1.ObjectIdentifier{2, 16, 840, 1, 101, 3, 4, 1, 2}
	oidAES192CBC  = asn1.ObjectIdentifier{2, 16, 840, 1, 101, 3, 4, 1, 22}
	oidAES256CBC  = asn1.ObjectIdentifier{2, 16, 840, 1, 101, 3, 4, 1, 42}
	oidDESEDE3CBC = asn1.ObjectIdentifier{1, 2, 840, 113549, 3, 7}
)

type encryptedPrivateKeyInfo struct {
	Algo pkix.AlgorithmIdentifier
	Data []byte
}

type pbes2Params struct {
	KDF pkix.AlgorithmIdentifier
	Enc pkix.AlgorithmIdentifier
}

type pbkdf2Params struct {
	Salt   []byte
	Iter   int
	KeyLen int                      `asn1:"optional"`
	PRF    pkix.AlgorithmIdentifier `asn1:"optional"`
}

// errWrongPass is decryptPKCS8's error for a passphrase that does not
// open the key (PBES2 cannot tell it from a damaged file).
var errWrongPass = errors.New("wrong passphrase")

// decryptPKCS8 decrypts an "ENCRYPTED PRIVATE KEY" block's DER with pass
// and returns the PKCS#8 PrivateKeyInfo DER.
func decryptPKCS8(der []byte, pass string) ([]byte, error) {
	var info encryptedPrivateKeyInfo
	if rest, err := asn1.Unmarshal(der, &info); err != nil || len(rest) > 0 {
		return nil, fmt.Errorf("not a PKCS#8 encrypted key: %v", err)
	}
	if !info.Algo.Algorithm.Equal(oidPBES2) {
		return nil, fmt.Errorf("PKCS#8 encryption scheme %v is not supported (only PBES2, OpenSSL's default)", info.Algo.Algorithm)
	}
	var params pbes2Params
	if _, err := asn1.Unmarshal(info.Algo.Parameters.FullBytes, &params); err != nil {
		return nil, fmt.Errorf("PBES2 parameters: %v", err)
	}
	if !params.KDF.Algorithm.Equal(oidPBKDF2) {
		return nil, fmt.Errorf("key derivation %v is not supported (only PBKDF2)", params.KDF.Algorithm)
	}
	var kdf pbkdf2Params
	if _, err := asn1.Unmarshal(params.KDF.Parameters.FullBytes, &kdf); err != nil {
		return nil, fmt.Errorf("PBKDF2 parameters: %v", err)
	}
	var newBlock func([]byte) (cipher.Block, error)
	keyLen := 0
	switch enc := params.Enc.Algorithm; {
	case enc.Equal(oidAES128CBC):
		newBlock, keyLen = aes.NewCipher, 16
	case enc.Equal(oidAES192CBC):
		newBlock, keyLen = aes.NewCipher, 24
	case enc.Equal(oidAES256CBC):
		newBlock, keyLen = aes.NewCipher, 32
	case enc.Equal(oidDESEDE3CBC):
		newBlock, keyLen = des.NewTripleDESCipher, 24
	default:
		return nil, fmt.Errorf("cipher %v is not supported (AES-CBC or DES-EDE3-CBC)", enc)
	}
	if kdf.KeyLen != 0 && kdf.KeyLen != keyLen {
		return nil, fmt.Errorf("PBKDF2 key length %d does not fit the cipher", kdf.KeyLen)
	}
	var iv []byte
	if _, err := asn1.Unmarshal(params.Enc.Parameters.FullBytes, &iv); err != nil {
		return nil, fmt.Errorf("cipher IV: %v", err)
	}
	var key []byte
	var err error
	switch prf := kdf.PRF.Algorithm; {
	case len(prf) == 0 || prf.Equal(oidHMACSHA1):
		key, err = pbkdf2.Key(sha1.New, pass, kdf.Salt, kdf.Iter, keyLen)
	case prf.Equal(oidHMACSHA224):
		key, err = pbkdf2.Key(sha256.New224, pass, kdf.Salt, kdf.Iter, keyLen)
	case prf.Equal(oidHMACSHA256):
		key, err = pbkdf2.Key(sha256.New, pass, kdf.Salt, kdf.Iter, keyLen)
	case prf.Equal(oidHMACSHA384):
		key, err = pbkdf2.Key(sha512.New384, pass, kdf.Salt, kdf.Iter, keyLen)
	case prf.Equal(oidHMACSHA512):
		key, err = pbkdf2.Key(sha512.New, pass, kdf.Salt, kdf.Iter, keyLen)
	default:
		return nil, fmt.Errorf("PBKDF2 PRF %v is not supported", prf)
	}
	if err != nil {
		return nil, fmt.Errorf("PBKDF2: %v", err)
	}
	block, err := newBlock(key)
	if err != nil {
		return nil, err
	}
	bs := block.BlockSize()
	if len(iv) != bs || len(info.Data) == 0 || len(info.Data)%bs != 0 {
		return nil, errors.New("encrypted data does not fit the cipher")
	}
	plain := make([]byte, len(info.Data))
	cipher.NewCBCDecrypter(block, iv).CryptBlocks(plain, info.Data)
	// PKCS#7 padding; a wrong passphrase almost always breaks it, else
	// the DER that follows.
	n := int(plain[len(plain)-1])
	if n == 0 || n > bs {
		return nil, errWrongPass
	}
	for _, b := range plain[len(plain)-n:] {
		if int(b) != n {
			return nil, errWrongPass
		}
	}
	plain = plain[:len(plain)-n]
	if _, err := x509.ParsePKCS8PrivateKey(plain); err != nil {
		return nil, errWrongPass
	}
	return plain, nil
}
