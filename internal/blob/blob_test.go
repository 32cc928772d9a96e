package blob_test

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/trawlerdev/trawler/internal/blob"
	"github.com/trawlerdev/trawler/internal/testenv"
)

func TestBodyRoundTripIsContentAddressed(t *testing.T) {
	s := testenv.Blob(t) // creates the bucket
	ctx := context.Background()
	body := bytes.Repeat([]byte("<p>hello trawler</p>\n"), 1000)

	key, err := s.PutBody(ctx, body)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(key, "bodies/") {
		t.Fatalf("first put: key %q", key)
	}
	key2, err := s.PutBody(ctx, append([]byte(nil), body...))
	if err != nil {
		t.Fatal(err)
	}
	if key2 != key {
		t.Fatalf("identical body: key %q; want the same key %q", key2, key)
	}
	raw, err := s.Get(ctx, key, 1<<20)
	if err != nil {
		t.Fatal(err)
	}
	if len(raw) >= len(body)/4 {
		t.Errorf("stored %d bytes for a %d-byte repetitive body: not compressed", len(raw), len(body))
	}
	got, err := s.GetBody(ctx, key, 1<<20)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, body) {
		t.Fatal("body changed in the round trip")
	}
	if _, err := s.GetBody(ctx, key, 100); err == nil {
		t.Fatal("GetBody ignored its size limit")
	}
	if ok, err := s.Exists(ctx, "bodies/none"); err != nil || ok {
		t.Fatalf("Exists(missing) = %v, %v", ok, err)
	}
	if blob.BodyKey(blob.ContentHash(body)) != key {
		t.Fatal("BodyKey disagrees with PutBody")
	}
}
