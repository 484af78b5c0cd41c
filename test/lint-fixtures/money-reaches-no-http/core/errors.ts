export const failure = (code: string): Error => new Error(code);
