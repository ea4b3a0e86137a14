package load

// LoadResult is what a [Load] scenario measured.
type LoadResult struct {
	Name string `json:"name"`
	// Daemon is the server driven: silas or the baseline.
	Daemon Daemon `json:"daemon"`
	// Run numbers repeated runs of the scenario from 1 (0: a single run).
	Run          int     `json:"run,omitempty"`
	Customers    int     `json:"customers"`
	MessagesEach int     `json:"messages_each"`
	DelayMS      float64 `json:"model_delay_ms"`
	ThinkMS      float64 `json:"think_ms"`

	// Planned is Customers × MessagesEach; Completed the turns answered by
	// the model.
	Planned   int `json:"turns_planned"`
	Completed int `json:"turns_completed"`
	// Failed counts turns that did not complete, by kind (see the Kind
	// constants and "error:<code>").
	Failed map[string]int `json:"failed"`
	// ConnectError is the first connection failure, if any; DisconnectError
	// the first reason a connection ended under a waiting turn.
	ConnectError    string    `json:"connect_error,omitempty"`
	DisconnectError string    `json:"disconnect_error,omitempty"`
	Integrity       Integrity `json:"integrity"`
	// LimitHit says the duration limit ended the scenario early.
	LimitHit bool `json:"duration_limit_hit"`

	ConnectSeconds float64 `json:"connect_seconds"`
	WallSeconds    float64 `json:"wall_seconds"`
	TurnsPerSecond float64 `json:"turns_per_second"`
	// Latency is from sending a message to receiving its answer; Overhead is
	// Latency minus the model delay.
	Latency  Percentiles `json:"latency"`
	Overhead Percentiles `json:"overhead"`

	Server ServerUsage `json:"server"`
	Mock   MockUsage   `json:"mock"`
	Driver Usage       `json:"driver"`
	// Other is the CPU the rest of the machine used meanwhile (kernel
	// threads, other processes): noise when it is not near zero.
	Other Usage `json:"other"`
}

// FailedTotal is the number of turns that did not complete.
func (r *LoadResult) FailedTotal() int {
	n := 0
	for _, v := range r.Failed {
		n += v
	}
	return n
}

// Errors is every failure and integrity break: zero means every turn was
// answered by the model exactly once.
func (r *LoadResult) Errors() int { return r.FailedTotal() + r.Integrity.Total() }

// Usage is the CPU a process spent during the measured phase.
type Usage struct {
	CPUSeconds float64 `json:"cpu_seconds"`
	// Cores is CPUSeconds over the wall time: how many cores it kept busy.
	Cores float64 `json:"cores_busy"`
}

// ServerUsage is what the daemon (silas or the baseline) spent.
type ServerUsage struct {
	Usage
	// CPUMSPerTurn is the CPU milliseconds per completed turn.
	CPUMSPerTurn float64 `json:"cpu_ms_per_turn"`
	// PeakRSSBytes is VmHWM at the end of the load.
	PeakRSSBytes int64 `json:"peak_rss_bytes"`
	// Threads is the OS thread count at the end of the load.
	Threads int `json:"threads"`
	// StartToReadyMS is this run's start-to-ready time.
	StartToReadyMS float64 `json:"start_to_ready_ms"`
	// LogLines counts stderr lines (warnings and errors at log level warn).
	LogLines int `json:"log_lines"`
	// Profiles are the profile files requested from silas, if any;
	// MissingProfiles those it did not write.
	Profiles        []string `json:"profiles,omitempty"`
	MissingProfiles []string `json:"missing_profiles,omitempty"`
}

// MockUsage is what the mock model spent and saw.
type MockUsage struct {
	Usage
	MockStats
	// CallsPerTurn is model requests per completed turn.
	CallsPerTurn float64 `json:"calls_per_turn"`
}

// IdleResult is what an [Idle] scenario measured.
type IdleResult struct {
	Customers      int     `json:"customers"`
	Connected      int     `json:"connected"`
	ConnectFailed  int     `json:"connect_failed"`
	ConnectSeconds float64 `json:"connect_seconds"`
	// RSSBeforeBytes is silas's VmRSS before the customers connect,
	// RSSAfterBytes once every one has its session event.
	RSSBeforeBytes int64 `json:"rss_before_bytes"`
	RSSAfterBytes  int64 `json:"rss_after_bytes"`
	// RSSPerCustomerBytes is the growth divided by the customers connected.
	RSSPerCustomerBytes float64 `json:"rss_per_customer_bytes"`
	// ServerCPUSeconds is what silas spent accepting them.
	ServerCPUSeconds float64 `json:"server_cpu_seconds"`
	Threads          int     `json:"threads"`
	// ProbeMS is the latency of one turn sent while all are connected.
	ProbeMS float64 `json:"probe_turn_ms"`
	// ProbeError says why the probe turn failed, if it did.
	ProbeError string `json:"probe_error,omitempty"`
}

// StartupResult is what a [Startup] scenario measured.
type StartupResult struct {
	Runs int `json:"runs"`
	// Cold is start-to-ready on an empty data directory (first install:
	// keys, database); Warm is a restart on the same directory.
	Cold Percentiles `json:"cold"`
	Warm Percentiles `json:"warm"`
	// ColdCPUMS and WarmCPUMS are the median CPU spent until ready.
	ColdCPUMS float64 `json:"cold_cpu_ms"`
	WarmCPUMS float64 `json:"warm_cpu_ms"`
	// IdleRSSBytes is the median VmRSS one second after ready (warm runs).
	IdleRSSBytes int64 `json:"idle_rss_bytes"`
	// ReadyRSSBytes is the median VmRSS right at the ready line (warm runs).
	ReadyRSSBytes int64 `json:"ready_rss_bytes"`
}
