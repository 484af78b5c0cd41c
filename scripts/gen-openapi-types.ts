/**
 * Generates `core/openapi/generated/types.ts` from `openapi/openapi.yaml` with openapi-typescript's Node API.
 *
 *   tsx scripts/gen-openapi-types.ts            write the file
 *   tsx scripts/gen-openapi-types.ts --check    regenerate in memory; exit 1 when the committed file differs
 *   --spec <yaml> --out <ts>                    other paths (the drift test runs the checker on copies)
 *
 * The output is deterministic for a given yaml and openapi-typescript version, so a diff means drift.
 */
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import openapiTS, { astToString } from 'openapi-typescript';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');
export const HEADER =
  '// generated — do not edit; run npm run gen (scripts/gen-openapi-types.ts from openapi/openapi.yaml)\n' +
  '\n';

/** The TypeScript source generated for the spec at `specPath`. */
export async function generateTypes(specPath: string): Promise<string> {
  const ast = await openapiTS(pathToFileURL(resolve(specPath)), { alphabetize: false });
  return HEADER + astToString(ast);
}

function argValue(args: string[], name: string): string | undefined {
  const i = args.indexOf(name);
  return i === -1 ? undefined : args[i + 1];
}

async function main(args: string[]): Promise<number> {
  const spec = resolve(argValue(args, '--spec') ?? join(ROOT, 'openapi', 'openapi.yaml'));
  const out = resolve(argValue(args, '--out') ?? join(ROOT, 'core', 'openapi', 'generated', 'types.ts'));
  const source = await generateTypes(spec);
  const shown = relative(process.cwd(), out) || out;
  if (args.includes('--check')) {
    const current = existsSync(out) ? readFileSync(out, 'utf8') : undefined;
    if (current === source) {
      console.log(`gen:check: ${shown} is up to date with ${relative(process.cwd(), spec) || spec}`);
      return 0;
    }
    console.error(
      current === undefined
        ? `gen:check: ${shown} is missing; run \`npm run gen\` and commit it`
        : `gen:check: ${shown} is out of date with ${relative(process.cwd(), spec) || spec}; ` +
            'run `npm run gen` and commit the result',
    );
    return 1;
  }
  writeFileSync(out, source);
  console.log(`gen: wrote ${shown}`);
  return 0;
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(resolve(process.argv[1])).href) {
  main(process.argv.slice(2)).then(
    (code) => process.exit(code),
    (err: unknown) => {
      console.error('gen: failed:', err instanceof Error ? err.message : err);
      process.exit(2);
    },
  );
}
