package modulehost

// IsModelPath reports whether path is a route of a loaded module, so that
// the gateway can authorize the caller before ServeModel runs the model.
func (h *Host) IsModelPath(path []byte) bool {
	_, ok := h.reg.Load().routes[string(path)]
	return ok
}
