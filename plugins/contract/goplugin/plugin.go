// Package goplugin is the go-plugin glue of the plugin contract
// (plugins/contract): the handshake, the action service over net/rpc and
// gRPC, and the gateway's user directory served to a plugin over
// go-plugin's broker. A plugin program calls Serve; the host passes
// Handshake, ClientPlugins and Protocols to go-plugin's client.
package goplugin

import (
	"os"

	"github.com/hashicorp/go-plugin"

	"toxgate/plugins/contract"
)

// PluginKey is the name under which the action service is dispensed.
const PluginKey = "actions"

// Handshake guards against running a plugin binary by accident and pins the
// protocol version. Bump ProtocolVersion on any incompatible message change.
var Handshake = plugin.HandshakeConfig{
	ProtocolVersion:  2,
	MagicCookieKey:   "TOXGATE_PLUGIN_COOKIE",
	MagicCookieValue: "b7d2f0e4-toxgate-action-plugin-v1",
}

// Serve runs impl as a plugin process, over the transport named by
// contract.EnvTransport (net/rpc unless it says "grpc"). It returns when the host ends the plugin.
func Serve(impl ActionPlugin, users *HostUsers) {
	cfg := &plugin.ServeConfig{
		HandshakeConfig: Handshake,
		Plugins:         plugin.PluginSet{PluginKey: &Plugin{Impl: impl, HostUsers: users}},
	}
	if os.Getenv(contract.EnvTransport) == contract.TransportGRPC {
		cfg.GRPCServer = newGRPCServer
	}
	plugin.Serve(cfg)
}

// ClientPlugins is the plugin set a host passes in plugin.ClientConfig;
// users (nil: none) is the user directory the host serves to its plugins.
func ClientPlugins(users Users) plugin.PluginSet {
	return plugin.PluginSet{PluginKey: &Plugin{Users: users}}
}

// Protocols is the AllowedProtocols value for a transport name.
func Protocols(transport string) []plugin.Protocol {
	if transport == contract.TransportGRPC {
		return []plugin.Protocol{plugin.ProtocolGRPC}
	}
	return []plugin.Protocol{plugin.ProtocolNetRPC}
}

// Plugin is the go-plugin glue for both transports: Impl and HostUsers on
// the plugin side, Users on the host side.
type Plugin struct {
	// Impl is the served implementation (plugin side only).
	Impl ActionPlugin
	// HostUsers, when set, is connected to the host's user directory
	// (plugin side only).
	HostUsers *HostUsers
	// Users is the user directory the host serves to the plugin over the
	// broker (host side only; nil: none).
	Users Users
}

var (
	_ plugin.Plugin     = (*Plugin)(nil)
	_ plugin.GRPCPlugin = (*Plugin)(nil)
)
