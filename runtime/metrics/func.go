package metrics

// funcMetric is a gauge or counter whose value is read when the registry
// is exposed, for values another component already keeps (the Go
// runtime, the kernel's view of the process).
type funcMetric struct {
	desc
	fn func() float64
}

func (f *funcMetric) write(b []byte) []byte {
	return appendSample(b, f.name, "", "", "", f.fn())
}

// GaugeFunc registers a gauge whose value is fn's at exposition time. fn
// runs on every scrape, so it must be cheap and safe for concurrent use. A
// second registration of name keeps the first fn.
func (r *Registry) GaugeFunc(name, help string, fn func() float64) {
	register(r, name, help, kindGauge, func(d desc) *funcMetric { return &funcMetric{desc: d, fn: fn} })
}

// CounterFunc is GaugeFunc for a value that only grows (a total).
func (r *Registry) CounterFunc(name, help string, fn func() float64) {
	register(r, name, help, kindCounter, func(d desc) *funcMetric { return &funcMetric{desc: d, fn: fn} })
}
