package controlplanetest

import (
	"io"
	"net"
	"net/url"
	"sync"
	"testing"

	"k8s.io/client-go/rest"
)

// Proxy is a TCP proxy in front of an API server that a test can cut, so the
// clients behind it lose their connections and watches (a network partition)
// while the API server and other clients go on. Tests use it to create watch
// gaps; stopping the API server instead would stop every client's writes too.
type Proxy struct {
	listener net.Listener
	target   string

	mu    sync.Mutex
	cut   bool
	conns map[net.Conn]struct{}
	stall chan struct{} // non-nil while stalled; Resume closes it
	held  chan struct{} // closed when a stall first holds bytes back
}

// NewProxy starts a proxy to the API server cfg points at and returns it with
// a copy of cfg that goes through it. It closes when the test ends.
func NewProxy(t testing.TB, cfg *rest.Config) (*Proxy, *rest.Config) {
	t.Helper()
	u, err := url.Parse(cfg.Host)
	if err != nil {
		t.Fatalf("proxy: API server URL: %v", err)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("proxy: listen: %v", err)
	}
	p := &Proxy{listener: l, target: u.Host, conns: map[net.Conn]struct{}{}}
	go p.serve()
	t.Cleanup(func() {
		l.Close()
		p.Cut()
		p.Resume()
	})
	proxied := rest.CopyConfig(cfg)
	// The serving certificate is for 127.0.0.1, which the proxy's address
	// also is, so TLS verification still holds.
	proxied.Host = "https://" + l.Addr().String()
	return p, proxied
}

func (p *Proxy) serve() {
	for {
		conn, err := p.listener.Accept()
		if err != nil {
			return
		}
		go p.forward(conn)
	}
}

func (p *Proxy) forward(client net.Conn) {
	p.mu.Lock()
	if p.cut {
		p.mu.Unlock()
		client.Close()
		return
	}
	p.mu.Unlock()
	server, err := net.Dial("tcp", p.target)
	if err != nil {
		client.Close()
		return
	}
	p.mu.Lock()
	if p.cut {
		p.mu.Unlock()
		client.Close()
		server.Close()
		return
	}
	p.conns[client] = struct{}{}
	p.conns[server] = struct{}{}
	p.mu.Unlock()
	done := make(chan struct{}, 2)
	pipe := func(dst, src net.Conn) {
		_, _ = io.Copy(dst, stallingReader{p, src})
		done <- struct{}{}
	}
	go pipe(server, client)
	go pipe(client, server)
	<-done
	client.Close()
	server.Close()
	p.mu.Lock()
	delete(p.conns, client)
	delete(p.conns, server)
	p.mu.Unlock()
}

// Cut closes every connection through the proxy and refuses new ones until
// Restore.
func (p *Proxy) Cut() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.cut = true
	for c := range p.conns {
		c.Close()
	}
}

// Stall holds back every byte through the proxy, in both directions, until
// Resume: connections stay open, and requests in flight or sent meanwhile
// get no answer (a hung API server, or a network that drops packets). The
// returned channel is closed once the stall has held back some bytes, that
// is once a request is stuck.
func (p *Proxy) Stall() <-chan struct{} {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.stall == nil {
		p.stall, p.held = make(chan struct{}), make(chan struct{})
	}
	return p.held
}

// Resume forwards what Stall held back, and lets bytes through again.
func (p *Proxy) Resume() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.stall != nil {
		close(p.stall)
		p.stall, p.held = nil, nil
	}
}

// stallingReader waits, after each read, while the proxy is stalled.
type stallingReader struct {
	p   *Proxy
	src net.Conn
}

func (r stallingReader) Read(b []byte) (int, error) {
	n, err := r.src.Read(b)
	if n > 0 {
		r.p.mu.Lock()
		stall, held := r.p.stall, r.p.held
		if stall != nil {
			select {
			case <-held:
			default:
				close(held)
			}
		}
		r.p.mu.Unlock()
		if stall != nil {
			<-stall
		}
	}
	return n, err
}

// Restore lets connections through again.
func (p *Proxy) Restore() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.cut = false
}
