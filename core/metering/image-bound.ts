import { type ImageSize, imageSizeOfDataUrl } from './image-size.js';
import type { ImageTokenRule } from './types.js';

// The rule's type is in ./types.ts (the model catalogue names it without this module); its formulas are here.
export type { ImageTokenRule };

/** The most 512 px tiles an image can take after the tile formula's scaling (768 × 2048). */
const MAX_TILES = 8;

/** Anthropic's rule: w × h / 750 tokens; its resize keeps images at most about 1.15 MP (≈1,600 tokens) and its
 *  high-resolution models up to ≈4,800: the larger one, so that it bounds both. */
export const ANTHROPIC_IMAGE_RULE: ImageTokenRule = {
  formula: 'area',
  pixelsPerToken: 750,
  maxTokens: 4800,
};

/**
 * Built-in rules for model ids whose formula the providers publish (OpenAI's vision guide); a provider prefix
 * (`openai/`) is ignored. The first match wins; the price book's `image_tokens` comes before all of them.
 */
const KNOWN: ReadonlyArray<readonly [RegExp, ImageTokenRule]> = [
  [/(^|\/)gpt-4o-mini/, { formula: 'tiles', base: 2833, tile: 5667 }],
  [/(^|\/)gpt-4\.1-mini/, { formula: 'patches', multiplier: 1.62, maxPatches: 1536 }],
  [/(^|\/)gpt-4\.1-nano/, { formula: 'patches', multiplier: 2.46, maxPatches: 1536 }],
  [/(^|\/)o4-mini/, { formula: 'patches', multiplier: 1.72, maxPatches: 1536 }],
  [/(^|\/)(gpt-4o|gpt-4\.1|gpt-4\.5|o1|o3|computer-use)/, { formula: 'tiles', base: 85, tile: 170 }],
  [/(^|\/)claude/, ANTHROPIC_IMAGE_RULE],
];

/**
 * The rule for `model`: the price book's (models.json `image_tokens`), else a built-in one by model id, else on
 * `/v1/messages` Anthropic's, else `fixed` at `fallbackTokens` (IMAGE_MAX_TOKENS).
 */
export function imageRuleFor(
  model: string,
  endpoint: string,
  book: ImageTokenRule | undefined,
  fallbackTokens: number,
): ImageTokenRule {
  if (book !== undefined) return book;
  const id = model.toLowerCase();
  for (const [re, rule] of KNOWN) if (re.test(id)) return rule;
  if (endpoint === 'messages') return ANTHROPIC_IMAGE_RULE;
  return { formula: 'fixed', tokens: fallbackTokens };
}

function tilesOf(w: number, h: number): number {
  return Math.ceil(w / 512) * Math.ceil(h / 512);
}

const ROUNDINGS = [Math.floor, Math.ceil] as const;

/**
 * Tiles of an image after scaling to fit 2048² then its shortest side to 768 (or up to 768, within 2048): the most
 * over every way of rounding each side at each step (a provider rounds one way or another, and a pixel more at
 * the first step changes the second step's factor).
 */
function scaledTiles(size: ImageSize): number {
  let most = 0;
  for (const rw of ROUNDINGS)
    for (const rh of ROUNDINGS)
      for (const sw of ROUNDINGS)
        for (const sh of ROUNDINGS) {
          const fit = Math.min(1, 2048 / Math.max(size.width, size.height));
          const w = Math.max(1, rw(size.width * fit));
          const h = Math.max(1, rh(size.height * fit));
          const short = Math.min(w, h);
          // Down to 768 when larger; a provider that scales a smaller one UP (within 2048) is counted as well.
          const s = short > 768 ? 768 / short : Math.min(768 / short, 2048 / Math.max(w, h));
          const scaled = tilesOf(Math.max(1, sw(w * s)), Math.max(1, sh(h * s)));
          most = Math.max(most, scaled, short > 768 ? 0 : tilesOf(w, h));
        }
  return Math.min(MAX_TILES, most);
}

/** Tokens of one image under `rule`: `size` undefined = unknown (the most the rule allows for that detail). */
export function imageTokens(rule: ImageTokenRule, size: ImageSize | undefined, detail: unknown): number {
  switch (rule.formula) {
    case 'fixed':
      return rule.tokens;
    case 'tiles':
      if (detail === 'low') return rule.base;
      return rule.base + rule.tile * (size === undefined ? MAX_TILES : scaledTiles(size));
    case 'patches': {
      const patches =
        size === undefined
          ? rule.maxPatches
          : Math.min(rule.maxPatches, Math.ceil(size.width / 32) * Math.ceil(size.height / 32));
      return Math.ceil(patches * rule.multiplier);
    }
    case 'area':
      return size === undefined
        ? rule.maxTokens
        : Math.min(rule.maxTokens, Math.ceil((size.width * size.height) / rule.pixelsPerToken));
  }
}

/** The most one image may cost under `rule`, whatever its size and detail. */
export function maxImageTokens(rule: ImageTokenRule): number {
  return imageTokens(rule, undefined, 'high');
}

/** The size of an inline image source (a `data:` URL or bare base64), read from its header; else undefined. */
export function inlineImageSize(source: unknown): ImageSize | undefined {
  return typeof source === 'string' ? imageSizeOfDataUrl(source) : undefined;
}

/**
 * Parses models.json `image_tokens`: `{"formula": "tiles", "base": 85, "tile": 170}`, `{"formula": "patches",
 * "multiplier": 1.62, "max_patches": 1536}`, `{"formula": "area", "pixels_per_token": 750, "max_tokens": 1600}` or
 * `{"formula": "fixed", "tokens": 3000}`. A string names what is wrong.
 */
export function parseImageTokenRule(v: unknown): ImageTokenRule | string {
  const o = v !== null && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>) : {};
  const pos = (k: string, int: boolean): number | string => {
    const x = typeof o[k] === 'string' ? Number(o[k]) : o[k];
    return typeof x === 'number' && Number.isFinite(x) && x > 0 && (!int || Number.isSafeInteger(x))
      ? x
      : `image_tokens.${k} must be a positive ${int ? 'integer' : 'number'}`;
  };
  const all = (...xs: (number | string)[]) => xs.find((x) => typeof x === 'string') as string | undefined;
  switch (o.formula) {
    case 'tiles': {
      const base = pos('base', true);
      const tile = pos('tile', true);
      return all(base, tile) ?? { formula: 'tiles', base: base as number, tile: tile as number };
    }
    case 'patches': {
      const multiplier = pos('multiplier', false);
      const maxPatches = pos('max_patches', true);
      return (
        all(multiplier, maxPatches) ?? {
          formula: 'patches',
          multiplier: multiplier as number,
          maxPatches: maxPatches as number,
        }
      );
    }
    case 'area': {
      const px = pos('pixels_per_token', false);
      const max = pos('max_tokens', true);
      return all(px, max) ?? { formula: 'area', pixelsPerToken: px as number, maxTokens: max as number };
    }
    case 'fixed': {
      const tokens = pos('tokens', true);
      return typeof tokens === 'string' ? tokens : { formula: 'fixed', tokens };
    }
    default:
      return 'image_tokens.formula must be "tiles", "patches", "area" or "fixed"';
  }
}
