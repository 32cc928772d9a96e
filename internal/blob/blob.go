// Package blob owns Trawler's object storage in MinIO/S3: raw bodies, compressed and
// content-addressed so an identical body is stored once, plus any other keyed object
// (extracted text, WARC files). Bodies never travel through Temporal payloads; activities
// pass the keys this package returns.
package blob

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"

	"github.com/minio/minio-go/v7"
	"github.com/minio/minio-go/v7/pkg/credentials"

	"github.com/trawlerdev/trawler/internal/gz"
	"github.com/trawlerdev/trawler/internal/iostats"
)

// Store is a bucket in MinIO/S3.
type Store struct {
	client *minio.Client
	bucket string
}

// Options says where the bucket is.
type Options struct {
	Endpoint, AccessKey, SecretKey, Bucket string
	UseSSL                                 bool
}

// New connects to the endpoint (or to the first of a comma-separated list of nodes that
// answers: endpoints.go) and creates the bucket when it does not exist yet.
func New(ctx context.Context, o Options) (*Store, error) {
	endpoint, nodes, err := splitEndpoints(o.Endpoint)
	if err != nil {
		return nil, err
	}
	base, err := minio.DefaultTransport(o.UseSSL)
	if err != nil {
		return nil, fmt.Errorf("blob: transport for %s: %w", o.Endpoint, err)
	}
	if nodes != nil {
		base.DialContext = nodes.DialContext
	}
	client, err := minio.New(endpoint, &minio.Options{
		Creds:     credentials.NewStaticV4(o.AccessKey, o.SecretKey, ""),
		Secure:    o.UseSSL,
		Transport: &iostats.S3Transport{Base: base}, // S3 requests per page are part of the budget
	})
	if err != nil {
		return nil, fmt.Errorf("blob: client for %s: %w", o.Endpoint, err)
	}
	s := &Store{client: client, bucket: o.Bucket}
	if err := s.ensureBucket(ctx); err != nil {
		return nil, err
	}
	return s, nil
}

func (s *Store) ensureBucket(ctx context.Context) error {
	exists, err := s.client.BucketExists(ctx, s.bucket)
	if err != nil {
		return fmt.Errorf("blob: check bucket %q at %s: %w", s.bucket, s.client.EndpointURL().Host, err)
	}
	if exists {
		return nil
	}
	if err := s.client.MakeBucket(ctx, s.bucket, minio.MakeBucketOptions{}); err != nil {
		// Another process may have created it between the check and the make.
		if resp := minio.ToErrorResponse(err); resp.Code == "BucketAlreadyOwnedByYou" || resp.Code == "BucketAlreadyExists" {
			return nil
		}
		return fmt.Errorf("blob: create bucket %q: %w", s.bucket, err)
	}
	return nil
}

// Bucket names the bucket.
func (s *Store) Bucket() string { return s.bucket }

// ContentHash is the SHA-256 of a body, the identity content addressing uses.
func ContentHash(body []byte) [32]byte { return sha256.Sum256(body) }

// BodyKey is the key a body with hash h is stored under.
func BodyKey(h [32]byte) string { return contentKey("bodies", h) }

// TextKey is the key an extracted text with hash h is stored under.
func TextKey(h [32]byte) string { return contentKey("text", h) }

func contentKey(prefix string, h [32]byte) string {
	x := hex.EncodeToString(h[:])
	return prefix + "/" + x[:2] + "/" + x[2:4] + "/" + x + ".gz"
}

// PutBody stores body gzip-compressed under its content hash and returns the key. It writes
// without asking first whether the object exists (a HEAD per page costs as much as the PUT it
// might save): a caller that knows the body is stored already (unchanged since the URL's last
// fetch) does not call it, and an identical body from another URL overwrites the same bytes.
func (s *Store) PutBody(ctx context.Context, body []byte) (key string, err error) {
	return s.putCompressed(ctx, BodyKey(ContentHash(body)), body)
}

// PutText stores extracted text like PutBody, under text/.
func (s *Store) PutText(ctx context.Context, text []byte) (key string, err error) {
	return s.putCompressed(ctx, TextKey(ContentHash(text)), text)
}

func (s *Store) putCompressed(ctx context.Context, key string, body []byte) (string, error) {
	gz, err := Gzip(body)
	if err != nil {
		return "", fmt.Errorf("blob: compress %s: %w", key, err)
	}
	if err := s.Put(ctx, key, gz, "application/gzip"); err != nil {
		return "", err
	}
	return key, nil
}

// Gzip compresses data as one gzip member, fast: how bodies and texts are stored.
func Gzip(data []byte) ([]byte, error) { return gz.Compress(data) }

// GetBody reads and decompresses an object stored by PutBody or PutText, refusing more than limit bytes.
func (s *Store) GetBody(ctx context.Context, key string, limit int64) ([]byte, error) {
	return s.read(ctx, key, limit, true)
}

// Put writes an object as is.
func (s *Store) Put(ctx context.Context, key string, data []byte, contentType string) error {
	_, err := s.client.PutObject(ctx, s.bucket, key, bytes.NewReader(data), int64(len(data)),
		minio.PutObjectOptions{ContentType: contentType})
	if err != nil {
		return fmt.Errorf("blob: put %s: %w", key, err)
	}
	return nil
}

// Open streams an object (a WARC file of any size), to be closed by the caller.
func (s *Store) Open(ctx context.Context, key string) (io.ReadCloser, error) {
	obj, err := s.client.GetObject(ctx, s.bucket, key, minio.GetObjectOptions{})
	if err != nil {
		return nil, fmt.Errorf("blob: get %s: %w", key, err)
	}
	return obj, nil
}

// Get reads an object whole, refusing more than limit bytes.
func (s *Store) Get(ctx context.Context, key string, limit int64) ([]byte, error) {
	return s.read(ctx, key, limit, false)
}

func (s *Store) read(ctx context.Context, key string, limit int64, gunzip bool) ([]byte, error) {
	obj, err := s.client.GetObject(ctx, s.bucket, key, minio.GetObjectOptions{})
	if err != nil {
		return nil, fmt.Errorf("blob: get %s: %w", key, err)
	}
	defer obj.Close()
	return ReadAll(obj, key, limit, gunzip)
}

// ReadAll reads r whole (decompressing it first when gunzip), refusing more than limit bytes;
// name says what is read in errors.
func ReadAll(r io.Reader, name string, limit int64, gunzip bool) ([]byte, error) {
	if gunzip {
		zr, err := gz.NewReader(r)
		if err != nil {
			return nil, fmt.Errorf("blob: read %s: %w", name, err)
		}
		defer gz.ReleaseReader(zr)
		r = zr
	}
	data, err := io.ReadAll(io.LimitReader(r, limit+1))
	if err != nil {
		return nil, fmt.Errorf("blob: read %s: %w", name, err)
	}
	if int64(len(data)) > limit {
		return nil, fmt.Errorf("blob: %s is larger than %d bytes", name, limit)
	}
	return data, nil
}

// GetRange reads length bytes of an object from offset (one WARC record, say).
func (s *Store) GetRange(ctx context.Context, key string, offset, length int64) ([]byte, error) {
	opts := minio.GetObjectOptions{}
	if err := opts.SetRange(offset, offset+length-1); err != nil {
		return nil, fmt.Errorf("blob: range of %s: %w", key, err)
	}
	obj, err := s.client.GetObject(ctx, s.bucket, key, opts)
	if err != nil {
		return nil, fmt.Errorf("blob: get %s: %w", key, err)
	}
	defer obj.Close()
	data, err := io.ReadAll(io.LimitReader(obj, length))
	if err != nil {
		return nil, fmt.Errorf("blob: read %s at %d: %w", key, offset, err)
	}
	return data, nil
}

// PutFile uploads a local file (a finished WARC file) as key.
func (s *Store) PutFile(ctx context.Context, key, path, contentType string) error {
	if _, err := s.client.FPutObject(ctx, s.bucket, key, path, minio.PutObjectOptions{ContentType: contentType}); err != nil {
		return fmt.Errorf("blob: upload %s: %w", key, err)
	}
	return nil
}

// List returns the keys under prefix, in order.
func (s *Store) List(ctx context.Context, prefix string) ([]string, error) {
	var keys []string
	for obj := range s.client.ListObjects(ctx, s.bucket, minio.ListObjectsOptions{Prefix: prefix, Recursive: true}) {
		if obj.Err != nil {
			return nil, fmt.Errorf("blob: list %s: %w", prefix, obj.Err)
		}
		keys = append(keys, obj.Key)
	}
	return keys, nil
}

// Delete removes keys (a missing key is no error), many per request.
func (s *Store) Delete(ctx context.Context, keys []string) error {
	objs := make(chan minio.ObjectInfo, len(keys))
	for _, k := range keys {
		objs <- minio.ObjectInfo{Key: k}
	}
	close(objs)
	var errs []error
	for e := range s.client.RemoveObjects(ctx, s.bucket, objs, minio.RemoveObjectsOptions{}) { // drained: its sender ends
		if e.Err != nil {
			errs = append(errs, fmt.Errorf("blob: delete %s: %w", e.ObjectName, e.Err))
		}
	}
	return errors.Join(errs...)
}

// Exists reports whether key is stored.
func (s *Store) Exists(ctx context.Context, key string) (bool, error) {
	_, err := s.client.StatObject(ctx, s.bucket, key, minio.StatObjectOptions{})
	if err == nil {
		return true, nil
	}
	if minio.ToErrorResponse(err).Code == "NoSuchKey" {
		return false, nil
	}
	var resp minio.ErrorResponse
	if errors.As(err, &resp) && resp.StatusCode == 404 {
		return false, nil
	}
	return false, fmt.Errorf("blob: stat %s: %w", key, err)
}

// Ping checks that the bucket is reachable.
func (s *Store) Ping(ctx context.Context) error {
	if _, err := s.client.BucketExists(ctx, s.bucket); err != nil {
		return fmt.Errorf("blob: ping %s: %w", s.client.EndpointURL().Host, err)
	}
	return nil
}
