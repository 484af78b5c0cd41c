export const route = (path: string): string => `route ${path}`;
