// The architecture's import rules, checked in `npm run lint` (docs/architecture.md, "Import rules").
// Each rule has a fixture tree that breaks it (test/lint-fixtures/<rule>/, run by test/lint/depcruise-rules.test.ts).
// `reachable: true` rules follow imports transitively (type-only imports included): a module one floor up,
// imported by something in between, breaks them as surely as a direct import.
// Every rule holds on the whole tree: no violation is let through as known (no `--ignore-known` baseline).
/** @type {import('dependency-cruiser').IConfiguration} */
module.exports = {
  forbidden: [
    {
      name: 'no-circular',
      severity: 'error',
      comment:
        'An import cycle (type-only imports included): move the shared types down into a types module.',
      from: {},
      to: { circular: true },
    },
    {
      name: 'no-plugin-imports-plugin',
      severity: 'error',
      comment:
        'A stage talks to another only through published context keys (core/context.ts) or the private hand-overs ' +
        'of plugins/paid-state.ts; plugins/index.ts is the registry that lists them all.',
      from: { path: '^plugins/', pathNot: '^plugins/index\\.ts$' },
      to: { path: '^plugins/', pathNot: '^plugins/paid-state\\.ts$' },
    },
    {
      name: 'money-reaches-no-http',
      severity: 'error',
      comment:
        'The ledger, the wallet and the account steps are called by routes and stages, never the reverse, not even ' +
        'through a module in between (metrics, config): what they share with HTTP moves down (core/server-timing.ts, ' +
        'core/relay-paths.ts).',
      from: { path: '^core/(ledger|wallet|account)/' },
      to: { path: '^(core/http/|core/routes/|core/server\\.ts$|plugins/)', reachable: true },
    },
    {
      name: 'pipeline-reaches-no-money-implementation',
      severity: 'error',
      comment:
        'The runner and the plugin contract name metering, pricing and the ledger only through their types modules ' +
        '(core/metering/types.ts, core/pricing/types.ts, core/ledger/types.ts); the stages (plugins/) hold the work.',
      from: { path: '^core/(pipeline|stages|context|plugin)\\.ts$' },
      to: {
        path: '^core/(metering|pricing|ledger)/',
        pathNot: '^core/(metering|pricing|ledger)/types\\.ts$',
        reachable: true,
      },
    },
    {
      name: 'engines-know-only-the-exchange',
      severity: 'error',
      comment:
        'An engine adapter translates one server library into the exchange (core/http/exchange.ts); it knows the ' +
        'plugin contract, the error catalogue, the Server-Timing rule and its own helpers (framing, body limit, ' +
        'streamed body, remote address), not the router, the pipeline, the config or the services.',
      from: { path: '^core/http/(node|uws)-engine\\.ts$' },
      to: {
        path: '^(core|plugins)/',
        pathNot:
          '^core/(http/(exchange|framing|body-limit|streamed-body|remote-address)|plugin|errors|server-timing)\\.ts$',
      },
    },
    {
      name: 'config-knows-no-http',
      severity: 'error',
      comment:
        'Settings are read below every layer that uses them: core/config.ts reaches no engine, route, server or ' +
        'stage (relay-path parsing sits beside it, core/relay-paths.ts).',
      from: { path: '^core/config\\.ts$' },
      to: { path: '^(core/http/|core/routes/|core/server\\.ts$|plugins/)', reachable: true },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    exclude: { path: '^(node_modules|dist)/' },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    enhancedResolveOptions: { extensions: ['.ts', '.js', '.mjs', '.json'] },
  },
};
