/**
 * Preloaded into an `agentops run` child by the shutdown fault test (`--import`): every TCP
 * connection to the broker address in AGENTOPS_TEST_BROKER_REDIRECT ("host:port=host:port") goes
 * to the second address instead, a proxy the test owns. The broker advertises its own address in
 * metadata, so redirecting only the bootstrap address would not be enough; this sends every
 * connection through the proxy, and closing the proxy makes the broker unreachable for this
 * process alone while the shared broker keeps running for everyone else.
 */
import net from "node:net";

const rule = process.env["AGENTOPS_TEST_BROKER_REDIRECT"];
if (rule !== undefined && rule !== "") {
  const [from, to] = rule.split("=");
  const [fromHost, fromPort] = (from ?? "").split(":");
  const [toHost, toPort] = (to ?? "").split(":");
  const original = net.connect;
  const redirected = function (this: unknown, ...args: unknown[]): net.Socket {
    const options = args[0];
    if (
      typeof options === "object" &&
      options !== null &&
      (options as net.TcpNetConnectOpts).host === fromHost &&
      String((options as net.TcpNetConnectOpts).port) === fromPort
    ) {
      args[0] = { ...(options as net.TcpNetConnectOpts), host: toHost, port: Number(toPort) };
    }
    return (original as (...inner: unknown[]) => net.Socket).apply(this, args);
  };
  net.connect = redirected as typeof net.connect;
  net.createConnection = redirected as typeof net.createConnection;
}
