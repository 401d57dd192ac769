package contract

import (
	"context"
	"encoding"
	"fmt"
	"log/slog"
	"runtime/debug"

	"github.com/hashicorp/go-plugin"
	"google.golang.org/grpc"
	grpcenc "google.golang.org/grpc/encoding"

	"toxgate/catalog/ckan"
)

// codecName is the gRPC content-subtype of the contract's messages.
const codecName = "toxgate-bin"

// maxMessage caps one gRPC message (a package_search page of 1000 datasets
// can be several megabytes).
const maxMessage = 256 << 20

const (
	serviceName    = "toxgate.plugin.Actions"
	methodDescribe = "/" + serviceName + "/Describe"
	methodCall     = "/" + serviceName + "/Call"
)

func init() { grpcenc.RegisterCodec(binaryCodec{}) }

// binaryCodec carries the messages' own binary encoding over gRPC, so no
// protobuf code generation is needed.
type binaryCodec struct{}

func (binaryCodec) Name() string { return codecName }

func (binaryCodec) Marshal(v any) ([]byte, error) {
	m, ok := v.(encoding.BinaryMarshaler)
	if !ok {
		return nil, fmt.Errorf("contract codec: cannot encode %T", v)
	}
	return m.MarshalBinary()
}

func (binaryCodec) Unmarshal(data []byte, v any) error {
	m, ok := v.(encoding.BinaryUnmarshaler)
	if !ok {
		return fmt.Errorf("contract codec: cannot decode into %T", v)
	}
	return m.UnmarshalBinary(data)
}

// newGRPCServer is the plugin's gRPC server with large message limits.
func newGRPCServer(opts []grpc.ServerOption) *grpc.Server {
	opts = append(opts, grpc.MaxRecvMsgSize(maxMessage), grpc.MaxSendMsgSize(maxMessage))
	return grpc.NewServer(opts...)
}

// GRPCDialOptions are the host's dial options matching the server's limits.
func GRPCDialOptions() []grpc.DialOption {
	return []grpc.DialOption{grpc.WithDefaultCallOptions(grpc.MaxCallRecvMsgSize(maxMessage), grpc.MaxCallSendMsgSize(maxMessage))}
}

var serviceDesc = grpc.ServiceDesc{
	ServiceName: serviceName,
	HandlerType: (*ActionPlugin)(nil),
	Methods: []grpc.MethodDesc{
		{MethodName: "Describe", Handler: handleDescribe},
		{MethodName: "Call", Handler: handleCall},
	},
	Metadata: "toxgate/plugins/contract",
}

func handleDescribe(srv any, ctx context.Context, decode func(any) error, intercept grpc.UnaryServerInterceptor) (any, error) {
	if err := decode(&Empty{}); err != nil {
		return nil, err
	}
	run := func(ctx context.Context, _ any) (any, error) { return srv.(ActionPlugin).Describe(ctx) }
	if intercept == nil {
		return run(ctx, nil)
	}
	return intercept(ctx, &Empty{}, &grpc.UnaryServerInfo{Server: srv, FullMethod: methodDescribe}, run)
}

func handleCall(srv any, ctx context.Context, decode func(any) error, intercept grpc.UnaryServerInterceptor) (any, error) {
	req := new(Request)
	if err := decode(req); err != nil {
		return nil, err
	}
	run := func(ctx context.Context, r any) (any, error) {
		return callWithDeadline(ctx, srv.(ActionPlugin), r.(*Request))
	}
	if intercept == nil {
		return run(ctx, req)
	}
	return intercept(ctx, req, &grpc.UnaryServerInfo{Server: srv, FullMethod: methodCall}, run)
}

// callWithDeadline applies the request's deadline to ctx and runs the call
// (on both transports). A panic in the call is logged with its stack
// through slog's default logger and answered with CKAN's 500 "Internal
// Server Error" for this call alone: the plugin keeps serving.
func callWithDeadline(ctx context.Context, impl ActionPlugin, req *Request) (resp *Response, err error) {
	defer func() {
		if p := recover(); p != nil {
			slog.Error("plugin call panicked", "action", req.Action, "panic", fmt.Sprint(p), "stack", string(debug.Stack()))
			failure := ckan.Failure(req.SiteURL, req.Action, ckan.Internal())
			resp, err = &Response{Status: failure.Status, ContentType: failure.ContentType, Body: failure.Body, ErrorType: ckan.TypeInternal}, nil
		}
	}()
	if !req.Deadline.IsZero() {
		var cancel context.CancelFunc
		ctx, cancel = context.WithDeadline(ctx, req.Deadline)
		defer cancel()
	}
	return impl.Call(ctx, req)
}

// GRPCServer registers the action service (plugin side) and connects
// HostUsers to the host's user directory.
func (p *Plugin) GRPCServer(b *plugin.GRPCBroker, s *grpc.Server) error {
	s.RegisterService(&serviceDesc, p.Impl)
	if p.HostUsers != nil {
		go p.HostUsers.connectGRPC(b)
	}
	return nil
}

// GRPCClient returns the host's stub and serves Users to the plugin.
func (p *Plugin) GRPCClient(_ context.Context, b *plugin.GRPCBroker, conn *grpc.ClientConn) (any, error) {
	if p.Users != nil {
		serveUsersGRPC(b, p.Users)
	}
	return &grpcClient{conn: conn}, nil
}

type grpcClient struct{ conn *grpc.ClientConn }

func (c *grpcClient) Describe(ctx context.Context) (*Manifest, error) {
	m := new(Manifest)
	if err := c.conn.Invoke(ctx, methodDescribe, &Empty{}, m, grpc.CallContentSubtype(codecName)); err != nil {
		return nil, fmt.Errorf("describe: %w", err)
	}
	return m, nil
}

func (c *grpcClient) Call(ctx context.Context, req *Request) (*Response, error) {
	if dl, ok := ctx.Deadline(); ok && req.Deadline.IsZero() {
		req.Deadline = dl
	}
	resp := new(Response)
	if err := c.conn.Invoke(ctx, methodCall, req, resp, grpc.CallContentSubtype(codecName)); err != nil {
		return nil, fmt.Errorf("call %s: %w", req.Action, err)
	}
	return resp, nil
}
