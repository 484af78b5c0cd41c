// Preload (`node -r`) for bench/profile/alloc-per-call.sh: the first SIGWINCH (ignored by default, unlike SIGUSR2 which close-with-grace turns into a shutdown) starts sampling every allocation
// of the process, objects already collected included (what the garbage collector has to work through); the
// second stops and writes the sampling heap profile to ALLOC_OUT. ALLOC_SURVIVORS=1 leaves out what a scavenge
// collected: what is left is what outlived the young generation (promoted to the old one, the bytes each scavenge
// copies and the next mark-compact works through) or is still alive when sampling stops.
const inspector = require('node:inspector');
const fs = require('node:fs');
const session = new inspector.Session();
session.connect();
let sampling = false;
process.on('SIGWINCH', () => {
  if (!sampling) {
    sampling = true;
    session.post('HeapProfiler.startSampling', {
      samplingInterval: 1024,
      includeObjectsCollectedByMajorGC: true,
      includeObjectsCollectedByMinorGC: process.env.ALLOC_SURVIVORS !== '1',
    });
    return;
  }
  session.post('HeapProfiler.stopSampling', (err, r) => {
    if (err) throw err;
    fs.writeFileSync(process.env.ALLOC_OUT, JSON.stringify(r.profile));
  });
});
