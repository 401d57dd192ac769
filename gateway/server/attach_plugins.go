package server

import "context"

// attachPlugins connects the plugins part (not built yet: nothing to attach).
func (a *App) attachPlugins(ctx context.Context) error { return nil }
