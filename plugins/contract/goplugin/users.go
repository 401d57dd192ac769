package goplugin

import (
	"context"
	"encoding/json"
	"fmt"
	"net/rpc"
	"sync"
	"time"

	"github.com/hashicorp/go-plugin"
	"google.golang.org/grpc"
)

// usersBrokerID is the go-plugin broker stream on which the host serves its
// user directory to the plugin (both transports).
const usersBrokerID = 0x7573 // "us"

// usersConnectWait bounds how long a plugin waits for the host's user
// directory to answer its connection (go-plugin's broker gives up after 5 s).
const usersConnectWait = 30 * time.Second

// UsersArgs and UsersReply are the user lookup's messages. They encode as
// JSON for gRPC (through the contract's binary codec) and as gob for net/rpc.
type UsersArgs struct{ Refs []string }

type UsersReply struct{ Users []UserInfo }

// MarshalBinary encodes the lookup request.
func (a *UsersArgs) MarshalBinary() ([]byte, error) { return json.Marshal(a) }

// UnmarshalBinary decodes the lookup request.
func (a *UsersArgs) UnmarshalBinary(b []byte) error { return json.Unmarshal(b, a) }

// MarshalBinary encodes the lookup reply.
func (r *UsersReply) MarshalBinary() ([]byte, error) { return json.Marshal(r) }

// UnmarshalBinary decodes the lookup reply.
func (r *UsersReply) UnmarshalBinary(b []byte) error { return json.Unmarshal(b, r) }

// UsersServer serves the host's user directory to a plugin over net/rpc. Its
// methods follow net/rpc's rules and are not meant to be called directly.
type UsersServer struct{ dir Users }

// LookupUsers serves Users.LookupUsers.
func (s *UsersServer) LookupUsers(args *UsersArgs, reply *UsersReply) error {
	ctx, cancel := context.WithTimeout(context.Background(), usersConnectWait)
	defer cancel()
	users, err := s.dir.LookupUsers(ctx, args.Refs)
	reply.Users = users
	return err
}

// serveUsersNetRPC serves dir on the broker's users stream (host side).
func serveUsersNetRPC(b *plugin.MuxBroker, dir Users) {
	go b.AcceptAndServe(usersBrokerID, &UsersServer{dir: dir})
}

const (
	usersServiceName  = "toxgate.plugin.Users"
	methodLookupUsers = "/" + usersServiceName + "/LookupUsers"
)

var usersServiceDesc = grpc.ServiceDesc{
	ServiceName: usersServiceName,
	HandlerType: (*Users)(nil),
	Methods:     []grpc.MethodDesc{{MethodName: "LookupUsers", Handler: handleLookupUsers}},
	Metadata:    "toxgate/plugins/contract",
}

func handleLookupUsers(srv any, ctx context.Context, decode func(any) error, intercept grpc.UnaryServerInterceptor) (any, error) {
	args := new(UsersArgs)
	if err := decode(args); err != nil {
		return nil, err
	}
	run := func(ctx context.Context, a any) (any, error) {
		users, err := srv.(Users).LookupUsers(ctx, a.(*UsersArgs).Refs)
		return &UsersReply{Users: users}, err
	}
	if intercept == nil {
		return run(ctx, args)
	}
	return intercept(ctx, args, &grpc.UnaryServerInfo{Server: srv, FullMethod: methodLookupUsers}, run)
}

// serveUsersGRPC serves dir on the broker's users stream (host side).
func serveUsersGRPC(b *plugin.GRPCBroker, dir Users) {
	go b.AcceptAndServe(usersBrokerID, func(opts []grpc.ServerOption) *grpc.Server {
		s := newGRPCServer(opts)
		s.RegisterService(&usersServiceDesc, dir)
		return s
	})
}

// HostUsers is the gateway's user directory as a plugin sees it: lookups
// travel back to the host over go-plugin's broker, so the plugin reads no
// users collection itself. Pass it to Serve; it connects when the host
// takes the plugin into use.
type HostUsers struct {
	ready chan struct{}
	once  sync.Once
	// set before ready is closed
	lookup func(ctx context.Context, refs []string) ([]UserInfo, error)
	err    error
}

// NewHostUsers makes the directory; Serve connects it.
func NewHostUsers() *HostUsers { return &HostUsers{ready: make(chan struct{})} }

// LookupUsers asks the host (Users).
func (h *HostUsers) LookupUsers(ctx context.Context, refs []string) ([]UserInfo, error) {
	if len(refs) == 0 {
		return nil, nil
	}
	select {
	case <-h.ready:
	case <-ctx.Done():
		return nil, fmt.Errorf("the gateway's user directory: %w", ctx.Err())
	}
	if h.err != nil {
		return nil, h.err
	}
	return h.lookup(ctx, refs)
}

// done publishes the connection's outcome once.
func (h *HostUsers) done(lookup func(context.Context, []string) ([]UserInfo, error), err error) {
	h.once.Do(func() {
		h.lookup, h.err = lookup, err
		close(h.ready)
	})
}

// connectNetRPC dials the host's users stream (plugin side).
func (h *HostUsers) connectNetRPC(b *plugin.MuxBroker) {
	conn, err := b.Dial(usersBrokerID)
	if err != nil {
		h.done(nil, fmt.Errorf("the gateway's user directory: %w", err))
		return
	}
	c := rpc.NewClient(conn)
	h.done(func(ctx context.Context, refs []string) ([]UserInfo, error) {
		reply := new(UsersReply)
		call := c.Go("Plugin.LookupUsers", &UsersArgs{Refs: refs}, reply, make(chan *rpc.Call, 1))
		select {
		case <-call.Done:
			if call.Error != nil {
				return nil, fmt.Errorf("the gateway's user directory: %w", call.Error)
			}
			return reply.Users, nil
		case <-ctx.Done():
			return nil, fmt.Errorf("the gateway's user directory: %w", ctx.Err())
		}
	}, nil)
}

// connectGRPC dials the host's users service (plugin side). The host
// offers it when it takes the plugin into use, which may come after the
// plugin starts serving, so the dial is retried until usersConnectWait.
func (h *HostUsers) connectGRPC(b *plugin.GRPCBroker) {
	deadline := time.Now().Add(usersConnectWait)
	var conn *grpc.ClientConn
	var err error
	for {
		if conn, err = b.DialWithOptions(usersBrokerID, GRPCDialOptions()...); err == nil || time.Now().After(deadline) {
			break
		}
	}
	if err != nil {
		h.done(nil, fmt.Errorf("the gateway's user directory: %w", err))
		return
	}
	h.done(func(ctx context.Context, refs []string) ([]UserInfo, error) {
		reply := new(UsersReply)
		if err := conn.Invoke(ctx, methodLookupUsers, &UsersArgs{Refs: refs}, reply, grpc.CallContentSubtype(codecName)); err != nil {
			return nil, fmt.Errorf("the gateway's user directory: %w", err)
		}
		return reply.Users, nil
	}, nil)
}
