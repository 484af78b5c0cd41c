import { matchPath } from './http/router.js';

export const relayPaths = (text: string): string[] => text.split(',').filter(matchPath);
