package daemon

import (
	"log/slog"
	"math"
	"net/http"
	"net/netip"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"golang.org/x/time/rate"
)

// Bounds of the per-client rate limiter (http.rate_limit, http.rate_burst).
const (
	// rateMaxClients bounds the clients tracked at once: about 100 bytes
	// each, so under 1 MB however many addresses a flood comes from.
	rateMaxClients = 4096
	// rateIdle is how long a client must have been quiet to be forgotten
	// (longer if its bucket takes longer to refill, so that forgetting a
	// client never gives it more than the limit).
	rateIdle = 3 * time.Minute
	// rateSweepEvery is the least time between two sweeps of idle
	// clients; a sweep runs when a new client arrives, so there is no
	// goroutine to stop.
	rateSweepEvery = time.Minute
	// rateEvictSample is how many clients are looked at to pick one to
	// forget when the map is full of active ones: the least recently
	// seen of them goes (forgetting a client only refills its bucket).
	rateEvictSample = 8
	// rateLogEvery bounds the log to one line about refused requests per
	// period, however many clients are refused.
	rateLogEvery = 10 * time.Second
)

// rateLimiter is a token bucket per client: rate_limit requests a second
// on average, rate_burst at once. A client is the request's remote IP
// address (an IPv6 client by its /64 prefix, which a host or a home
// network usually owns whole); headers such as X-Forwarded-For are not
// trusted. A request counts when it arrives, so an event stream counts
// once however long it stays open.
type rateLimiter struct {
	limit    rate.Limit
	burst    int
	max      int           // most clients tracked
	idle     time.Duration // a client quiet this long is forgotten
	now      func() time.Time
	log      *slog.Logger
	rejected prometheus.Counter // may be nil

	mu        sync.Mutex
	clients   map[netip.Prefix]*rateClient
	nextSweep time.Time
	lastLog   time.Time
	unlogged  int // requests refused since the last log line
}

// rateClient is one client's bucket and when it last made a request.
type rateClient struct {
	lim  *rate.Limiter
	seen time.Time
}

// newRateLimiter returns a limiter of perSecond requests a second with
// bursts of burst (at least 1); rejected, if not nil, counts refusals.
func newRateLimiter(perSecond float64, burst int, log *slog.Logger, rejected prometheus.Counter) *rateLimiter {
	burst = max(burst, 1)
	idle := rateIdle
	if refill := time.Duration(float64(burst) / perSecond * float64(time.Second)); refill > idle {
		idle = refill
	}
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &rateLimiter{limit: rate.Limit(perSecond), burst: burst, max: rateMaxClients, idle: idle,
		now: time.Now, log: log, rejected: rejected, clients: map[netip.Prefix]*rateClient{}}
}

// clientKey is the client a remote address ("ip:port") belongs to: the
// IPv4 address, or the /64 prefix of an IPv6 one. An address that does not
// parse (not TCP) maps to the zero Prefix, one shared bucket.
func clientKey(remoteAddr string) netip.Prefix {
	ap, err := netip.ParseAddrPort(remoteAddr)
	if err != nil {
		return netip.Prefix{}
	}
	a := ap.Addr().Unmap()
	bits := 32
	if a.Is6() {
		bits = 64
	}
	p, _ := a.Prefix(bits)
	return p
}

// clientName prints a client key for the log.
func clientName(p netip.Prefix) string {
	switch {
	case !p.IsValid():
		return "unknown"
	case p.Addr().Is4():
		return p.Addr().String()
	}
	return p.String()
}

// rateDecision is the outcome of one request.
type rateDecision struct {
	ok bool
	// wait is how long until the client has a token again (when !ok).
	wait time.Duration
	// report, when above 0, asks the caller to log that many refusals.
	report int
}

// allow takes a token from the client's bucket.
func (l *rateLimiter) allow(key netip.Prefix) rateDecision {
	now := l.now()
	l.mu.Lock()
	defer l.mu.Unlock()
	c := l.clients[key]
	if c == nil {
		l.makeRoom(now)
		c = &rateClient{lim: rate.NewLimiter(l.limit, l.burst)}
		l.clients[key] = c
	}
	c.seen = now
	if c.lim.AllowN(now, 1) {
		return rateDecision{ok: true}
	}
	d := rateDecision{wait: time.Duration((1 - c.lim.TokensAt(now)) / float64(l.limit) * float64(time.Second))}
	l.unlogged++
	if now.Sub(l.lastLog) >= rateLogEvery {
		d.report, l.unlogged, l.lastLog = l.unlogged, 0, now
	}
	return d
}

// makeRoom forgets idle clients (at most once every rateSweepEvery) and,
// if the map is still full, the least recently seen of a few clients.
// The caller holds l.mu.
func (l *rateLimiter) makeRoom(now time.Time) {
	if !now.Before(l.nextSweep) {
		l.nextSweep = now.Add(rateSweepEvery)
		for k, c := range l.clients {
			if now.Sub(c.seen) >= l.idle {
				delete(l.clients, k)
			}
		}
	}
	for l.max > 0 && len(l.clients) >= l.max {
		var oldest netip.Prefix
		var seen time.Time
		n := 0
		for k, c := range l.clients {
			if n == 0 || c.seen.Before(seen) {
				oldest, seen = k, c.seen
			}
			if n++; n == rateEvictSample {
				break
			}
		}
		delete(l.clients, oldest)
	}
}

// size is the number of clients tracked.
func (l *rateLimiter) size() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.clients)
}

// retryAfter is a wait in whole seconds for Retry-After: rounded up, at
// least 1.
func retryAfter(wait time.Duration) int {
	return max(1, int(math.Ceil(wait.Seconds())))
}

// handler refuses a client's requests over the limit with 429 Too Many
// Requests and Retry-After, before next (and so before any token check)
// runs.
func (l *rateLimiter) handler(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		key := clientKey(r.RemoteAddr)
		d := l.allow(key)
		if d.ok {
			next.ServeHTTP(w, r)
			return
		}
		if l.rejected != nil {
			l.rejected.Inc()
		}
		if d.report > 0 {
			// One line per rateLogEvery at most: the client refused now,
			// and the refusals of all clients since the previous line.
			l.log.Warn("http requests refused over http.rate_limit", "client", clientName(key),
				"rate_limit", float64(l.limit), "rate_burst", l.burst, "refused_since_last_log", d.report)
		}
		secs := retryAfter(d.wait)
		h := w.Header()
		h.Set("Retry-After", strconv.Itoa(secs))
		if strings.HasPrefix(r.URL.Path, "/whip/") {
			// A publisher page on another origin must see the status and
			// when to retry (as cors does for the WHIP handlers).
			h.Set("Access-Control-Allow-Origin", "*")
			h.Set("Access-Control-Expose-Headers", "Retry-After")
		}
		httpError(w, http.StatusTooManyRequests, "too many requests from your address: the limit is %s a second (bursts of %d); retry in %d s",
			strconv.FormatFloat(float64(l.limit), 'g', -1, 64), l.burst, secs)
	})
}
