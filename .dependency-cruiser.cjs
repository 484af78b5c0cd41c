// The architecture's import rules, checked in `npm run lint` (docs/architecture.md, "Import rules").
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
      name: 'money-does-not-know-http',
      severity: 'error',
      comment:
        'The ledger, the wallet and the account steps are called by routes and stages, never the reverse.',
      from: { path: '^core/(ledger|wallet|account)/' },
      to: { path: '^(core/http/|core/routes/|plugins/)' },
    },
    {
      name: 'engines-know-only-the-exchange',
      severity: 'error',
      comment:
        'An engine adapter translates one server library into the exchange (core/http/exchange.ts); it knows the ' +
        'plugin contract, the error catalogue and its own helpers (framing, body limit, streamed body, remote address), not the router, ' +
        'the pipeline or the services.',
      from: { path: '^core/http/(node|uws)-engine\\.ts$' },
      to: {
        path: '^(core|plugins)/',
        pathNot:
          '^core/(http/(exchange|framing|body-limit|streamed-body|remote-address|server-timing)|plugin|errors|config)\\.ts$',
      },
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
