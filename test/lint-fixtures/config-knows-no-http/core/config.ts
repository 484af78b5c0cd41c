// Breaks config-knows-no-http without importing core/http/ itself: the relay paths it parses come from the
// router's module, as core/config.ts once did (core/http/relay-paths.ts).
import { relayPaths } from './relay-paths.js';

export const config = { relayPaths: relayPaths('/v1/embeddings') };
