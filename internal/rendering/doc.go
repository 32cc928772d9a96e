// Package rendering is the render stage: a crawl's render runs claim the pages its spec asks to
// render, render each in headless Chromium from its capture, store the DOM, and admit the
// DOM's links through the one admission path. Politeness holds while rendering: a subresource
// of the page's own host and scheme that its robots.txt allows is fetched on a start booked on
// the host's schedule (and its address's), paced by the one rule (pacing.Slowest); every other
// request is blocked. It works over the narrow Store and Browser interfaces (a fake of each in
// its tests) and reports through Hooks; activities.Renderer is its Temporal-facing side.
package rendering
