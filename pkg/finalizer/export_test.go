package finalizer

// WithPageSize returns opts listing pageSize objects per request.
func WithPageSize(opts Options, pageSize int64) Options {
	opts.pageSize = pageSize
	return opts
}
