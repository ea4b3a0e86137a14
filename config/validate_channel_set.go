package config

// validateChannelSet checks the channels against each other: at least one
// serves the owner, and every enabled flag names something silas serve
// runs.
func (c *Config) validateChannelSet(p *problems) {
	ch := c.Channels
	if !ch.Web.Enabled && !ch.Telegram.Enabled {
		p.add("channels.web.enabled", "is false and no other channel is enabled, so nothing could reach Silas; "+
			"set silas.channels.web.enabled: true or enable silas.channels.telegram")
	}
	if ch.CLI.Enabled {
		p.add("channels.cli.enabled", "silas serve has no terminal channel of its own: the CLI channel is `silas chat`, "+
			"a client of the web channel, and needs no setting; remove silas.channels.cli.enabled")
	}
}
