/**
 * Generates, from `openapi/openapi.yaml`, `core/openapi/generated/types.ts` (openapi-typescript's Node API) and,
 * next to it, `validators.cjs` (every operation's request-body validator as ajv standalone code; see
 * core/openapi/validators.ts).
 *
 *   tsx scripts/gen-openapi-types.ts            write both files
 *   tsx scripts/gen-openapi-types.ts --check    regenerate in memory; exit 1 when a committed file differs
 *   --spec <yaml> --out <ts>                    other paths (validators.cjs goes next to <ts>; the drift test
 *                                               runs the checker on copies)
 *
 * The outputs are deterministic for a given yaml and openapi-typescript and ajv versions, so a diff means drift.
 */
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import openapiTS, { astToString } from 'openapi-typescript';
import { parseOpenApiYaml } from '../core/openapi/document.js';
import { validatorsModuleSource } from '../core/openapi/validators.js';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');
export const HEADER =
  '// generated — do not edit; run npm run gen (scripts/gen-openapi-types.ts from openapi/openapi.yaml)\n' +
  '\n';

/** The TypeScript source generated for the spec at `specPath`. */
export async function generateTypes(specPath: string): Promise<string> {
  const ast = await openapiTS(pathToFileURL(resolve(specPath)), { alphabetize: false });
  return HEADER + astToString(ast);
}

/** The validators module generated for the spec at `specPath` (core/openapi/validators.ts). */
export async function generateValidators(specPath: string): Promise<string> {
  return validatorsModuleSource(parseOpenApiYaml(readFileSync(resolve(specPath), 'utf8')));
}

function argValue(args: string[], name: string): string | undefined {
  const i = args.indexOf(name);
  return i === -1 ? undefined : args[i + 1];
}

async function main(args: string[]): Promise<number> {
  const spec = resolve(argValue(args, '--spec') ?? join(ROOT, 'openapi', 'openapi.yaml'));
  const out = resolve(argValue(args, '--out') ?? join(ROOT, 'core', 'openapi', 'generated', 'types.ts'));
  const outputs = [
    { path: out, source: await generateTypes(spec) },
    { path: join(dirname(out), 'validators.cjs'), source: await generateValidators(spec) },
  ];
  const specShown = relative(process.cwd(), spec) || spec;
  if (args.includes('--check')) {
    let code = 0;
    for (const { path, source } of outputs) {
      const shown = relative(process.cwd(), path) || path;
      const current = existsSync(path) ? readFileSync(path, 'utf8') : undefined;
      if (current === source) {
        console.log(`gen:check: ${shown} is up to date with ${specShown}`);
        continue;
      }
      console.error(
        current === undefined
          ? `gen:check: ${shown} is missing; run \`npm run gen\` and commit it`
          : `gen:check: ${shown} is out of date with ${specShown}; run \`npm run gen\` and commit the result`,
      );
      code = 1;
    }
    return code;
  }
  for (const { path, source } of outputs) {
    writeFileSync(path, source);
    console.log(`gen: wrote ${relative(process.cwd(), path) || path}`);
  }
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
