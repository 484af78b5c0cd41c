export const matchPath = (path: string): boolean => path.startsWith('/v1/');
