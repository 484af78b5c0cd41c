import { copyFileSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import {
  loadOpenApiDocument,
  openApiYamlPath,
  parseOpenApiYaml,
  readOpenApiDocument,
} from '../../core/openapi/document.js';

/**
 * The parsed OpenAPI document's JSON copy (core/openapi/document.ts): a start reads the copy named by the YAML's
 * SHA-256 instead of parsing 270 KB of YAML; the copy is the parse, exactly; an edited YAML is parsed again (its
 * copy has another name), a damaged copy is ignored and replaced, an unwritable cache folder only costs the parse.
 */
const dir = mkdtempSync(join(tmpdir(), 'gw-openapi-cache-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('the OpenAPI document cache', () => {
  const yaml = join(dir, 'openapi.yaml');
  copyFileSync(openApiYamlPath(), yaml);
  const cache = join(dir, 'cache');

  it('parses once, then reads a copy that equals the parse', () => {
    const first = readOpenApiDocument(yaml, cache);
    expect(first.from).toBe('yaml');
    expect(readdirSync(cache).filter((f) => f.endsWith('.json'))).toHaveLength(1);
    const second = readOpenApiDocument(yaml, cache);
    expect(second.from).toBe('cache');
    expect(second.doc).toEqual(parse(readFileSync(yaml, 'utf8')));
    expect(second.doc).toEqual(first.doc);
    // What the process serves is the same document.
    expect(loadOpenApiDocument()).toEqual(second.doc);
  });

  it('an edited YAML is parsed, not served from the old copy', () => {
    const edited = readFileSync(yaml, 'utf8').replace(/^(\s+title:\s*).*$/m, '$1Edited title');
    writeFileSync(yaml, edited);
    const r = readOpenApiDocument(yaml, cache);
    expect(r.from).toBe('yaml');
    expect((r.doc.info as { title: string }).title).toBe('Edited title');
    expect(readOpenApiDocument(yaml, cache)).toMatchObject({
      from: 'cache',
      doc: { info: { title: 'Edited title' } },
    });
  });

  it('a damaged copy is ignored and written again', () => {
    readOpenApiDocument(yaml, cache);
    const [copy] = readdirSync(cache)
      .filter((f) => f.endsWith('.json'))
      .sort();
    for (const f of readdirSync(cache)) writeFileSync(join(cache, f), '{"openapi": "3.0.3", "pa');
    const r = readOpenApiDocument(yaml, cache);
    expect(r.from).toBe('yaml');
    expect(r.doc).toEqual(parseOpenApiYaml(readFileSync(yaml, 'utf8')));
    expect(copy).toBeDefined();
    expect(readOpenApiDocument(yaml, cache).from).toBe('cache');
  });

  it('a cache folder that cannot be made only costs the parse', () => {
    // A file where the folder would be: mkdir fails.
    const blocked = join(dir, 'blocked');
    writeFileSync(blocked, 'not a folder');
    const r = readOpenApiDocument(yaml, join(blocked, 'cache'));
    expect(r.from).toBe('yaml');
    expect(r.doc).toEqual(parseOpenApiYaml(readFileSync(yaml, 'utf8')));
  });
});
