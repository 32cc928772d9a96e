package processing

// parseBytesPerByte is the memory parsing takes per body byte, the body included: what
// parsing allocates, measured on the costliest page shapes (parse_cost_test.go: 13 for flat
// text, 21 for paragraphs and links, 35 for a page of tiny elements), rounded up. Text,
// links and the decoded copy of a page in another charset are in it.
const parseBytesPerByte = 40

// ParseCost is what a page of size bytes takes from the process's parse budget (its body
// cap, limit, at most).
func ParseCost(size, limit int64) int64 {
	return min(max(size, 0), limit) * parseBytesPerByte
}
