import { isIP } from "node:net";

/**
 * Whether a listen address (or a Host header's name) reaches this machine only: `localhost`, the
 * IPv4 loopback range 127.0.0.0/8, and the IPv6 loopback `::1` (also as an IPv4-mapped address).
 */
export function isLoopbackHost(host: string): boolean {
  const name = host.replace(/^\[(.*)\]$/, "$1").toLowerCase();
  if (name === "localhost" || name.endsWith(".localhost")) return true;
  if (name === "::1" || name === "0:0:0:0:0:0:0:1") return true;
  const v4 = name.startsWith("::ffff:") ? name.slice("::ffff:".length) : name;
  return isIP(v4) === 4 && v4.startsWith("127.");
}

/** Whether a listen address is a wildcard (every interface of the machine). */
export function isWildcardHost(host: string): boolean {
  const name = host.replace(/^\[(.*)\]$/, "$1");
  return name === "0.0.0.0" || name === "::" || name === "0:0:0:0:0:0:0:0";
}
