/**
 * RELAY_PATHS (README, configuration table): the `/v1/*` paths the catch-all may relay to the provider, each with its price per
 * call. Everything the gateway has no route for and this list does not name answers 404
 * `endpoint_not_enabled`: nothing reaches the provider (whose key the operator pays for: fine-tuning jobs,
 * vector stores, assistants… started on it would be billed to the operator) and nothing is charged.
 *
 * Format: comma-separated `METHOD /v1/path=MSATS` entries, e.g.
 * `POST /v1/fine_tuning/jobs=100000,GET /v1/fine_tuning/jobs/*=0`. METHOD is an HTTP method or `*` (any);
 * in the path, a `*` segment matches exactly one segment (no `/`) and a final `**` matches one or more;
 * MSATS is the integer price in millisatoshis charged for each call the provider answers 2xx/3xx. The first
 * entry that matches wins.
 */

export interface RelayPath {
  /** Upper-case method, or `*` for any. */
  readonly method: string;
  /** The pattern as written (`/v1/fine_tuning/jobs/*`). */
  readonly pattern: string;
  readonly msat: number;
  readonly segments: readonly string[];
}

const METHOD = /^(\*|GET|POST|PUT|PATCH|DELETE|HEAD|OPTIONS)$/;
const SEGMENT = /^(\*|\*\*|[A-Za-z0-9._~-]+)$/;

/** Parses RELAY_PATHS; throws an Error naming the bad entry. Empty or unset: nothing is relayed. */
export function parseRelayPaths(raw: string | undefined): RelayPath[] {
  if (raw === undefined || raw.trim() === '') return [];
  return raw
    .split(',')
    .map((e) => e.trim())
    .filter((e) => e !== '')
    .map((entry) => {
      const m = /^(\S+)\s+(\/\S*)=(\d+)$/.exec(entry);
      if (!m) throw new Error(`RELAY_PATHS entry "${entry}" is not "METHOD /v1/path=MSATS"`);
      const method = m[1]!.toUpperCase();
      const pattern = m[2]!;
      const msat = Number(m[3]);
      if (!METHOD.test(method)) throw new Error(`RELAY_PATHS entry "${entry}": unknown method ${m[1]}`);
      if (!Number.isSafeInteger(msat)) throw new Error(`RELAY_PATHS entry "${entry}": price out of range`);
      const segments = pattern.split('/').slice(1);
      if (segments[0] !== 'v1' || segments.length < 2) {
        throw new Error(`RELAY_PATHS entry "${entry}": the path must be under /v1/`);
      }
      segments.forEach((s, i) => {
        if (!SEGMENT.test(s) || (s === '**' && i !== segments.length - 1)) {
          throw new Error(`RELAY_PATHS entry "${entry}": bad path segment "${s}"`);
        }
      });
      return { method, pattern, msat, segments };
    });
}

/** The first entry that allows `method path` (path without its query), or undefined. */
export function matchRelayPath(
  paths: readonly RelayPath[],
  method: string,
  path: string,
): RelayPath | undefined {
  if (paths.length === 0) return undefined;
  const q = path.indexOf('?');
  const segs = (q < 0 ? path : path.slice(0, q)).split('/').slice(1);
  const m = method === 'HEAD' ? 'GET' : method;
  return paths.find((p) => (p.method === '*' || p.method === m) && segmentsMatch(p.segments, segs));
}

function segmentsMatch(pattern: readonly string[], segs: readonly string[]): boolean {
  for (let i = 0; i < pattern.length; i++) {
    const p = pattern[i]!;
    if (p === '**') return segs.length > i && segs.slice(i).every((s) => s !== '');
    const s = segs[i];
    if (s === undefined || s === '' || (p !== '*' && p !== s)) return false;
  }
  return segs.length === pattern.length;
}
