package module

// SaveAs asks clients to save the answer of this route as a file named base
// (plus .csv or .json): the host answers with Content-Disposition:
// attachment; filename="<base>.csv" (or .json). base must be a plain file
// name: letters, digits, '-', '_' and '.'.
func (e *Endpoint) SaveAs(base string) *Endpoint {
	e.route.Output.Filename = base
	return e
}
