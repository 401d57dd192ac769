package server

import "context"

// attachModules connects the modules part (not built yet: nothing to attach).
func (a *App) attachModules(ctx context.Context) error { return nil }
