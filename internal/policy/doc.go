// Package policy owns a crawl's compiled policy: its recorded spec made, once per crawl and
// process, into what every stage reads — the user agent and robots.txt token, resolved headers
// and proxy, the near-duplicate detector, what it renders, whose robots.txt it overrides, the
// schedule its requests are booked on (politenessKey), which URLs it may hold and which
// redirect hops it may follow, and a URL's candidate form and priority. Admission (admit),
// fetching, rendering, processing and control are its readers; none of them builds one.
package policy
