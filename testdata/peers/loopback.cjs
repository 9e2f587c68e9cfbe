// Preload (node --require) that forces every listening TCP server onto
// 127.0.0.1: server-everything has no host option and would otherwise bind
// every interface, and servers that listen in tests bind loopback only.
const net = require("net");
const orig = net.Server.prototype.listen;
net.Server.prototype.listen = function (...args) {
  if (typeof args[0] === "number" || typeof args[0] === "string") {
    const port = Number(args[0]);
    const cb = args.find((a) => typeof a === "function");
    return orig.call(this, { port, host: "127.0.0.1" }, cb);
  }
  if (args[0] && typeof args[0] === "object" && !args[0].path) {
    args[0] = { ...args[0], host: "127.0.0.1" };
  }
  return orig.apply(this, args);
};
