export const heldMsats = 1000;
