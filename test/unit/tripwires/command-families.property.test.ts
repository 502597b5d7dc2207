import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { createCommandAnalyser } from "../../../src/tripwires/commands/command-analyser.ts";
import { analyseSandboxEvent } from "../../../src/tripwires/commands/sandbox-event-analysis.ts";
import { sandbox } from "./events.ts";

/**
 * The destructive-action families of issue #10, each tested as a family: commands are generated
 * from the family's parts (wrappers, redirects, runners, patterns, pathspecs, flags) and every
 * member must get the family's verdict, not only the handful of strings in the corpus.
 */
const analyser = createCommandAnalyser({ protectedBranches: ["main", "master"], cacheSize: 0 });
const context = { cwd: "/work/repo", workspaceRoot: "/work/repo", home: "/home/agent" };
const RUNS = { numRuns: 80 };
/** Generated cases parse hundreds of command lines: allow for a loaded CI machine. */
const SLOW = { timeout: 60_000 };

function rulesOf(command: string): string[] {
  return [...new Set(analyser.analyseShell(command, context).findings.map((finding) => finding.ruleId))].sort();
}

/** Dangerous commands whose words follow the command name: a redirect may stand between any two. */
const ALERTING: readonly (readonly string[])[] = [
  ["rm", "-rf", "/"],
  ["rm", "-rf", "/etc"],
  ["rm", "-r", "-f", "~"],
  ["rm", "--recursive", "--force", ".git"],
  ["git", "reset", "--hard"],
  ["git", "reset", "--hard", "HEAD~3"],
  ["git", "push", "--force", "origin", "main"],
  ["git", "checkout", "--", "."],
  ["git", "restore", "."],
  ["git", "switch", "-f", "main"],
  ["git", "clean", "-fdx"],
  ["git", "branch", "-D", "feature"],
  ["find", "/", "-delete"],
  ["find", ".", "-name", ".git", "-exec", "rm", "-rf", "{}", "+"],
  ["chmod", "-R", "777", "/"],
  ["dd", "if=/dev/zero", "of=/dev/sda"],
  ["shred", "-u", "secrets.txt"],
  ["kubectl", "delete", "namespace", "prod"],
  ["terraform", "destroy", "-auto-approve"],
  ["psql", "-c", "'DROP TABLE users'"],
];
const BENIGN: readonly (readonly string[])[] = [
  ["rm", "-rf", "node_modules"],
  ["rm", "-rf", "./build"],
  ["git", "reset", "--soft", "HEAD~1"],
  ["git", "checkout", "--", "src/app.py"],
  ["git", "push", "--force-with-lease", "origin", "feature/x"],
  ["find", ".", "-name", "'*.pyc'", "-delete"],
  ["ls", "-la", "/"],
  ["echo", "'rm -rf /'"],
];
const REDIRECTS = [
  "2>/dev/null",
  ">/dev/null",
  "&>/dev/null",
  "2>&1",
  "</dev/null",
  ">>build.log",
  "1>&2",
  "2>>err.log",
  ">|out.txt",
];

/** Inserts redirects at the given positions among the words (0 = before the command name). */
function withRedirects(words: readonly string[], inserts: readonly { at: number; redirect: string }[]): string {
  const out = [...words];
  for (const { at, redirect } of [...inserts].sort((left, right) => right.at - left.at))
    out.splice(Math.min(at, out.length), 0, redirect);
  return out.join(" ");
}

const inserts = (length: number): fc.Arbitrary<{ at: number; redirect: string }[]> =>
  fc.array(fc.record({ at: fc.integer({ min: 0, max: length }), redirect: fc.constantFrom(...REDIRECTS) }), {
    minLength: 1,
    maxLength: 3,
  });

describe("1. redirects anywhere among the words", SLOW, () => {
  it("the examples from the issue alert", () => {
    expect(rulesOf("rm -rf 2>/dev/null /")).toContain("fs-delete-critical-path");
    expect(rulesOf("rm -rf > /dev/null 2>&1 /etc")).toContain("fs-delete-critical-path");
    expect(rulesOf("git reset >/dev/null --hard")).toContain("git-reset-hard");
    expect(rulesOf("echo x >$(git reset --hard)")).toContain("git-reset-hard");
  });

  it("a redirect inserted anywhere never changes the verdict of a dangerous command", () => {
    fc.assert(
      fc.property(
        fc.constantFrom(...ALERTING).chain((words) => fc.tuple(fc.constant(words), inserts(words.length))),
        ([words, placed]) => {
          const plain = rulesOf(words.join(" "));
          expect(plain.length).toBeGreaterThan(0);
          expect(rulesOf(withRedirects(words, placed))).toEqual(plain);
        },
      ),
      RUNS,
    );
  });

  it("nor makes a benign command alert", () => {
    fc.assert(
      fc.property(
        fc.constantFrom(...BENIGN).chain((words) => fc.tuple(fc.constant(words), inserts(words.length))),
        ([words, placed]) => {
          expect(rulesOf(withRedirects(words, placed))).toEqual([]);
        },
      ),
      RUNS,
    );
  });

  it("commands in a redirect target, a here-string or an unquoted here-document run; a quoted one is data", () => {
    fc.assert(
      fc.property(
        fc.constantFrom(...ALERTING),
        fc.constantFrom(
          "echo x >$(CMD)",
          "cat <<< $(CMD)",
          "cat <<EOF\n$(CMD)\nEOF",
          "cat > `CMD`",
          "bash <<EOF && CMD\necho hi\nEOF",
          "cat <<EOF | bash\nCMD\nEOF",
        ),
        (words, template) => {
          expect(rulesOf(template.replace("CMD", words.join(" ")))).toEqual(rulesOf(words.join(" ")));
        },
      ),
      RUNS,
    );
    expect(rulesOf("cat <<'EOF'\n$(rm -rf /)\nEOF")).toEqual([]);
    expect(rulesOf("cat <<'EOF' > notes.md\nrm -rf /\nEOF")).toEqual([]);
  });
});

describe("argv from a sandbox event is never shell syntax", SLOW, () => {
  const argvRules = (argv: string[]): string[] =>
    [
      ...new Set(
        analyseSandboxEvent(
          sandbox("r", 0, "exec", { argv, cwd: "/work/repo", workspace_root: "/work/repo" }),
          analyser,
          "/home/agent",
        ).findings.map((finding) => finding.ruleId),
      ),
    ].sort();

  it("a redirect-looking, pipe-looking or substitution-looking argument is a plain argument", () => {
    fc.assert(
      fc.property(
        fc.constantFrom(...ALERTING.filter((words) => !words.some((word) => word.includes("'")))),
        fc.constantFrom(...REDIRECTS, ";", "|", "&&", "$(true)", "`true`", "#"),
        (words, special) => {
          expect(argvRules([...words])).toEqual(rulesOf(words.join(" ")));
          // The special word is one more operand: never a redirect that hides the rest, never a second command.
          expect(argvRules(["rm", "-rf", special, "/"])).toEqual(["fs-delete-critical-path"]);
          expect(argvRules(["echo", special, "rm", "-rf", "/"])).toEqual([]);
        },
      ),
      RUNS,
    );
  });
});

const WRAPPERS = [
  "sudo",
  "sudo -u root",
  "sudo -E --",
  "doas",
  "env",
  "env FOO=1",
  "env -P /usr/bin",
  "env -i",
  "command",
  "nice",
  "nice -n 10",
  "ionice -c3",
  "timeout 10",
  "timeout -s KILL 5",
  "nohup",
  "stdbuf -o0",
  "busybox",
  "toybox",
  "setsid",
  "time",
  "uv run",
  "uv run --with requests -p 3.12",
  "poetry run",
  "poetry -C app run",
  "pipenv run",
  "pdm run -p app",
  "conda run -n base",
  "micromamba run --prefix /opt/env",
  "pixi run -e dev",
];

describe("2. find", SLOW, () => {
  const gitPatterns = [".git", "'.git'", '".git"', ".g*", "'.git*'", "'*git'", "'.[g]it'", "'?git'"];
  const everything = ["'*'", "\\*", "'?*'", "'*'"];
  const narrow = ["'*.pyc'", "__pycache__", "'*.o'", "node_modules", "'*.log'", "dist"];
  const actions = [
    "-delete",
    "-exec rm -rf {} +",
    "-exec rm -rf {} \\;",
    "-execdir rm -r {} +",
    "-exec rm -f {} \\;",
    "-ok rm {} \\;",
  ];
  const types = ["", "-type d", "-type f", "-maxdepth 3"];
  const filter = (flag: string, patterns: readonly string[]): fc.Arbitrary<string> =>
    fc
      .tuple(fc.constantFrom(...types), fc.constantFrom(...patterns))
      .map(([type, pattern]) => `${type} ${flag} ${pattern}`.trim());

  it("a -name/-path filter that selects .git deletes .git", () => {
    fc.assert(
      fc.property(
        fc.oneof(
          filter("-name", gitPatterns),
          filter("-iname", [".GIT", ".git"]),
          filter("-path", ["'*/.git'", "'./.git'", "'*/.git/*'"]),
        ),
        fc.constantFrom(...actions),
        (expression, action) => {
          expect(rulesOf(`find . ${expression} ${action}`)).toContain("fs-delete-git-dir");
        },
      ),
      RUNS,
    );
  });

  it("a filter that matches everything (or a negated one) does not exempt the workspace root", () => {
    fc.assert(
      fc.property(
        fc.oneof(
          filter("-name", everything),
          filter("!", ["-name '*.keep'"]),
          filter("-not", ["-name README.md"]),
          filter("-path", ["'./*'", "'*'"]),
        ),
        fc.constantFrom(...actions),
        (expression, action) => {
          expect(rulesOf(`find . ${expression} ${action}`)).toContain("fs-delete-workspace-root");
        },
      ),
      RUNS,
    );
  });

  it("a narrow filter inside the workspace stays quiet, also next to a pruned .git", () => {
    fc.assert(
      fc.property(filter("-name", narrow), fc.constantFrom(...actions), fc.boolean(), (expression, action, prune) => {
        expect(rulesOf(`find . ${prune ? "-name .git -prune -o " : ""}${expression} ${action}`)).toEqual([]);
      }),
      RUNS,
    );
  });

  it("wrappers inside -exec/-execdir are unwrapped", () => {
    fc.assert(
      fc.property(
        fc.constantFrom(...WRAPPERS),
        fc.constantFrom("-exec", "-execdir"),
        fc.constantFrom(
          ["/", "fs-delete-critical-path"],
          [".", "fs-delete-workspace-root"],
          ["~", "fs-delete-critical-path"],
        ),
        (wrapper, exec, [root, rule]) => {
          expect(rulesOf(`find ${root} ${exec} ${wrapper} rm -rf {} +`)).toContain(rule);
        },
      ),
      RUNS,
    );
    expect(rulesOf("find . -exec xargs rm -rf \\;")).toContain("fs-delete-workspace-root");
    expect(rulesOf("find / -exec sh -c 'rm -rf \"$1\"' _ {} \\;")).toContain("fs-delete-critical-path");
  });

  it("-delete or rm as an argument of a command that does not delete is not a deletion", () => {
    fc.assert(
      fc.property(
        fc.constantFrom("echo", "printf %s", "ls -ld", "grep -l rm", "stat", "du -sh"),
        fc.constantFrom("-delete", "rm -rf", "-delete rm"),
        fc.constantFrom("/", ".", "~"),
        (command, words, root) => {
          expect(rulesOf(`find ${root} -exec ${command} ${words} {} \\;`)).toEqual([]);
        },
      ),
      RUNS,
    );
  });
});

describe("3. fan-out runners and wrappers", SLOW, () => {
  const targets: readonly (readonly [string, string])[] = [
    ["/", "fs-delete-critical-path"],
    ["/etc", "fs-delete-critical-path"],
    ["~", "fs-delete-critical-path"],
    ["/usr/lib", "fs-delete-critical-path"],
    [".git", "fs-delete-git-dir"],
  ];
  const safeTargets = ["dist", "./build", "/tmp/agent-1", "node_modules"];
  const forms = [
    "parallel rm -rf ::: T",
    "parallel rm -rf {} ::: T",
    "parallel -j4 rm -rf {} ::: T",
    "parallel bash -c ::: 'rm -rf T'",
    "parallel sh -c 'rm -rf {}' ::: T",
    "parallel ::: 'rm -rf T'",
    "echo T | xargs rm -rf",
    "echo T | xargs -0 rm -rf",
    "echo T | xargs --null rm -rf",
    "echo T | xargs -n1 rm -rf",
    "echo T | xargs -I{} rm -rf {}",
    "echo T | xargs -I % rm -rf %",
    "echo T | xargs -i rm -rf {}",
    "echo T | xargs -I{} sh -c 'rm -rf {}'",
    "echo T | xargs -J {} rm -rf {}",
    "echo T | xargs -J % rm -rf % extra",
    "echo T | parallel rm -rf",
    "busybox rm -rf T",
    "echo x > $(rm -rf T)",
  ];

  it("every runner runs its command: dangerous targets alert", () => {
    fc.assert(
      fc.property(fc.constantFrom(...forms), fc.constantFrom(...targets), (form, [target, rule]) => {
        expect(rulesOf(form.replaceAll("T", target))).toContain(rule);
      }),
      RUNS,
    );
  });

  it("and safe targets stay quiet", () => {
    fc.assert(
      fc.property(fc.constantFrom(...forms), fc.constantFrom(...safeTargets), (form, target) => {
        expect(rulesOf(form.replaceAll("T", target))).toEqual([]);
      }),
      RUNS,
    );
  });

  it("items the line does not show make a recursive delete a dynamic target", () => {
    for (const command of [
      "cat list | xargs -I{} sh -c 'rm -rf {}'",
      "cat list | xargs -0 rm -rf",
      "xargs -a list rm -rf",
      "echo ok | xargs -a /tmp/paths rm -rf",
      "echo ok | xargs --arg-file=paths rm -rf",
      "parallel rm -rf :::: list.txt",
      "git ls-files | parallel rm -rf",
    ]) {
      expect(rulesOf(command), command).toEqual(["fs-delete-dynamic-target"]);
    }
    expect(rulesOf("parallel --dry-run rm -rf ::: /")).toEqual([]);
    expect(rulesOf("parallel echo ::: / /etc")).toEqual([]);
  });

  it("a delimiter keeps an item whole: a line fed to a shell is its script; split at blanks, its first word is", () => {
    fc.assert(
      fc.property(
        fc.constantFrom(...targets),
        fc.constantFrom("-0", "--null", "-d '\\n'", "--delimiter='\\n'", "-0 -n1", "-I{}"),
        fc.constantFrom("bash -c", "sh -c", "sudo bash -c"),
        ([target, rule], delimiter, shell) => {
          const line = `rm -rf ${target}`;
          const script = delimiter === "-I{}" ? `${shell} {}` : shell;
          expect(rulesOf(`echo '${line}' | xargs ${delimiter} ${script}`)).toContain(rule);
          // Without a delimiter, bash -c gets `rm` as its script and the other items as $0, $1.
          expect(rulesOf(`echo '${line}' | xargs ${shell}`)).toEqual([]);
          expect(rulesOf(`echo 'make clean' | xargs ${delimiter} ${script}`)).toEqual([]);
        },
      ),
      RUNS,
    );
  });

  it("any chain of wrappers gives the bare command's verdict", () => {
    fc.assert(
      fc.property(
        fc.array(fc.constantFrom(...WRAPPERS), { minLength: 1, maxLength: 3 }),
        fc.constantFrom(...ALERTING),
        (chain, words) => {
          expect(rulesOf(`${chain.join(" ")} ${words.join(" ")}`)).toEqual(rulesOf(words.join(" ")));
        },
      ),
      RUNS,
    );
  });

  it("builtin cd and env -P are wrappers too", () => {
    expect(rulesOf("builtin cd / && rm -rf *")).toContain("fs-delete-critical-path");
    expect(rulesOf("cd -P /etc && rm -rf ./*")).toContain("fs-delete-critical-path");
    expect(rulesOf("env -P /usr/bin:/bin git reset --hard")).toEqual(["git-reset-hard"]);
    expect(rulesOf("env -S 'rm -rf' /")).toContain("fs-delete-critical-path");
  });
});

describe("4. git: discarding the whole tree is reset --hard's family", SLOW, () => {
  const prefixes = ["git", "git -C repo", "git --no-pager", "git -c core.quotepath=off", "/usr/bin/git", "sudo git"];
  const wholeTree = [".", "./", ":/", "'*'", ":(top)"];
  const files = ["file.py", "src/app.ts", "README.md", "'src/*.py'", "src/", "tests/test_x.py docs/index.md"];

  it("checkout / restore of the whole tree alert", () => {
    fc.assert(
      fc.property(
        fc.constantFrom(...prefixes),
        fc.constantFrom(
          "checkout --",
          "checkout",
          "checkout HEAD --",
          "checkout HEAD",
          "checkout origin/main --",
          "restore",
          "restore --worktree",
          "restore -W",
          "restore --source=HEAD~2",
          "restore -s HEAD",
          "restore --staged --worktree",
        ),
        fc.constantFrom(...wholeTree),
        (prefix, verb, pathspec) => {
          expect(rulesOf(`${prefix} ${verb} ${pathspec}`)).toEqual(["git-discard-changes"]);
        },
      ),
      RUNS,
    );
  });

  it("restoring named files stays quiet", () => {
    fc.assert(
      fc.property(
        fc.constantFrom(...prefixes),
        fc.constantFrom(
          "checkout --",
          "checkout HEAD --",
          "checkout HEAD~1 --",
          "restore",
          "restore --worktree",
          "restore --staged",
          "restore -S",
        ),
        fc.constantFrom(...files),
        (prefix, verb, pathspec) => {
          expect(rulesOf(`${prefix} ${verb} ${pathspec}`)).toEqual([]);
        },
      ),
      RUNS,
    );
    expect(rulesOf("git restore --staged .")).toEqual([]);
    expect(rulesOf("git checkout -p .")).toEqual([]);
  });

  it("switch with --discard-changes or -f in any flag cluster alerts; plain switches do not", () => {
    fc.assert(
      fc.property(
        fc.constantFrom(...prefixes),
        fc.constantFrom("--discard-changes", "-f", "--force", "-qf", "-fq", "-f -q", "--quiet --force"),
        fc.constantFrom("main", "feature/x", "-", ""),
        (prefix, flags, branch) => {
          expect(rulesOf(`${prefix} switch ${flags} ${branch}`.trim())).toEqual(["git-discard-changes"]);
        },
      ),
      RUNS,
    );
    for (const command of [
      "git switch main",
      "git switch -c feature",
      "git switch -C feature",
      "git switch --detach HEAD~1",
      "git checkout main",
      "git checkout -b x",
    ])
      expect(rulesOf(command), command).toEqual([]);
    expect(rulesOf("git checkout -f main")).toEqual(["git-discard-changes"]);
  });

  it("discarding alerts at reset --hard's severity", async () => {
    const { DESTRUCTIVE_RULES } = await import("../../../src/tripwires/rules/destructive-rules.ts");
    expect(DESTRUCTIVE_RULES.get("git-discard-changes")?.severity).toBe(
      DESTRUCTIVE_RULES.get("git-reset-hard")?.severity,
    );
  });

  it("a lease protects a forced push, in any order of the flags, unless it targets a protected branch", () => {
    fc.assert(
      fc.property(
        fc
          .shuffledSubarray(["--force", "--force-with-lease", "-u"], { minLength: 2 })
          .filter((flags) => flags.includes("--force-with-lease")),
        fc.constantFrom("", "origin", "origin feature/x", "origin HEAD:feature/x"),
        (flags, target) => {
          expect(rulesOf(`git push ${flags.join(" ")} ${target}`.trim())).toEqual([]);
        },
      ),
      RUNS,
    );
    expect(rulesOf("git push --force --force-with-lease origin main")).toEqual(["git-force-push"]);
    expect(rulesOf("git push --force-with-lease --no-force-with-lease --force")).toEqual(["git-force-push"]);
    expect(rulesOf("git push -f origin feature/x")).toEqual(["git-force-push"]);
  });
});

describe("5. unknown variables inside paths", SLOW, () => {
  const scratchVariables = [
    "$TMPDIR",
    "${TMPDIR}",
    "$TMP",
    "$TEMP",
    "${RUNNER_TEMP}",
    "${TMPDIR:-/tmp}",
    "${TMPDIR:?}",
  ];
  const name = fc.stringMatching(/^[a-z][a-z0-9_-]{0,10}$/);

  it("a named entry below a temp-dir variable is scratch: quiet", () => {
    fc.assert(
      fc.property(
        fc.constantFrom(...scratchVariables),
        fc.array(name, { minLength: 1, maxLength: 3 }),
        fc.boolean(),
        (variable, parts, quoted) => {
          const path = `${variable}/${parts.join("/")}`;
          expect(rulesOf(`rm -rf ${quoted ? `"${path}"` : path}`)).toEqual([]);
        },
      ),
      RUNS,
    );
  });

  it("climbing out of it with .. is an unknown place: dynamic-target warning", () => {
    fc.assert(
      fc.property(
        fc.constantFrom(...scratchVariables),
        fc.array(name, { maxLength: 2 }),
        fc.integer({ min: 1, max: 3 }),
        (variable, parts, ups) => {
          const path = [variable, ...parts, ...Array<string>(parts.length + ups).fill(".."), "etc"].join("/");
          expect(rulesOf(`rm -rf "${path}"`)).toEqual(["fs-delete-dynamic-target"]);
        },
      ),
      RUNS,
    );
  });

  it("an unguarded variable that would leave / when empty warns; any other unknown variable warns unless a static prefix bounds it", () => {
    for (const command of [
      'rm -rf "$TMPDIR/"',
      'rm -rf "$TMPDIR"/*',
      'rm -rf "$DIR/"',
      "rm -rf $X",
      'rm -rf "$BUILD_DIR/out"',
      'rm -rf "${DIR:?}"',
    ]) {
      expect(rulesOf(command), command).toEqual(["fs-delete-dynamic-target"]);
    }
    for (const command of [
      'rm -rf "${TMPDIR:?}"/*',
      'rm -rf "$TMPDIR"',
      "rm -rf node_modules/$pkg",
      'rm -rf "./out/${NAME}"',
      'rm -f "$X"',
    ]) {
      expect(rulesOf(command), command).toEqual([]);
    }
  });
});
