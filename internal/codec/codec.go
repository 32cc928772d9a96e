// Package codec owns the encryption of what Trawler writes into Temporal: every payload (a
// crawl's spec with its headers and proxy, lease results, signals, queries, memos) and every
// failure's message, sealed with AES-256-GCM under TRAWLER_PAYLOAD_KEY, so the Temporal
// server, its database and its UI hold no secret in clear. It is Temporal's payload codec
// pattern: the SDK calls Encode and Decode around its JSON converter, and `trawler
// codec-server` decodes for the Temporal UI and the `temporal` CLI (--codec-endpoint) on
// behalf of those who hold the key.
package codec

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strings"

	commonpb "go.temporal.io/api/common/v1"
	"go.temporal.io/sdk/converter"
	"go.temporal.io/sdk/temporal"
	"golang.org/x/crypto/scrypt"
)

// Metadata of a sealed payload: its encoding says what Decode opens, the key ID which key.
const (
	Encoding    = "binary/encrypted"
	metaKeyID   = "encryption-key-id"
	metaCipher  = "encryption-cipher"
	cipherName  = "AES256-GCM"
	metaEncKey  = converter.MetadataEncoding
	keyIDLength = 8 // bytes of a key's ID (hex in the metadata)
)

// Codec seals payloads with its first key and opens them with any of its keys (rotation: put
// the new key first, keep the old one after it until nothing written under it is read).
type Codec struct {
	keys []key
}

type key struct {
	id   string
	aead cipher.AEAD
}

// kdfSalt is scrypt's salt: fixed, so every process of a deployment derives the same key
// from the same secret; what it buys is that a guess of a passphrase costs a guesser an
// scrypt (32 MiB, tens of milliseconds) against the key ID every payload carries.
const kdfSalt = "trawler payload key v1"

// New builds a codec from a comma-separated list of secrets. Each secret is a passphrase of
// at least 16 characters (better: 32 random bytes in base64, `openssl rand -base64 32`); the
// AES-256 key is its scrypt.
func New(secrets string) (*Codec, error) {
	c := &Codec{}
	for _, s := range strings.Split(secrets, ",") {
		s = strings.TrimSpace(s)
		if len(s) < 16 {
			return nil, fmt.Errorf("codec: a payload key must be at least 16 characters (got %d)", len(s))
		}
		sum, err := scrypt.Key([]byte(s), []byte(kdfSalt), 1<<15, 8, 1, 32)
		if err != nil {
			return nil, fmt.Errorf("codec: derive the key: %w", err)
		}
		block, err := aes.NewCipher(sum)
		if err != nil {
			return nil, fmt.Errorf("codec: %w", err)
		}
		aead, err := cipher.NewGCM(block)
		if err != nil {
			return nil, fmt.Errorf("codec: %w", err)
		}
		// The ID names the key without revealing it: a hash of the key, not of the secret.
		idSum := sha256.Sum256(sum)
		c.keys = append(c.keys, key{id: hex.EncodeToString(idSum[:keyIDLength]), aead: aead})
	}
	return c, nil
}

// KeyID is the ID of the key the codec seals with (shown by `trawler codec-server`).
func (c *Codec) KeyID() string { return c.keys[0].id }

// Encode seals each payload whole (its metadata and data).
func (c *Codec) Encode(payloads []*commonpb.Payload) ([]*commonpb.Payload, error) {
	out := make([]*commonpb.Payload, len(payloads))
	k := c.keys[0]
	for i, p := range payloads {
		plain, err := p.Marshal()
		if err != nil {
			return nil, fmt.Errorf("codec: marshal a payload: %w", err)
		}
		nonce := make([]byte, k.aead.NonceSize(), k.aead.NonceSize()+len(plain)+k.aead.Overhead())
		if _, err := rand.Read(nonce); err != nil {
			return nil, fmt.Errorf("codec: nonce: %w", err)
		}
		out[i] = &commonpb.Payload{
			Metadata: map[string][]byte{metaEncKey: []byte(Encoding), metaKeyID: []byte(k.id), metaCipher: []byte(cipherName)},
			Data:     k.aead.Seal(nonce, nonce, plain, nil),
		}
	}
	return out, nil
}

// Decode opens sealed payloads and passes others through as they are: a workflow started or
// signalled with plain JSON (`temporal workflow start --input`) is read as it came.
func (c *Codec) Decode(payloads []*commonpb.Payload) ([]*commonpb.Payload, error) {
	out := make([]*commonpb.Payload, len(payloads))
	for i, p := range payloads {
		if string(p.GetMetadata()[metaEncKey]) != Encoding {
			out[i] = p
			continue
		}
		id := string(p.GetMetadata()[metaKeyID])
		var k *key
		for j := range c.keys {
			if c.keys[j].id == id {
				k = &c.keys[j]
			}
		}
		if k == nil {
			return nil, fmt.Errorf("codec: a payload sealed with key %q, which TRAWLER_PAYLOAD_KEY does not hold (this process has %s)", id, c.ids())
		}
		ns := k.aead.NonceSize()
		if len(p.Data) < ns {
			return nil, fmt.Errorf("codec: a sealed payload of %d bytes is too short", len(p.Data))
		}
		plain, err := k.aead.Open(nil, p.Data[:ns], p.Data[ns:], nil)
		if err != nil {
			return nil, fmt.Errorf("codec: a payload sealed with key %s does not open: %w", id, err)
		}
		var q commonpb.Payload
		if err := q.Unmarshal(plain); err != nil {
			return nil, fmt.Errorf("codec: unmarshal an opened payload: %w", err)
		}
		out[i] = &q
	}
	return out, nil
}

func (c *Codec) ids() string {
	ids := make([]string, len(c.keys))
	for i, k := range c.keys {
		ids[i] = k.id
	}
	return strings.Join(ids, ", ")
}

// DataConverter is Temporal's default JSON converter with the codec around it.
func (c *Codec) DataConverter() converter.DataConverter {
	return converter.NewCodecDataConverter(converter.GetDefaultDataConverter(), c)
}

// FailureConverter encodes failures' messages and stack traces with the data converter: an
// error's text (a URL with a token in its query, a server's answer) is sealed too.
func (c *Codec) FailureConverter() converter.FailureConverter {
	return temporal.NewDefaultFailureConverter(temporal.DefaultFailureConverterOptions{DataConverter: c.DataConverter(), EncodeCommonAttributes: true})
}
