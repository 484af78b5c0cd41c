import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { cpus, release, totalmem, type } from 'node:os';
import type { MachineInfo } from './results.js';

/** The machine and software versions a result was measured on. */
export function machineInfo(): MachineInfo {
  const c = cpus();
  return {
    cpuModel: c[0]?.model.trim() ?? 'unknown',
    cores: c.length,
    memGb: Math.round(totalmem() / 1073741824),
    os: `${type()} ${release()}`,
  };
}

function git(args: string[]): string | undefined {
  try {
    return execFileSync('git', args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim();
  } catch {
    return undefined;
  }
}

function pkgVersion(path: string): string {
  try {
    return (JSON.parse(readFileSync(path, 'utf8')) as { version: string }).version;
  } catch {
    return 'unknown';
  }
}

export function baseVersions(): Record<string, string> {
  const sha = git(['rev-parse', '--short', 'HEAD']);
  const dirty = git(['status', '--porcelain', '--', 'core', 'plugins']);
  return {
    node: process.versions.node,
    gateway: `${pkgVersion('package.json')}${sha ? ` (${sha}${dirty ? '+local changes' : ''})` : ''}`,
    autocannon: pkgVersion('node_modules/autocannon/package.json'),
  };
}
