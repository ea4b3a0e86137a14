package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"time"

	"github.com/rs/zerolog"

	"github.com/silas-ai/silas/actors"
	"github.com/silas-ai/silas/channels/web"
	"github.com/silas-ai/silas/config"
	"github.com/silas-ai/silas/messages"
	"github.com/silas-ai/silas/ownerapi"
	"github.com/silas-ai/silas/runtime/approval"
	"github.com/silas-ai/silas/runtime/keys"
	"github.com/silas-ai/silas/runtime/llm"
	"github.com/silas-ai/silas/runtime/metrics"
	"github.com/silas-ai/silas/runtime/personality"
	"github.com/silas-ai/silas/runtime/session"
	"github.com/silas-ai/silas/runtime/verify"
	"github.com/silas-ai/silas/sandbox"
	"github.com/silas-ai/silas/sandbox/backends"
	"github.com/silas-ai/silas/sandbox/executor"
)

func runServe(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("serve", "Run the Silas daemon until SIGINT or SIGTERM.", stderr)
	var c common
	c.register(fs)
	host := fs.String("host", "", "address to bind (overrides silas.channels.web.host)")
	port := fs.Int("port", 0, "port to listen on (overrides silas.channels.web.port)")
	logFormat := fs.String("log-format", "", "json or console (overrides silas.log.format)")
	var prof profiling
	prof.register(fs)
	if err := fs.Parse(args); err != nil {
		return err
	}
	overrides := map[string]any{}
	if *host != "" {
		overrides["silas.channels.web.host"] = *host
	}
	if *port != 0 {
		overrides["silas.channels.web.port"] = *port
	}
	if *logFormat != "" {
		overrides["silas.log.format"] = *logFormat
	}
	cfg, err := c.load(overrides)
	if err != nil {
		return err
	}
	log, err := newLogger(cfg.Log.Format, cfg.Log.Level, stderr)
	if err != nil {
		return err
	}
	stop, err := prof.start()
	if err != nil {
		return err
	}
	serveErr := serve(ctx, cfg, log, stdout, prof.pprof)
	return errors.Join(serveErr, stop())
}

// serve runs the daemon with cfg until ctx ends.
func serve(ctx context.Context, cfg *config.Config, log zerolog.Logger, stdout io.Writer, pprof bool) error {
	started := time.Now()
	defer applyProcess(cfg.Process, log)()
	d, err := startDaemon(ctx, cfg, log, pprof)
	if err != nil {
		return err
	}
	log.Info().Str("addr", d.Addr()).Dur("startup", time.Since(started)).
		Int64("recovered_turns", d.sys.Pending()).Msg("silas ready")
	if addr := d.Addr(); addr != "" {
		fmt.Fprintf(stdout, "silas is ready on http://%s (owner token: run `silas token`)\n", addr)
	} else {
		fmt.Fprintln(stdout, "silas is ready, without its web channel (silas.channels.web.enabled: false)")
	}

	<-ctx.Done()
	log.Info().Msg("shutting down: finishing turns in flight")
	grace, cancel := context.WithTimeout(context.Background(), cfg.Backpressure.ShutdownGrace())
	defer cancel()
	err = d.Stop(grace)
	log.Info().Msg("stopped")
	return err
}

// daemon is a running Silas: database, actors and web channel.
type daemon struct {
	in  *installation
	sys *actors.System
	srv *web.Server
	now func() time.Time // the actors' clock; nil is the wall clock

	sandbox backends.Choice // where agent code runs, or why it may not
	skills  *skillSnapshots // the skills plans may use

	devices *ownerapi.DeviceRegistry // active owner device keys
	secrets *keys.Vault              // secure-input requests and values

	tg *telegramChannel // the Telegram channel; nil when it is off

	pushKey string // the VAPID public key the app subscribes with (push.go)
}

// startDaemon installs what is missing, recovers journaled work, starts the
// actors and opens the web channel; with pprof it also serves /debug/pprof/
// (owner or metrics token).
func startDaemon(ctx context.Context, cfg *config.Config, log zerolog.Logger, pprof bool) (*daemon, error) {
	return startDaemonWith(ctx, cfg, log, daemonOptions{pprof: pprof})
}

// daemonOptions are what serve's flags and tests change about a daemon
// beyond its configuration.
type daemonOptions struct {
	// pprof serves /debug/pprof/ (owner or metrics token).
	pprof bool
	// now is the actors' clock; nil is the wall clock. Tests of expiries
	// pass a clock they advance.
	now func() time.Time
	// sandboxProbes replaces the probes of sandbox backends; tests use it
	// to stand for a host without isolation.
	sandboxProbes map[string]backends.Prober
	// telegramPacing is the Telegram outbox's least time between two
	// messages to one chat; 0 is Telegram's limit (1 s). Tests shorten it.
	telegramPacing time.Duration
}

// startDaemonWith is startDaemon with options.
func startDaemonWith(ctx context.Context, cfg *config.Config, log zerolog.Logger, o daemonOptions) (*daemon, error) {
	in, err := install(ctx, cfg, log)
	if err != nil {
		return nil, err
	}
	d := &daemon{in: in, now: o.now}
	if err := d.start(ctx, cfg, log, o); err != nil {
		in.db.Close()
		return nil, err
	}
	return d, nil
}

func (d *daemon) start(ctx context.Context, cfg *config.Config, log zerolog.Logger, o daemonOptions) error {
	providers := newProviders(cfg)
	models, err := newRouter(cfg, providers, log)
	if err != nil {
		return err
	}
	d.sandbox = chooseSandbox(ctx, cfg, o.sandboxProbes, log)
	// Script gates run in a sandbox of their own root, outside the script
	// directory (silas.gates.script_dir) that every script sees.
	scripts, err := d.sandbox.Manager(cfg.DataPath("sandbox", "gates"))
	if err != nil {
		return fmt.Errorf("script gate sandbox under %s: %w", cfg.DataPath("sandbox", "gates"), err)
	}
	gateRunner, systemGates, err := newGates(cfg, providers, scripts)
	if err != nil {
		return err
	}
	persona, err := personality.New(cfg.Personality)
	if err != nil {
		return fmt.Errorf("silas.personality: %w", err)
	}
	minter, err := session.NewMinter(d.in.sessionSecret)
	if err != nil {
		return err
	}
	exec, err := newExecution(cfg, d.in, d.sandbox, log)
	if err != nil {
		return err
	}
	if err := bootSkills(ctx, cfg, d.in.db, log); err != nil {
		return err
	}
	if d.skills, err = newSkillSnapshots(ctx, cfg.SkillsDir, d.in.db, log); err != nil {
		return fmt.Errorf("skills: %w", err)
	}
	var goal *messages.WorkItem
	if cfg.ActiveGoal != "" {
		if goal, err = actors.ReadGoal(cfg.ActiveGoal); err != nil {
			return err
		}
	}
	if d.devices, err = ownerapi.NewDeviceRegistry(ctx, d.in.db, log); err != nil {
		return err
	}
	d.secrets = keys.NewVault(d.in.db, d.in.keystore)
	installer, err := skillInstallerOptions(cfg, d.skills, d.sandbox)
	if err != nil {
		return err
	}
	notifier, err := d.pushNotifier(log)
	if err != nil {
		return err
	}
	reg := metrics.NewRegistry()
	metrics.RegisterProcess(reg)
	d.sys, err = actors.Start(ctx, actors.Deps{
		Goal: goal, Now: d.now, Embedder: newEmbedder(cfg), Notifier: notifier,
		Approval: exec.approval, Sandbox: exec.sandbox, Executors: exec.executors, Verifier: exec.verifier, SkillInstaller: installer, Vault: d.secrets,
		SandboxStatus: messages.SandboxStatus{Backend: d.sandbox.Backend, Isolated: d.sandbox.Isolated, Problem: d.sandbox.Problem},
		Skills:        d.skills.Snapshot,
		Config:        cfg, DB: d.in.db, Models: models,
		VerifyOwnerSignature: ownerOrDevice(d.in.keys.VerifyOwnerSignature, d.devices),
		OwnerToken:           d.in.ownerToken,
		Sessions:             minter,
		Gates:                gateRunner,
		SystemGates:          systemGates,
		Persona:              persona,
		PersonaStore:         d.in.db.Persona(),
		Metrics:              reg,
		Log:                  log,
	})
	if err != nil {
		return fmt.Errorf("start actors: %w", err)
	}
	if cfg.Channels.Telegram.Enabled {
		if d.tg, err = newTelegram(ctx, cfg, d, log, o); err != nil {
			_ = d.sys.Stop(context.Background())
			return err
		}
	}
	if !cfg.Channels.Web.Enabled {
		log.Warn().Msg("web channel disabled (silas.channels.web.enabled: false): no HTTP listener, so no web app, owner API, /health or `silas chat`")
		return d.runTelegram(ctx)
	}
	api, err := d.ownerRoutes(cfg, minter)
	if err != nil {
		_ = d.sys.Stop(context.Background())
		return err
	}
	extra := api.Routes()
	maps.Copy(extra, d.telegramRoutes(cfg, api, log))
	w := cfg.Channels.Web
	d.srv, err = web.New(web.Options{
		Host: w.Host, Port: w.Port, AuthToken: w.AuthToken, ChatbotEnabled: cfg.Chatbot.Enabled,
		MaxFrameBytes: w.MaxFrameBytes, AllowedOrigins: w.AllowedOrigins, SendQueue: w.SendQueue,
		MessagesPerMinutePerIP: cfg.Limits.WSMessagesPerMinutePerIP,
		OwnerToken:             d.in.ownerToken, MetricsToken: w.MetricsToken, MaxTextBytes: w.MaxTextBytes,
		MaxSockets: w.MaxSockets, MaxSocketsPerIP: w.MaxSocketsPerIP,
		MaxUnauthenticatedSockets: w.MaxUnauthenticatedSockets, MaxUnauthenticatedSocketsPerIP: w.MaxUnauthenticatedSocketsPerIP,
		MaxOwnerSockets: w.MaxOwnerSockets, IdleTimeout: w.IdleTimeout(),
		HeaderTimeout: w.HeaderTimeout(), BodyTimeout: w.BodyTimeout(),
		TrustedProxies: w.TrustedProxies, AllowedHosts: d.tg.allowedHosts(w.AllowedHosts),
		Gateway: readyGateway{d.sys.Gateway(), newReadiness(cfg, d.in.db, d.sys, log)}, Metrics: reg, Logger: log, Pprof: o.pprof,
		Static: web.Static(),
		Extra:  extra,
	})
	if err == nil {
		err = d.srv.Listen()
	}
	if err != nil {
		_ = d.sys.Stop(context.Background())
		return fmt.Errorf("start web channel: %w", err)
	}
	return d.runTelegram(ctx)
}

// Addr is the web channel's listening address.
func (d *daemon) Addr() string {
	if d.srv == nil {
		return ""
	}
	return d.srv.Addr().String()
}

// Stop stops the Telegram channel, closes the web channel, lets turns in
// flight finish within ctx, flushes the audit log and closes the database.
func (d *daemon) Stop(ctx context.Context) error {
	var errs []error
	// Telegram first: no update is taken that could not be answered.
	if err := d.tg.stop(ctx); err != nil {
		errs = append(errs, fmt.Errorf("stop telegram channel: %w", err))
	}
	if d.srv != nil {
		if err := d.srv.Shutdown(ctx); err != nil {
			errs = append(errs, fmt.Errorf("stop web channel: %w", err))
		}
	}
	if err := d.sys.Stop(ctx); err != nil {
		errs = append(errs, fmt.Errorf("stop actors: %w", err))
	}
	if err := d.in.db.Close(); err != nil {
		errs = append(errs, fmt.Errorf("close database: %w", err))
	}
	return errors.Join(errs...)
}

// newProviders builds one model client per configured provider. A missing
// API key is not an error here: calls fail with a message naming the
// variable, so the daemon still starts and says why.
func newProviders(cfg *config.Config) map[string]llm.Provider {
	providers := make(map[string]llm.Provider, len(cfg.Providers))
	retries := cfg.LLM.MaxRetries
	if retries == 0 {
		retries = -1 // config 0 means never retry; the client's 0 means its default
	}
	for name, p := range cfg.Providers {
		key := ""
		if p.APIKeyEnv != "" {
			key = os.Getenv(p.APIKeyEnv)
		}
		providers[name] = llm.NewClient(llm.ClientOptions{
			Name: name, BaseURL: p.BaseURL, APIKey: key, APIKeyEnv: p.APIKeyEnv,
			Timeout: cfg.LLM.Timeout(), MaxRetries: retries,
			BackoffInitial: time.Duration(cfg.LLM.BackoffInitialMS) * time.Millisecond,
			BackoffMax:     time.Duration(cfg.LLM.BackoffMaxMS) * time.Millisecond,
		})
	}
	return providers
}

// newRouter maps the model roles to their chains of providers, with each
// provider's prices for the calls whose cost it does not report.
func newRouter(cfg *config.Config, providers map[string]llm.Provider, log zerolog.Logger) (*llm.Router, error) {
	roles := map[llm.Role][]string{
		llm.RoleProxy: cfg.Models.Proxy, llm.RolePlanner: cfg.Models.Planner,
		llm.RoleExecutor: cfg.Models.Executor, llm.RoleScorer: cfg.Models.Scorer,
	}
	prices := make(map[string]llm.PriceTable, len(cfg.Providers))
	for name, p := range cfg.Providers {
		table := make(llm.PriceTable, len(p.Prices))
		for model, pr := range p.Prices {
			table[model] = llm.Price{InputPerMTok: pr.InputPerMTok, OutputPerMTok: pr.OutputPerMTok}
		}
		prices[name] = table
	}
	r, err := llm.NewChainRouter(providers, roles, llm.RouterOptions{Prices: prices, OnUnpriced: func(ref string) {
		provider, _, _ := config.ParseModelRef(ref)
		log.Warn().Str("model", ref).Msg("the provider reports no cost and no price is configured: its calls count as $0 against budgets in USD; " +
			"add silas.providers." + provider + ".prices")
	}})
	if err != nil {
		return nil, fmt.Errorf("models: %w", err)
	}
	return r, nil
}

// execution is what runs approved plans: the approval engine, the attempt
// sandbox with its executors, and the verification runner in a sandbox of
// its own.
type execution struct {
	approval  *approval.Engine
	sandbox   sandbox.Manager
	executors *executor.Registry
	verifier  *verify.Runner
}

// chooseSandbox probes the configured sandbox backend and says at start
// what agent code will run in: an isolating backend (info), the unisolated
// subprocess backend the owner allowed (a warning), or nothing (an error
// naming what to enable; work items then end blocked).
func chooseSandbox(ctx context.Context, cfg *config.Config, probes map[string]backends.Prober, log zerolog.Logger) backends.Choice {
	c := backends.Choose(ctx, backends.Options{
		Backend: cfg.Sandbox.Backend, AllowUnisolated: cfg.Sandbox.AllowUnisolated, Probes: probes,
	})
	for _, p := range c.Probes {
		if p.Err != nil {
			log.Info().Str("backend", p.Backend).Err(p.Err).Msg("sandbox backend unavailable on this host")
		}
	}
	switch {
	case c.Backend == "":
		log.Error().Str("configured", cfg.Sandbox.Backend).Msg("no sandbox: work items will end blocked. " + c.Problem)
	case !c.Isolated:
		log.Warn().Str("backend", c.Backend).Msg("sandbox does not isolate the filesystem (silas.sandbox.allow_unisolated): " +
			"agent code can read everything this user can, the data dir and keys included")
	default:
		log.Info().Str("backend", c.Backend).Str("configured", cfg.Sandbox.Backend).Msg("sandbox ready")
	}
	return c
}

// newExecution builds the plan execution dependencies. The attempt and
// verification sandboxes live under separate roots (<data_dir>/sandbox/work
// and <data_dir>/sandbox/verify) so that the agent cannot reach the checks.
func newExecution(cfg *config.Config, in *installation, choice backends.Choice, log zerolog.Logger) (*execution, error) {
	acfg := approval.Config{
		DefaultTTL:            time.Duration(cfg.Approval.DefaultTTLMinutes) * time.Minute,
		MaxExecutions:         cfg.Approval.MaxExecutions,
		MaxStandingExecutions: cfg.Autonomy.MaxStandingExecutions,
		NonceTTL:              time.Duration(cfg.NonceStore.TTLMinutes) * time.Minute,
		ScopeMinStrength:      map[messages.ApprovalScope]messages.ApprovalStrength{},
	}
	for scope, strength := range cfg.Approval.ScopeMinStrength {
		acfg.ScopeMinStrength[messages.ApprovalScope(scope)] = messages.ApprovalStrength(strength)
	}
	eng, err := approval.New(in.keys, in.db.Nonces(), time.Now, acfg)
	if err != nil {
		return nil, fmt.Errorf("silas.approval: %w", err)
	}
	work, err := choice.Manager(cfg.DataPath("sandbox", "work"))
	if err != nil {
		return nil, fmt.Errorf("execution sandbox under %s: %w", cfg.DataPath("sandbox", "work"), err)
	}
	// Verification runs under silas.sandbox.verify_dir, apart from the
	// execution sandbox: the agent can touch neither the checks nor where
	// they run.
	checks, err := choice.Manager(cfg.Sandbox.VerifyDir)
	if err != nil {
		return nil, fmt.Errorf("verification sandbox under %s (silas.sandbox.verify_dir): %w", cfg.Sandbox.VerifyDir, err)
	}
	execs, err := executor.NewRegistry(executor.Options{Sandbox: work, Search: searchOptions(cfg)})
	if err != nil {
		return nil, fmt.Errorf("executors: %w", err)
	}
	logSearch(cfg, execs, log)
	runner, err := verify.New(verify.Options{Sandbox: checks, MaxMemoryMB: cfg.Sandbox.DefaultMemoryMB, Log: log})
	if err != nil {
		return nil, fmt.Errorf("verification runner: %w", err)
	}
	return &execution{approval: eng, sandbox: work, executors: execs, verifier: runner}, nil
}
