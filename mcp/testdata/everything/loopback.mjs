// loopback.mjs is preloaded (node --import ./loopback.mjs) into server-everything's streamable
// HTTP server, which listens on process.env.PORT on every address and logs the port it was
// given, not the one it got. Here a server told to listen on a port alone listens on 127.0.0.1
// only, and once it listens, the address it got is written to stderr as one line:
//
//	loopback.mjs: listening on 127.0.0.1:PORT
//
// so that mcp/everything_test.go can give it port 0 and learn the port. Nothing else changes.
import net from "node:net";

const listen = net.Server.prototype.listen;
net.Server.prototype.listen = function (...args) {
  const port = args[0];
  if ((typeof port === "number" || (typeof port === "string" && /^\d+$/.test(port))) && typeof args[1] !== "string") {
    args.splice(1, 0, "127.0.0.1");
  }
  this.once("listening", () => {
    const a = this.address();
    if (a && typeof a === "object") process.stderr.write(`loopback.mjs: listening on ${a.address}:${a.port}\n`);
  });
  return listen.apply(this, args);
};
