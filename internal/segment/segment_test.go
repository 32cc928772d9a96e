package segment_test

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/trawlerdev/trawler/internal/blob"
	"github.com/trawlerdev/trawler/internal/gz"
	"github.com/trawlerdev/trawler/internal/segment"
	"github.com/trawlerdev/trawler/internal/testenv"
)

// Items added together land in one stored segment, each readable alone by its reference,
// and a reader fetches that segment once for all of them.
func TestItemsShareOneSegmentAndOneGet(t *testing.T) {
	b := testenv.Blob(t)
	ctx := context.Background()
	// A long age and an explicit flush: how long 50 items take to add (compressing each) on a
	// loaded box must not decide how many segments they fill.
	w := segment.NewWriter(b, segment.Options{Prefix: "segments/test", Name: "t", MaxAge: time.Minute})
	var refs []string
	var items [][]byte
	var waits []func(context.Context) error
	for i := 0; i < 50; i++ {
		item := bytes.Repeat([]byte(fmt.Sprintf("<p>page %d</p>", i)), 100+i)
		ref, wait, err := w.Add("crawl-1", item)
		if err != nil {
			t.Fatal(err)
		}
		refs, items, waits = append(refs, ref), append(items, item), append(waits, wait)
	}
	w.Flush()
	for _, wait := range waits {
		if err := wait(ctx); err != nil {
			t.Fatal(err)
		}
	}
	keys := map[string]bool{}
	for _, ref := range refs {
		key, _, _, ok := segment.ParseRef(ref)
		if !ok {
			t.Fatalf("not a segment reference: %q", ref)
		}
		keys[key] = true
	}
	if len(keys) != 1 {
		t.Fatalf("50 items added together went into %d segments", len(keys))
	}
	r := segment.NewReader(b, 64<<20)
	var wg sync.WaitGroup
	for i := range refs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			got, err := r.Get(ctx, refs[i], 1<<20)
			if err != nil || !bytes.Equal(got, items[i]) {
				t.Errorf("item %d: %d bytes, %v", i, len(got), err)
			}
		}()
	}
	wg.Wait()
	if r.Gets != 1 {
		t.Errorf("%d GETs for one segment", r.Gets)
	}
	if _, err := r.Get(ctx, refs[3], 10); err == nil {
		t.Error("Get ignored its size limit")
	}
	// A full segment is stored at once, without waiting out MaxAge.
	big := segment.NewWriter(b, segment.Options{Prefix: "segments/test", Name: "big", MaxAge: time.Hour, MaxBytes: 1})
	_, wait, _ := big.Add("crawl-1", []byte("x"))
	done := make(chan error)
	go func() { done <- wait(ctx) }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("a full segment was not stored")
	}
}

// An item read with GetDeflated comes with its compressed stream, which read alone (spliced
// into a member of its own) gives the item again; an item of a segment written before
// spliceable members, and a plain object, come without one.
func TestItemsComeWithTheirStreamWhenSpliceable(t *testing.T) {
	b := testenv.Blob(t)
	ctx := context.Background()
	w := segment.NewWriter(b, segment.Options{Prefix: "segments/test", Name: "d", MaxAge: time.Minute})
	item := bytes.Repeat([]byte("<p>a spliceable page</p>"), 500)
	ref, wait, err := w.Add("crawl-d", item)
	if err != nil {
		t.Fatal(err)
	}
	w.Flush()
	if err := wait(ctx); err != nil {
		t.Fatal(err)
	}
	r := segment.NewReader(b, 1<<20)
	got, d, err := r.GetDeflated(ctx, ref, 1<<20)
	if err != nil || !bytes.Equal(got, item) || d == nil || d.Size != int64(len(item)) {
		t.Fatalf("GetDeflated: %d bytes, stream %v, %v", len(got), d != nil, err)
	}
	var one bytes.Buffer
	if _, err := gz.WriteSpliced(&one, nil, *d, nil); err != nil {
		t.Fatal(err)
	}
	if back, err := blob.ReadAll(&one, "spliced", 1<<20, true); err != nil || !bytes.Equal(back, item) {
		t.Fatalf("the stream alone reads back %d bytes, %v", len(back), err)
	}
	old, _ := gz.Compress(item)
	key := segment.GroupPrefix("segments/test", "crawl-d") + "older.gz"
	if err := b.Put(ctx, key, append(bytes.Clone(old), old...), "application/gzip"); err != nil {
		t.Fatal(err)
	}
	got, d, err = r.GetDeflated(ctx, segment.Ref(key, int64(len(old)), int64(len(old))), 1<<20)
	if err != nil || !bytes.Equal(got, item) || d != nil {
		t.Fatalf("an older item: %d bytes, stream %v, %v", len(got), d != nil, err)
	}
	// A reference spanning two spliceable members (no writer makes one) is no stream.
	empty, _ := gz.CompressSpliceable(nil)
	whole, _ := gz.CompressSpliceable(item)
	two := segment.GroupPrefix("segments/test", "crawl-d") + "two.gz"
	if err := b.Put(ctx, two, append(bytes.Clone(empty), whole...), "application/gzip"); err != nil {
		t.Fatal(err)
	}
	got, d, err = r.GetDeflated(ctx, segment.Ref(two, 0, int64(len(empty)+len(whole))), 1<<20)
	if err != nil || !bytes.Equal(got, item) || d != nil {
		t.Fatalf("two members: %d bytes, stream %v, %v", len(got), d != nil, err)
	}
	plain, err := b.PutBody(ctx, item)
	if err != nil {
		t.Fatal(err)
	}
	if got, d, err = r.GetDeflated(ctx, plain, 1<<20); err != nil || !bytes.Equal(got, item) || d != nil {
		t.Fatalf("a plain object: %d bytes, stream %v, %v", len(got), d != nil, err)
	}
}

func TestParseRefRefusesMalformedReferences(t *testing.T) {
	for _, ref := range []string{"bodies/ab/cd/x.gz", "k#", "k#1", "k#a+2", "k#-1+2", "k#1+0"} {
		if _, _, _, ok := segment.ParseRef(ref); ok {
			t.Errorf("%q parsed as a segment reference", ref)
		}
	}
	if k, o, n, ok := segment.ParseRef(segment.Ref("a/b.gz", 10, 20)); !ok || k != "a/b.gz" || o != 10 || n != 20 {
		t.Errorf("round trip: %q %d %d %v", k, o, n, ok)
	}
}

// Items of two groups (crawls) never share a segment, each group's segments lie under its own
// prefix, and a crawl name holding '#' still gives references that parse back.
func TestGroupsKeepSegmentsApart(t *testing.T) {
	b := testenv.Blob(t)
	ctx := context.Background()
	w := segment.NewWriter(b, segment.Options{Prefix: "segments/test", Name: "t", MaxAge: time.Minute})
	refA, waitA, err := w.Add("a#1", []byte("from crawl a"))
	if err != nil {
		t.Fatal(err)
	}
	refB, waitB, err := w.Add("b", []byte("from crawl b"))
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := w.Add("x/y", []byte("no")); err == nil {
		t.Fatal("a group with a slash was taken")
	}
	w.Flush()
	if err := waitA(ctx); err != nil {
		t.Fatal(err)
	}
	if err := waitB(ctx); err != nil {
		t.Fatal(err)
	}
	keyA, _, _, okA := segment.ParseRef(refA)
	keyB, _, _, okB := segment.ParseRef(refB)
	if !okA || !okB || keyA == keyB {
		t.Fatalf("refs %q and %q: want two segments", refA, refB)
	}
	if !strings.HasPrefix(keyA, segment.GroupPrefix("segments/test", "a#1")) || !strings.HasPrefix(keyB, segment.GroupPrefix("segments/test", "b")) {
		t.Fatalf("segments %q, %q are not under their groups' prefixes", keyA, keyB)
	}
	r := segment.NewReader(b, 1<<20)
	got, err := r.Get(ctx, refA, 1<<20)
	if err != nil || string(got) != "from crawl a" {
		t.Fatalf("read back %q, %v", got, err)
	}
	listed, err := b.List(ctx, segment.GroupPrefix("segments/test", "b"))
	if err != nil || len(listed) != 1 || listed[0] != keyB {
		t.Fatalf("group b lists %v, %v; want [%s]", listed, err, keyB)
	}
}
