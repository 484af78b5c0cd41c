import { GatewayError } from '../../core/errors.js';

/** The GatewayError code `fn` throws ('not-a-gateway-error' for anything else; undefined when it returns). */
export function codeOf(fn: () => unknown): string | undefined {
  try {
    fn();
  } catch (e) {
    return e instanceof GatewayError ? e.code : 'not-a-gateway-error';
  }
  return undefined;
}
