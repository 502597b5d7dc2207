import { describe, expect, it } from "vitest";
import { classifyPath, resolvePath } from "../../../src/tripwires/commands/path-resolution.ts";

const workspace = { cwd: "/work/repo/src", workspaceRoot: "/work/repo", home: undefined };

describe("path resolution", () => {
  it("resolves relative paths against cwd and collapses ..", () => {
    expect(resolvePath("../build", workspace)).toBe("/work/repo/build");
    expect(resolvePath("../../..", workspace)).toBe("/");
    expect(resolvePath("./a/./b/", workspace)).toBe("/work/repo/src/a/b");
    expect(resolvePath("x", { ...workspace, cwd: undefined })).toBeUndefined();
  });

  it("expands ~ to the run's home when known, else keeps a symbolic home", () => {
    expect(resolvePath("~/x/../y", { ...workspace, home: "/home/u" })).toBe("/home/u/y");
    expect(resolvePath("~/x/../y", workspace)).toBe("~/y");
    expect(resolvePath("~/..", workspace)).toBe("/");
    expect(resolvePath("~", workspace)).toBe("~");
  });

  it("classifies what a delete would hit", () => {
    expect(classifyPath("/", workspace)).toBe("root");
    expect(classifyPath("~", workspace)).toBe("home");
    expect(classifyPath("/etc/nginx", workspace)).toBe("system");
    expect(classifyPath("..", workspace)).toBe("workspace-root");
    expect(classifyPath("../.git/objects", workspace)).toBe("git-dir");
    expect(classifyPath("node_modules", workspace)).toBe("inside-workspace");
    expect(classifyPath("/tmp/x", workspace)).toBe("scratch");
    expect(classifyPath("../../other", workspace)).toBe("outside-workspace");
    expect(classifyPath("~/notes", workspace)).toBe("outside-workspace");
    expect(classifyPath("/data/x", { ...workspace, workspaceRoot: undefined })).toBe("unknown");
  });

  it("tells a home directory's own entries from a project's files below it", () => {
    const agentStep = { cwd: undefined, workspaceRoot: undefined, home: undefined };
    expect(classifyPath("/home/dev", agentStep)).toBe("home");
    expect(classifyPath("/Users/ann", agentStep)).toBe("home");
    expect(classifyPath("/home/dev/.bashrc", agentStep)).toBe("home-config");
    expect(classifyPath("/root/.ssh/id_ed25519", agentStep)).toBe("home-config");
    expect(classifyPath("~/.config", agentStep)).toBe("home-config");
    expect(classifyPath("/home/dev/projects/app/src/deep/file.py", agentStep)).toBe("unknown");
    expect(classifyPath("/home/dev/.config/app/settings.json", agentStep)).toBe("unknown");
    expect(classifyPath("/home/dev/.cache/pip", agentStep)).toBe("unknown");
    expect(classifyPath("/home/dev/projects/app/x.py", workspace)).toBe("outside-workspace");
    expect(classifyPath("/home", agentStep)).toBe("system");
  });
});
