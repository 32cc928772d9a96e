package crawl

import (
	"strings"
	"testing"
)

// Outputs are checked whole at the start, each error naming its output: a webhook's key is
// named, never given; a URL carries no credentials; names, sizes and paths are bounded.
func TestOutputsAreValidated(t *testing.T) {
	hook := func(url, secret string) Output {
		return Output{Name: "h", Webhook: &Webhook{URL: url, Secret: secret}}
	}
	for _, c := range []struct {
		outs []Output
		want string // "" : valid
	}{
		{[]Output{hook("https://example.net/in", "secret:env:HOOK_KEY"), {Name: "lake", Dataset: &Dataset{}}}, ""},
		{[]Output{hook("https://example.net/in", "s3cret")}, "never the key itself"},
		{[]Output{hook("https://example.net/in", "")}, "name the signing key"},
		{[]Output{hook("https://user:pw@example.net/in", "secret:env:K")}, "carries credentials"},
		{[]Output{hook("ftp://example.net/", "secret:env:K")}, "not an http(s) URL"},
		{[]Output{hook("secret:env:HOOK_URL", "secret:env:K")}, ""},
		{[]Output{hook("secret:HOOK_URL", "secret:env:K")}, "webhook.url"},
		{[]Output{{Name: "a", Dataset: &Dataset{}}, {Name: "b", Dataset: &Dataset{Prefix: "datasets/"}}}, "writes there too"},
		{[]Output{{Name: "x"}}, "give one of webhook and dataset"},
		{[]Output{{Name: "x", Dataset: &Dataset{}, Webhook: &Webhook{}}}, "give one of webhook and dataset"},
		{[]Output{{Name: "Bad Name", Dataset: &Dataset{}}}, "outputs[0] (Bad Name): name"},
		{[]Output{{Name: "a", Dataset: &Dataset{}}, {Name: "a", Dataset: &Dataset{}}}, "another output has it"},
		{[]Output{{Name: "a", Dataset: &Dataset{Prefix: "x/../y"}}}, "dataset.prefix"},
		{[]Output{{Name: "a", Dataset: &Dataset{}, BatchSize: 5000}}, "batchSize"},
		{[]Output{{Name: "a", Dataset: &Dataset{}, Every: Duration(1)}}, "every"},
		{[]Output{{Name: "a", Dataset: &Dataset{}, MaxAttempts: 1000}}, "maxAttempts"},
	} {
		s := Spec{Seeds: []string{"http://a.test/"}, Outputs: c.outs}.WithDefaults()
		err := s.Validate()
		switch {
		case c.want == "" && err != nil:
			t.Errorf("%+v: %v", c.outs, err)
		case c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)):
			t.Errorf("%+v: %v, want %q", c.outs, err, c.want)
		}
	}
	// An unknown key inside an output is named, as the spec's are.
	var s Spec
	if err := s.DecodeJSON([]byte(`{"seeds":["http://a.test/"],"outputs":[{"name":"h","webhok":{}}]}`)); err == nil && len(s.UnknownFields()) == 0 {
		t.Error("outputs[0].webhok was not named as unknown")
	}
}
