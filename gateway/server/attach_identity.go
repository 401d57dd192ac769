package server

import "context"

// attachIdentity connects the identity part (not built yet: nothing to attach).
func (a *App) attachIdentity(ctx context.Context) error { return nil }
