/**
 * Finds where a JSON text stops being valid. V8's JSON.parse messages only sometimes carry a position
 * (Node 20 often says `Unexpected token '}', ..."x": [}" is not valid JSON`), so after a failed parse this
 * small recursive-descent checker (RFC 8259) locates the first offending character. It only runs on bodies
 * that already failed to parse; depth is bounded.
 */

const MAX_DEPTH = 1000;

class Scan {
  i = 0;
  constructor(private readonly s: string) {}

  ws(): void {
    const s = this.s;
    while (this.i < s.length) {
      const c = s.charCodeAt(this.i);
      if (c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09) this.i++;
      else break;
    }
  }

  value(depth: number): boolean {
    if (depth > MAX_DEPTH) return false;
    this.ws();
    const c = this.s[this.i];
    if (c === '{') return this.object(depth);
    if (c === '[') return this.array(depth);
    if (c === '"') return this.string();
    if (c === 't') return this.literal('true');
    if (c === 'f') return this.literal('false');
    if (c === 'n') return this.literal('null');
    return this.number();
  }

  object(depth: number): boolean {
    this.i++;
    this.ws();
    if (this.s[this.i] === '}') {
      this.i++;
      return true;
    }
    for (;;) {
      this.ws();
      if (this.s[this.i] !== '"' || !this.string()) return false;
      this.ws();
      if (this.s[this.i] !== ':') return false;
      this.i++;
      if (!this.value(depth + 1)) return false;
      this.ws();
      const c = this.s[this.i];
      if (c === '}') {
        this.i++;
        return true;
      }
      if (c !== ',') return false;
      this.i++;
    }
  }

  array(depth: number): boolean {
    this.i++;
    this.ws();
    if (this.s[this.i] === ']') {
      this.i++;
      return true;
    }
    for (;;) {
      if (!this.value(depth + 1)) return false;
      this.ws();
      const c = this.s[this.i];
      if (c === ']') {
        this.i++;
        return true;
      }
      if (c !== ',') return false;
      this.i++;
    }
  }

  string(): boolean {
    const s = this.s;
    this.i++;
    while (this.i < s.length) {
      const c = s.charCodeAt(this.i);
      if (c === 0x22) {
        this.i++;
        return true;
      }
      if (c < 0x20) return false;
      if (c === 0x5c) {
        const e = s[this.i + 1];
        if (e === 'u') {
          if (!/^[0-9a-fA-F]{4}$/.test(s.slice(this.i + 2, this.i + 6))) {
            this.i++;
            return false;
          }
          this.i += 6;
          continue;
        }
        if (e === undefined || !'"\\/bfnrt'.includes(e)) {
          this.i++;
          return false;
        }
        this.i += 2;
        continue;
      }
      this.i++;
    }
    return false;
  }

  literal(word: string): boolean {
    for (let k = 0; k < word.length; k++, this.i++) if (this.s[this.i] !== word[k]) return false;
    return true;
  }

  number(): boolean {
    const m = /^-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?/.exec(this.s.slice(this.i, this.i + 400));
    if (m === null) return false;
    this.i += m[0].length;
    return true;
  }
}

/** The 0-based index of the first invalid character (the text length for a premature end), or -1 if valid. */
export function jsonErrorPosition(text: string): number {
  const scan = new Scan(text);
  if (!scan.value(0)) return Math.min(scan.i, text.length);
  scan.ws();
  return scan.i < text.length ? scan.i : -1;
}
