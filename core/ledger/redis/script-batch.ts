import type { LoadedScript, ScriptRunner } from '../../store/lua-scripts.js';

/**
 * Redis's counterpart of SQLite's group commit (docs/ledger.md, "Batched exact path (Redis)"): the per-call
 * steps of the exact path (admit, settle, release, count-request) asked for in one turn of the event loop go to
 * Redis as one script, which runs each of them in the order asked, under its own `pcall`, and answers each its own
 * reply. One script call instead of one per step: ioredis's per-command work (the command object, its promise,
 * the argument encoding, the reply callback) is paid once per batch.
 *
 * What holds, as for one script per step: each step is atomic (Redis runs the whole batch script atomically, so
 * more than that); the steps run in the order asked; one step's Lua error is answered to that step alone (its
 * writes before the error stay, as they would in a script of its own) and the others go on. Only on a single
 * node or Sentinel: on Cluster the steps of different accounts live in different hash slots, which one script
 * cannot touch, so Cluster keeps one script per step.
 */

/** The most steps one batch carries; the rest go in the next. */
export const BATCH_MAX = 64;

/** A reply slot that carries a step's Lua error (never a step's own first reply element). */
const STEP_ERROR = -999;

/** The batch script: each batched step's body as a function of its own KEYS and ARGV, then the dispatch. */
export function batchLua<N extends string>(scripts: Map<N, LoadedScript>, batched: ReadonlySet<N>): string {
  const ops = [...batched]
    .map((name) => {
      const s = scripts.get(name);
      if (!s) throw new Error(`no Lua script ${name} to batch`);
      return `__ops['${name}'] = function(KEYS, ARGV)\n${s.lua}\nend`;
    })
    .join('\n');
  return `local __ops = {}
${ops}
local __out = {}
local __ki, __ai = 1, 2
for __i = 1, tonumber(ARGV[1]) do
  local __name, __nk, __na = ARGV[__ai], tonumber(ARGV[__ai + 1]), tonumber(ARGV[__ai + 2])
  __ai = __ai + 3
  local __k, __a = {}, {}
  for __j = 1, __nk do
    __k[__j] = KEYS[__ki]
    __ki = __ki + 1
  end
  for __j = 1, __na do
    __a[__j] = ARGV[__ai]
    __ai = __ai + 1
  end
  local __ok, __r = pcall(__ops[__name], __k, __a)
  if __ok then __out[__i] = __r else __out[__i] = {${STEP_ERROR}, tostring(__r)} end
end
return __out
`;
}

interface Step<N extends string> {
  name: N;
  keys: string[];
  args: Array<string | number>;
  resolve: (v: unknown) => void;
  reject: (e: unknown) => void;
}

/**
 * `run`, with the batched steps of one turn sent as one script (a lone step goes as its own script, as before).
 * `runBatch`: runs the batch script (`batchLua`) with the steps' keys and arguments.
 */
export function batchingRunner<N extends string>(
  run: ScriptRunner<N>,
  runBatch: (keys: string[], args: Array<string | number>) => Promise<unknown>,
  batched: ReadonlySet<N>,
): ScriptRunner<N> {
  let pending: Array<Step<N>> = [];

  const send = (steps: Array<Step<N>>): void => {
    if (steps.length === 1) {
      const s = steps[0]!;
      run(s.name, s.keys, s.args).then(s.resolve, s.reject);
      return;
    }
    const keys: string[] = [];
    const args: Array<string | number> = [steps.length];
    for (const s of steps) {
      args.push(s.name, s.keys.length, s.args.length);
      for (const k of s.keys) keys.push(k);
      for (const a of s.args) args.push(a);
    }
    runBatch(keys, args).then(
      (replies) => {
        const r = replies as unknown[];
        for (let i = 0; i < steps.length; i++) {
          const one = r[i] as unknown[];
          if (Array.isArray(one) && one[0] === STEP_ERROR)
            // The same words Redis gives a script's own runtime error: the ledger maps them to internal_error.
            steps[i]!.reject(
              new Error(`ERR Error running script (batched ${steps[i]!.name}): ${String(one[1])}`),
            );
          else steps[i]!.resolve(one);
        }
      },
      (err: unknown) => {
        for (const s of steps) s.reject(err);
      },
    );
  };

  const flush = (): void => {
    const steps = pending;
    pending = [];
    for (let i = 0; i < steps.length; i += BATCH_MAX) send(steps.slice(i, i + BATCH_MAX));
  };

  return (name, keys, args) => {
    if (!batched.has(name)) return run(name, keys, args);
    return new Promise((resolve, reject) => {
      pending.push({ name, keys, args, resolve, reject });
      if (pending.length === 1) setImmediate(flush);
    });
  };
}
