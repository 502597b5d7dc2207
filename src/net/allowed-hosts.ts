import { networkInterfaces } from "node:os";
import { isLoopbackHost, isWildcardHost } from "./listen-address.ts";

/**
 * The names a request's Host header may carry (DNS rebinding: a page of another site whose name
 * now resolves to this address reaches the server with that other name as Host). Answered: the
 * bound address, the loopback names when it is loopback, every address of the machine when it is
 * a wildcard, and the names configured with --allowed-hosts. Ports are not compared.
 */
const LOOPBACK_NAMES = ["localhost", "127.0.0.1", "::1"];

export function allowedHostNames(boundHost: string, configured: readonly string[]): ReadonlySet<string> {
  const names = new Set([boundHost, ...configured].map(normalized));
  if (isLoopbackHost(boundHost) || isWildcardHost(boundHost)) for (const name of LOOPBACK_NAMES) names.add(name);
  if (isWildcardHost(boundHost)) {
    for (const addresses of Object.values(networkInterfaces())) {
      for (const { address } of addresses ?? []) names.add(normalized(address));
    }
  }
  return names;
}

/** The value of an --allowed-hosts flag: comma-separated names. */
export function hostList(flag: string | undefined): string[] {
  return (flag ?? "")
    .split(",")
    .map((name) => name.trim())
    .filter((name) => name !== "");
}

/** The name of a Host header without its port, or undefined when it has none. */
export function hostName(header: string | undefined): string | undefined {
  if (header === undefined || header === "") return undefined;
  const bracketed = /^\[([^\]]+)\](?::\d+)?$/.exec(header);
  if (bracketed !== null) return normalized(bracketed[1] ?? "");
  const [name, port, ...rest] = header.split(":");
  if (rest.length > 0 || (port !== undefined && !/^\d+$/.test(port))) return undefined;
  return normalized(name ?? "");
}

function normalized(name: string): string {
  return name
    .replace(/^\[(.*)\]$/, "$1")
    .replace(/\.$/, "")
    .toLowerCase();
}
