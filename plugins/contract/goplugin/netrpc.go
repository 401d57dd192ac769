package goplugin

import (
	"context"
	"fmt"
	"net/rpc"

	"github.com/hashicorp/go-plugin"
)

// Server is the net/rpc receiver (plugin side). Its methods follow net/rpc's
// rules and are not meant to be called directly.
type Server struct{ impl ActionPlugin }

// Describe serves ActionPlugin.Describe.
func (s *Server) Describe(_ *Empty, m *Manifest) error {
	out, err := s.impl.Describe(context.Background())
	if err != nil {
		return err
	}
	*m = *out
	return nil
}

// Call serves ActionPlugin.Call.
func (s *Server) Call(req *Request, resp *Response) error {
	out, err := callWithDeadline(context.Background(), s.impl, req)
	if err != nil {
		return err
	}
	*resp = *out
	return nil
}

// Server returns the net/rpc receiver (plugin side).
// It connects HostUsers to the host's user directory.
func (p *Plugin) Server(b *plugin.MuxBroker) (any, error) {
	if p.HostUsers != nil {
		go p.HostUsers.connectNetRPC(b)
	}
	return &Server{impl: p.Impl}, nil
}

// Client returns the host's net/rpc stub and serves Users to the plugin.
func (p *Plugin) Client(b *plugin.MuxBroker, c *rpc.Client) (any, error) {
	if p.Users != nil {
		serveUsersNetRPC(b, p.Users)
	}
	return &rpcClient{c: c}, nil
}

type rpcClient struct{ c *rpc.Client }

func (c *rpcClient) Describe(ctx context.Context) (*Manifest, error) {
	m := new(Manifest)
	if err := c.do(ctx, "Plugin.Describe", &Empty{}, m); err != nil {
		return nil, fmt.Errorf("describe: %w", err)
	}
	return m, nil
}

func (c *rpcClient) Call(ctx context.Context, req *Request) (*Response, error) {
	if dl, ok := ctx.Deadline(); ok && req.Deadline.IsZero() {
		req.Deadline = dl
	}
	resp := new(Response)
	if err := c.do(ctx, "Plugin.Call", req, resp); err != nil {
		return nil, fmt.Errorf("call %s: %w", req.Action, err)
	}
	return resp, nil
}

// do runs one net/rpc call, giving up when ctx ends (the call is abandoned).
func (c *rpcClient) do(ctx context.Context, method string, args, reply any) error {
	call := c.c.Go(method, args, reply, make(chan *rpc.Call, 1))
	select {
	case <-call.Done:
		return call.Error
	case <-ctx.Done():
		return ctx.Err()
	}
}
