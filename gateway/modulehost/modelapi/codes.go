package modelapi

// Error codes of the model API. Every error body is httpcore's error shape,
// {"error":{"code":CODE,"message":MESSAGE,"field":FIELD,"request_id":ID}}
// (field and request_id optional), written by httpcore.WriteError.
const (
	CodeInvalidJSON          = "invalid_json"           // 400
	CodeNotFound             = "not_found"              // 404: unknown model, or the model does not know the input
	CodeMethodNotAllowed     = "method_not_allowed"     // 405
	CodePayloadTooLarge      = "payload_too_large"      // 413
	CodeUnsupportedMediaType = "unsupported_media_type" // 415
	CodeNotAcceptable        = "not_acceptable"         // 406: Accept allows only CSV and the answer has no table or time series
	CodeInvalidInput         = "invalid_input"          // 422
	CodeModelError           = "model_error"            // 500: the model reported an internal error
	CodeModuleCrashed        = "module_crashed"         // 500: trap or panic; the instance was discarded
	CodeOutOfMemory          = "out_of_memory"          // 500: memory cap reached; the instance was discarded
	CodeOutputTooLarge       = "output_too_large"       // 500
	CodeBadModuleOutput      = "bad_module_output"      // 500: the module broke the ABI
	CodeOverloaded           = "overloaded"             // 503: no instance free before the deadline
	CodeTooManyRequests      = "too_many_requests"      // 429: past the model's queue or the caller's share of it (Retry-After)
	CodeUnavailable          = "unavailable"            // 503
	CodeTimeout              = "timeout"                // 504: the call passed its deadline
	CodeModuleRejected       = "module_rejected"        // 422 on upload: the module was refused
)
