package crawl

import (
	"encoding/json"
	"strings"
	"testing"
)

// A spec's JSON may name only fields Trawler knows, at every level; each unknown one is named
// with the known name nearest to it, and a spec Trawler wrote itself has none.
func TestUnknownSpecFieldsAreNamed(t *testing.T) {
	var s Spec
	raw := `{"seeds":["http://a.test/"],"maxpages":10,"recrawl":{"intervall":"1h"},"throttle":{"dealy":"2s"},
		"download_delay":2,"warc":{"off":true},"extract":[{"name":"p","fields":[{"name":"x","css":"p"},{"name":"y","css":"a","atr":"href"}]}]}`
	if err := json.Unmarshal([]byte(raw), &s); err != nil {
		t.Fatal(err)
	}
	got := CheckFields(s.UnknownFields())
	want := []string{"download_delay: unknown field", "maxpages: unknown field; did you mean maxPages?",
		"recrawl.intervall: unknown field; did you mean recrawl.interval?", "throttle.dealy: unknown field; did you mean throttle.delay?",
		"extract[0].fields[1].atr: unknown field; did you mean extract[0].fields[1].attr?"}
	if got == nil {
		t.Fatal("a spec with unknown fields passed")
	}
	for _, w := range want {
		if !strings.Contains(got.Error(), w) {
			t.Errorf("%q\nlacks %q", got, w)
		}
	}
	if !s.WARC.Off || len(s.Seeds) != 1 {
		t.Errorf("known fields lost: %+v", s)
	}
	// What Trawler writes of a spec reads back with nothing unknown.
	b, _ := json.Marshal(s.WithDefaults())
	var again Spec
	if err := json.Unmarshal(b, &again); err != nil || CheckFields(again.UnknownFields()) != nil {
		t.Errorf("a spec Trawler wrote: %v, unknown %v", err, again.UnknownFields())
	}
}
