import { heldMsats } from './reserve.js';
import { settledMsats } from './settle.js';

export const stages = [heldMsats, settledMsats];
