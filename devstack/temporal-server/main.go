// Command temporal-server is the Temporal server of authcap's production shape: go.temporal.io/server
// (the release go.mod pins) whose frontend authorizes each caller by its mutual-TLS client
// certificate, instead of the stock binary's `--allow-no-auth`. The stock main reads its claim
// mapper from config, where only JWTs can carry roles; this one maps the certificate's subject
// (claims.go) and keeps Temporal's default authorizer, narrowed to one extra grant (authorizer.go).
package main

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"

	"go.temporal.io/server/common/authorization"
	"go.temporal.io/server/common/config"
	"go.temporal.io/server/common/dynamicconfig"
	"go.temporal.io/server/common/log"
	_ "go.temporal.io/server/common/persistence/sql/sqlplugin/postgresql" // the production shape's store
	"go.temporal.io/server/temporal"
)

func main() {
	root := flag.String("root", ".", "directory the config directory is relative to")
	configDir := flag.String("config", "config", "config directory, relative to --root")
	env := flag.String("env", "development", "config file name (without .yaml) in the config directory")
	flag.Parse()
	if err := run(filepath.Join(*root, *configDir), *env); err != nil {
		fmt.Fprintln(os.Stderr, "temporal-server:", err)
		os.Exit(1)
	}
}

func run(configDir, env string) error {
	cfg, err := config.LoadConfig(env, configDir, "")
	if err != nil {
		return fmt.Errorf("loading the configuration: %w", err)
	}
	logger := log.NewZapLogger(log.BuildZapLogger(cfg.Log))
	var dynamicConfig dynamicconfig.Client = dynamicconfig.NewNoopClient()
	if cfg.DynamicConfigClient != nil {
		if dynamicConfig, err = dynamicconfig.NewFileBasedClient(cfg.DynamicConfigClient, logger, temporal.InterruptCh()); err != nil {
			return fmt.Errorf("loading the dynamic config: %w", err)
		}
	}
	server, err := temporal.NewServer(
		// Every service, internal-frontend included: the system worker reaches the frontend API
		// through it over internode mTLS, so no public client certificate needs to be admin.
		temporal.ForServices(temporal.Services),
		temporal.WithConfig(cfg),
		temporal.WithDynamicConfigClient(dynamicConfig),
		temporal.WithLogger(logger),
		temporal.InterruptOn(temporal.InterruptCh()),
		temporal.WithAuthorizer(signalGrantAuthorizer{base: authorization.NewDefaultAuthorizer()}),
		temporal.WithClaimMapper(func(*config.Config) authorization.ClaimMapper { return certificateClaimMapper{} }),
	)
	if err != nil {
		return fmt.Errorf("creating the server: %w", err)
	}
	return server.Start()
}
