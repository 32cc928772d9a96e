package config

import (
	"errors"
	"fmt"
	"net/netip"
	"strconv"
	"strings"
	"time"

	"github.com/trawlerdev/trawler/internal/crawl"
	"github.com/trawlerdev/trawler/internal/listen"
)

// The parsers settings.go names: each checks one kind of value and sets its field.

func nonNegativeFloat(dst *float64, v string) error {
	f, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
	if err != nil || f < 0 || f != f {
		return fmt.Errorf("want a number ≥ 0")
	}
	*dst = f
	return nil
}

// listenAddr is host:port with port 0 allowed (any free port), or "off".
func listenAddr(dst *string, v string) error {
	if v == "off" {
		*dst = ""
		return nil
	}
	if _, _, _, err := listen.Parse(v); err != nil {
		return err
	}
	*dst = v
	return nil
}

func nonEmpty(dst *string, v string) error {
	if strings.TrimSpace(v) == "" {
		return fmt.Errorf("must not be empty")
	}
	*dst = v
	return nil
}

func hostPort(dst *string, v string) error {
	host, port, ok := strings.Cut(v, ":")
	if !ok || host == "" || strings.Contains(v, "/") {
		return fmt.Errorf("want host:port")
	}
	if n, err := strconv.Atoi(port); err != nil || n < 1 || n > 65535 {
		return fmt.Errorf("port %q is not a number from 1 to 65535", port)
	}
	*dst = v
	return nil
}

// hostPorts reads one host:port or a comma-separated list of them (the nodes of a cluster,
// any of which serves the whole service).
func hostPorts(dst *string, v string) error {
	for _, a := range strings.Split(v, ",") {
		var one string
		if err := hostPort(&one, a); err != nil {
			return fmt.Errorf("%q: %w (or a comma-separated list of host:port)", a, err)
		}
	}
	*dst = v
	return nil
}

func prefixed(dst *string, v string, prefixes ...string) error {
	for _, p := range prefixes {
		if strings.HasPrefix(v, p) {
			*dst = v
			return nil
		}
	}
	return fmt.Errorf("must start with %s", strings.Join(prefixes, " or "))
}

func bucketName(dst *string, v string) error {
	if len(v) < 3 || len(v) > 63 || strings.ToLower(v) != v || strings.ContainsAny(v, "_/ ") {
		return fmt.Errorf("want an S3 bucket name: 3-63 lower-case letters, digits, dots or hyphens")
	}
	*dst = v
	return nil
}

func boolean(dst *bool, v string) error {
	b, err := strconv.ParseBool(v)
	if err != nil {
		return fmt.Errorf("want true or false")
	}
	*dst = b
	return nil
}

func positiveInt(dst *int, v string) error {
	n, err := strconv.Atoi(v)
	if err != nil || n < 1 {
		return fmt.Errorf("want a whole number ≥ 1")
	}
	*dst = n
	return nil
}

// byteSize reads a count of bytes, as a whole number or with a unit (KiB, MiB, GiB); 0 is
// allowed, for "no bound".
func byteSize(dst *int64, v string) error {
	num, mult := strings.TrimSpace(v), int64(1)
	for _, u := range []struct {
		suffix string
		mult   int64
	}{{"KiB", 1 << 10}, {"MiB", 1 << 20}, {"GiB", 1 << 30}} {
		if rest, ok := strings.CutSuffix(num, u.suffix); ok {
			num, mult = strings.TrimSpace(rest), u.mult
			break
		}
	}
	n, err := strconv.ParseInt(num, 10, 64)
	if err != nil || n < 0 || n > (1<<50)/mult {
		return fmt.Errorf("want a size in bytes such as 536870912 or 512MiB (0: no bound)")
	}
	*dst = n * mult
	return nil
}

func duration(dst *time.Duration, v string) error {
	d, err := time.ParseDuration(v)
	if err != nil || d < 0 {
		return fmt.Errorf("want a duration such as 30s or 2m")
	}
	*dst = d
	return nil
}

// localLease is a duration of at most a third of a host's workflow task timeout
// (crawl.HostTaskTimeout): a local lease must end inside its workflow task.
func localLease(dst *time.Duration, v string) error {
	if err := duration(dst, v); err != nil {
		return err
	}
	if most := crawl.HostTaskTimeout / 3; *dst > most {
		return fmt.Errorf("at most %s: a local lease must end inside its workflow task", most)
	}
	return nil
}

func list(v string) []string {
	var out []string
	for _, p := range strings.Split(v, ",") {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}

func ports(dst *[]int, v string) error {
	var out []int
	for _, p := range strings.Split(v, ",") {
		p = strings.TrimSpace(p)
		if p == "" {
			continue
		}
		n, err := strconv.Atoi(p)
		if err != nil || n < 1 || n > 65535 {
			return fmt.Errorf("%q is not a port number (1-65535)", p)
		}
		out = append(out, n)
	}
	if len(out) == 0 {
		return errors.New("name at least one port, such as 80,443")
	}
	*dst = out
	return nil
}

func prefixes(dst *[]netip.Prefix, v string) error {
	var out []netip.Prefix
	for _, p := range strings.Split(v, ",") {
		p = strings.TrimSpace(p)
		if p == "" {
			continue
		}
		pf, err := netip.ParsePrefix(p)
		if err != nil {
			return fmt.Errorf("%q is not a CIDR such as 10.0.0.0/8", p)
		}
		out = append(out, pf.Masked())
	}
	*dst = out
	return nil
}

func oneOf(dst *string, v string, allowed ...string) error {
	for _, a := range allowed {
		if v == a {
			*dst = v
			return nil
		}
	}
	return fmt.Errorf("want one of %s", strings.Join(allowed, ", "))
}

// retention is 0 (keep every crawl) or at least an hour: a crawl's last writes land minutes
// after it ends.
func retention(dst *time.Duration, v string) error {
	if err := duration(dst, v); err != nil {
		return err
	}
	if *dst > 0 && *dst < time.Hour {
		return errors.New("at least 1h (or 0: keep every crawl): a crawl's last writes land minutes after it ends")
	}
	return nil
}

// payloadKey checks a payload key list as the codec will read it (codec.New).
func payloadKey(dst *string, v string) error {
	if v != "" {
		for _, k := range strings.Split(v, ",") {
			if len(strings.TrimSpace(k)) < 16 {
				return fmt.Errorf("each key must be at least 16 characters (openssl rand -base64 32)")
			}
		}
	}
	*dst = v
	return nil
}
