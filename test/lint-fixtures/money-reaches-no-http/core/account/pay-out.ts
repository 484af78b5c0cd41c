// Breaks money-reaches-no-http without importing core/http/ itself: through metrics, as pay-out.ts once did.
import { overheadMs } from '../metrics.js';

export const paidOutMs = overheadMs(2);
