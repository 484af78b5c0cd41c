// Preload for reference servers that cannot be told where to bind (Portkey's start-server listens on all
// interfaces): every server listen without an explicit host binds to 127.0.0.1, so the bench stays loopback
// only. Usage: node --import ./bench/support/loopback-preload.mjs <server.js>
import net from 'node:net';

const listen = net.Server.prototype.listen;
net.Server.prototype.listen = function patchedListen(...args) {
  if (typeof args[0] === 'number' || typeof args[0] === 'string') {
    if (typeof args[1] !== 'string') args.splice(1, 0, '127.0.0.1');
  } else if (args[0] !== null && typeof args[0] === 'object' && args[0].path === undefined) {
    args[0] = {
      ...args[0],
      host: args[0].host && args[0].host !== '0.0.0.0' && args[0].host !== '::' ? args[0].host : '127.0.0.1',
    };
  }
  return listen.apply(this, args);
};
