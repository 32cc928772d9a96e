package blob_test

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"

	"github.com/trawlerdev/trawler/internal/blob"
	"github.com/trawlerdev/trawler/internal/testenv"
)

// A store given a list of nodes reaches its bucket through whichever answers: here an address
// nothing listens on, and the stack's MinIO. Each store starts at a random node, so several
// are made.
func TestANodeListSkipsANodeThatIsDown(t *testing.T) {
	cfg := testenv.Config(t)
	dead := testenv.FreeAddr(t)
	bucket := strings.ToLower(testenv.Unique("test-nodes-"))
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	for i := range 6 {
		s, err := blob.New(ctx, blob.Options{Endpoint: dead + "," + cfg.S3Endpoint, AccessKey: cfg.S3AccessKey,
			SecretKey: cfg.S3SecretKey, Bucket: bucket})
		if err != nil {
			t.Fatalf("store %d: %v", i, err)
		}
		body := bytes.Repeat([]byte{byte('a' + i)}, 1000)
		key, err := s.PutBody(ctx, body)
		if err != nil {
			t.Fatalf("store %d: put: %v", i, err)
		}
		got, err := s.GetBody(ctx, key, 1<<20)
		if err != nil || !bytes.Equal(got, body) {
			t.Fatalf("store %d: get: %v (%d bytes)", i, err, len(got))
		}
	}
	if _, err := blob.New(ctx, blob.Options{Endpoint: dead + ",nohost", Bucket: bucket}); err == nil || !strings.Contains(err.Error(), "nohost") {
		t.Errorf("a malformed node: %v", err)
	}
}
