package main

import (
	"encoding/base64"
	"errors"
	"fmt"
	"strings"

	"github.com/silas-ai/silas/config"
	"github.com/silas-ai/silas/runtime/keys"
)

// ownerToken returns the token owner connections use: the configured
// auth_token, or the one `silas init` generated. It never creates one.
func ownerToken(cfg *config.Config) (string, error) {
	if cfg.Channels.Web.AuthToken != "" {
		return cfg.Channels.Web.AuthToken, nil
	}
	ks, err := keys.NewFileKeystore(cfg.DataDir)
	if err != nil {
		return "", fmt.Errorf("open keystore: %w", err)
	}
	b, err := ks.Get(keyWebToken)
	if errors.Is(err, keys.ErrNotFound) {
		return "", fmt.Errorf("no owner token in %s yet: run `silas init` (or `silas serve`) first", cfg.DataDir)
	}
	if err != nil {
		return "", fmt.Errorf("read owner token: %w", err)
	}
	return base64.RawURLEncoding.EncodeToString(b), nil
}

// daemonAddress loads the configuration and returns it with the owner
// token and the base URL of the running daemon the CLI commands talk to:
// url when given, else the configured web channel's address.
func daemonAddress(c *common, url string) (cfg *config.Config, token, base string, err error) {
	if cfg, err = c.load(nil); err != nil {
		return nil, "", "", err
	}
	if token, err = ownerToken(cfg); err != nil {
		return nil, "", "", err
	}
	if url == "" {
		url = "http://" + cfg.Channels.Web.Addr()
	}
	return cfg, token, strings.TrimRight(url, "/"), nil
}
