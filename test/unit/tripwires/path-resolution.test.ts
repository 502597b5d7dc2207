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
});
