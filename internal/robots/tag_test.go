package robots

import "testing"

func TestParseTag(t *testing.T) {
	for _, c := range []struct {
		name   string
		values []string
		want   string
	}{
		{"none", nil, ""},
		{"plain", []string{"noindex"}, "noindex"},
		{"comma list", []string{"noarchive, nofollow"}, "nofollow,noarchive"},
		{"several headers", []string{"noindex", "nofollow"}, "noindex,nofollow"},
		{"none means both", []string{"none"}, "noindex,nofollow"},
		{"case and space", []string{"  NoIndex ,NOFOLLOW "}, "noindex,nofollow"},
		{"scoped to us", []string{"trawlerbot: noindex"}, "noindex"},
		{"scoped to us, case", []string{"TrawlerBot: nofollow, noarchive"}, "nofollow,noarchive"},
		{"scoped to another", []string{"googlebot: noindex, nofollow"}, ""},
		{"scope changes mid value", []string{"googlebot: noindex, trawlerbot: nofollow"}, "nofollow"},
		{"scope ends with the header", []string{"googlebot: noindex", "nofollow"}, "nofollow"},
		{"other bot then everyone", []string{"otherbot: none", "noarchive"}, "noarchive"},
		{"valued directives are not agents", []string{"unavailable_after: 25 Jun 2010 15:00:00 PST, noindex"}, "noindex"},
		{"max-snippet is not an agent", []string{"max-snippet: 20, nofollow"}, "nofollow"},
		{"unknown directives ignored", []string{"index, follow, all, notranslate"}, ""},
		{"garbage", []string{"\x00\xff:, ,,:"}, ""},
	} {
		if got := ParseTag(c.values, "TrawlerBot").String(); got != c.want {
			t.Errorf("%s: %q -> %q, want %q", c.name, c.values, got, c.want)
		}
	}
}

func TestDirectivesListRoundTrip(t *testing.T) {
	for _, s := range []string{"", "noindex", "nofollow", "noindex,nofollow,noarchive"} {
		if got := ParseList(s).String(); got != s {
			t.Errorf("%q -> %q", s, got)
		}
	}
	if d := ParseList("noindex").Merge(ParseList("nofollow")); d.String() != "noindex,nofollow" {
		t.Errorf("merge: %v", d)
	}
}
