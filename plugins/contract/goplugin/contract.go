package goplugin

import "toxgate/plugins/contract"

// The contract's types under the names the transports' files use.
type (
	// ActionPlugin is contract.ActionPlugin.
	ActionPlugin = contract.ActionPlugin
	// Manifest is contract.Manifest.
	Manifest = contract.Manifest
	// Request is contract.Request.
	Request = contract.Request
	// Response is contract.Response.
	Response = contract.Response
	// Empty is contract.Empty.
	Empty = contract.Empty
	// Users is contract.Users.
	Users = contract.Users
	// UserInfo is contract.UserInfo.
	UserInfo = contract.UserInfo
)
