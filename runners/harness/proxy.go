package harness

import (
	"errors"
	"io"
	"net"
	"sync"
)

// Proxy is a TCP proxy on 127.0.0.1 in front of one address: what a
// chaos test puts between a process and the service it talks to, to cut
// the network between them. Cut stops forwarding in both directions
// without closing anything (bytes already read are held, nothing more is
// read, a new connection is accepted and held without being dialed on),
// as a partition looks to both ends: no reset, no close, only silence;
// Resume forwards again, held bytes first. Close ends every connection.
// It is safe for concurrent use.
type Proxy struct {
	// Addr is the proxy's address (127.0.0.1:port).
	Addr string

	target string
	l      net.Listener

	mu     sync.Mutex
	cond   *sync.Cond
	cut    bool
	closed bool
	conns  map[net.Conn]struct{}
	wg     sync.WaitGroup
}

// NewProxy listens on a free loopback port and forwards each connection
// to target.
func NewProxy(target string) (*Proxy, error) {
	return NewProxyOn("127.0.0.1:0", target)
}

// NewProxyOn is NewProxy listening on addr (a 127.0.0.1 address).
func NewProxyOn(addr, target string) (*Proxy, error) {
	l, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, err
	}
	p := &Proxy{Addr: l.Addr().String(), target: target, l: l, conns: map[net.Conn]struct{}{}}
	p.cond = sync.NewCond(&p.mu)
	p.wg.Add(1)
	go p.accept()
	return p, nil
}

// Cut stops forwarding, both directions, until Resume.
func (p *Proxy) Cut() {
	p.mu.Lock()
	p.cut = true
	p.mu.Unlock()
}

// Resume forwards again.
func (p *Proxy) Resume() {
	p.mu.Lock()
	p.cut = false
	p.cond.Broadcast()
	p.mu.Unlock()
}

// Close stops listening, closes every connection and waits for the
// proxy's goroutines. It is idempotent.
func (p *Proxy) Close() {
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		return
	}
	p.closed = true
	_ = p.l.Close()
	for c := range p.conns {
		_ = c.Close()
	}
	p.cond.Broadcast()
	p.mu.Unlock()
	p.wg.Wait()
}

// pass waits while the proxy is cut; false once it is closed.
func (p *Proxy) pass() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	for p.cut && !p.closed {
		p.cond.Wait()
	}
	return !p.closed
}

// track records c so that Close closes it; false when the proxy closed.
func (p *Proxy) track(c net.Conn) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		_ = c.Close()
		return false
	}
	p.conns[c] = struct{}{}
	return true
}

func (p *Proxy) untrack(c net.Conn) {
	p.mu.Lock()
	delete(p.conns, c)
	p.mu.Unlock()
	_ = c.Close()
}

func (p *Proxy) accept() {
	defer p.wg.Done()
	for {
		c, err := p.l.Accept()
		if err != nil {
			return
		}
		if !p.track(c) {
			return
		}
		p.wg.Add(1)
		go p.serve(c)
	}
}

func (p *Proxy) serve(in net.Conn) {
	defer p.wg.Done()
	defer p.untrack(in)
	if !p.pass() { // a connection made while cut waits to be dialed on
		return
	}
	out, err := net.Dial("tcp", p.target)
	if err != nil {
		return
	}
	if !p.track(out) {
		return
	}
	defer p.untrack(out)
	var wg sync.WaitGroup
	wg.Add(2)
	go func() { defer wg.Done(); p.copy(out, in) }()
	go func() { defer wg.Done(); p.copy(in, out) }()
	wg.Wait()
}

// copy forwards src to dst while not cut; either end's close or error
// closes both (the other copy then ends).
func (p *Proxy) copy(dst, src net.Conn) {
	defer dst.Close()
	defer src.Close()
	buf := make([]byte, 32<<10)
	for {
		if !p.pass() {
			return
		}
		n, err := src.Read(buf)
		if n > 0 {
			if !p.pass() { // read just before a cut: held until Resume
				return
			}
			if _, werr := dst.Write(buf[:n]); werr != nil {
				return
			}
		}
		if err != nil {
			if errors.Is(err, io.EOF) {
				if tc, ok := dst.(*net.TCPConn); ok {
					_ = tc.CloseWrite()
				}
			}
			return
		}
	}
}
