package codec

import (
	"bytes"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	commonpb "go.temporal.io/api/common/v1"
	"go.temporal.io/sdk/converter"
	"google.golang.org/protobuf/encoding/protojson"
)

type spec struct {
	Headers map[string]string `json:"headers"`
}

// A value sealed by one codec opens with its key, and with a rotated list that keeps it; its
// bytes never show the secret; a payload someone changed or sealed with a key the list does not
// hold is an error; a plain JSON payload (temporal workflow start --input) passes through.
func TestPayloadsAreSealedAndOpened(t *testing.T) {
	c, err := New("correct horse battery staple")
	if err != nil {
		t.Fatal(err)
	}
	dc := c.DataConverter()
	in := spec{Headers: map[string]string{"X-Api-Key": "k1-very-secret"}}
	p, err := dc.ToPayload(in)
	if err != nil {
		t.Fatal(err)
	}
	if raw, _ := p.Marshal(); bytes.Contains(raw, []byte("k1-very-secret")) || bytes.Contains(raw, []byte("X-Api-Key")) {
		t.Fatal("the sealed payload shows the secret")
	}
	if string(p.Metadata["encoding"]) != Encoding {
		t.Fatalf("metadata %v", p.Metadata)
	}
	var out spec
	if err := dc.FromPayload(p, &out); err != nil || out.Headers["X-Api-Key"] != "k1-very-secret" {
		t.Fatalf("opened %+v, %v", out, err)
	}
	rotated, err := New("a brand new key of 32 characters!, correct horse battery staple")
	if err != nil {
		t.Fatal(err)
	}
	if err := rotated.DataConverter().FromPayload(p, &out); err != nil {
		t.Fatalf("a rotated key list does not open the old key's payload: %v", err)
	}
	other, err := New("someone else's key and not ours")
	if err != nil {
		t.Fatal(err)
	}
	if err := other.DataConverter().FromPayload(p, &out); err == nil || !strings.Contains(err.Error(), "does not hold") {
		t.Fatalf("another key: %v", err)
	}
	tampered := &commonpb.Payload{Metadata: p.Metadata, Data: append([]byte(nil), p.Data...)}
	tampered.Data[len(tampered.Data)-1] ^= 1
	if err := dc.FromPayload(tampered, &out); err == nil {
		t.Fatal("a changed payload opened")
	}
	plain, _ := converter.GetDefaultDataConverter().ToPayload(spec{Headers: map[string]string{"A": "b"}})
	if err := dc.FromPayload(plain, &out); err != nil || out.Headers["A"] != "b" {
		t.Fatalf("plain JSON: %+v, %v", out, err)
	}
	if _, err := New("short"); err == nil {
		t.Fatal("a short key was taken")
	}
}

// The codec server decodes for those the browser origin and token let in.
func TestTheCodecServerDecodesForTheUI(t *testing.T) {
	c, _ := New("correct horse battery staple")
	p, _ := c.DataConverter().ToPayload("s3cret value")
	srv := httptest.NewServer(c.Handler([]string{"http://127.0.0.1:8233"}, "tok"))
	defer srv.Close()
	body, err := protojson.Marshal(&commonpb.Payloads{Payloads: []*commonpb.Payload{p}})
	if err != nil {
		t.Fatal(err)
	}
	post := func(auth string) *http.Response {
		req, _ := http.NewRequest(http.MethodPost, srv.URL+"/decode", bytes.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Origin", "http://127.0.0.1:8233")
		if auth != "" {
			req.Header.Set("Authorization", auth)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		return resp
	}
	if resp := post(""); resp.StatusCode != http.StatusUnauthorized {
		t.Fatalf("without the token: %d", resp.StatusCode)
	}
	resp := post("Bearer tok")
	defer resp.Body.Close()
	var got bytes.Buffer
	_, _ = got.ReadFrom(resp.Body)
	var decoded commonpb.Payloads
	if err := protojson.Unmarshal(got.Bytes(), &decoded); err != nil || resp.StatusCode != 200 || len(decoded.Payloads) != 1 ||
		string(decoded.Payloads[0].Metadata["encoding"]) != "json/plain" || !bytes.Contains(decoded.Payloads[0].Data, []byte("s3cret value")) {
		t.Fatalf("decode: %d %v %s (%v)", resp.StatusCode, resp.Header, got.String(), err)
	}
	if resp.Header.Get("Access-Control-Allow-Origin") != "http://127.0.0.1:8233" {
		t.Errorf("the UI's origin was not allowed: %v", resp.Header)
	}
	req, _ := http.NewRequest(http.MethodOptions, srv.URL+"/decode", nil)
	req.Header.Set("Origin", "http://evil.test")
	pre, err := http.DefaultClient.Do(req)
	if err != nil || pre.Header.Get("Access-Control-Allow-Origin") != "" {
		t.Fatalf("a foreign origin was allowed: %v %v", err, pre.Header)
	}
}

// Without a token the codec server answers loopback names only (DNS rebinding).
func TestTheCodecServerWithoutATokenAnswersLoopbackOnly(t *testing.T) {
	c, _ := New("correct horse battery staple")
	h := c.Handler(nil, "")
	for host, want := range map[string]int{"127.0.0.1:8089": http.StatusBadRequest, "localhost:8089": http.StatusBadRequest,
		"[::1]:8089": http.StatusBadRequest, "rebind.evil.test:8089": http.StatusForbidden} {
		req := httptest.NewRequest(http.MethodPost, "http://"+host+"/decode", strings.NewReader("not json"))
		req.Host = host
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		if rec.Code != want {
			t.Errorf("Host %s: %d, want %d", host, rec.Code, want)
		}
	}
}
