import type { DestructiveFinding } from "./command-analysis.ts";
import { analyseCloudCommand } from "./cloud-commands.ts";
import { joinWords } from "./command-words.ts";
import type { ShellWord } from "./parsed-shell.ts";

/** terraform/tofu destroy, kubectl delete, helm uninstall; the cloud CLIs in cloud-commands.ts. */

const KUBECTL_VALUE_FLAGS = new Set([
  "-n",
  "--namespace",
  "--context",
  "--kubeconfig",
  "-s",
  "--server",
  "--cluster",
  "--user",
  "--token",
  "-l",
  "--selector",
  "-f",
  "--filename",
  "-o",
  "--output",
  "--as",
]);
const HELM_VALUE_FLAGS = new Set(["-n", "--namespace", "--kube-context", "--kubeconfig"]);

function firstPositional(
  args: readonly ShellWord[],
  valueFlags: ReadonlySet<string>,
): { index: number; text: string } | undefined {
  for (let index = 0; index < args.length; index++) {
    const text = args[index]?.text ?? "";
    if (valueFlags.has(text)) index++;
    else if (!text.startsWith("-")) return { index, text };
  }
  return undefined;
}

function hasDryRun(args: readonly ShellWord[]): boolean {
  return args.some(
    (arg) => arg.text === "--dry-run" || (arg.text.startsWith("--dry-run=") && arg.text !== "--dry-run=none"),
  );
}

/**
 * Asking a subcommand for its help (`terraform destroy -help`, `kubectl delete -h`, `aws s3 rb help`)
 * prints it and runs nothing. gsutil's and bq's `-h` are options of their own, so only `--help` there.
 */
function asksForHelp(name: string, args: readonly ShellWord[]): boolean {
  const shortHelp = name !== "gsutil" && name !== "bq";
  return args.some(
    (arg) =>
      !arg.dynamic &&
      (arg.text === "--help" ||
        (shortHelp && (arg.text === "-h" || arg.text === "-help")) ||
        (name === "aws" && arg.text === "help")),
  );
}

export function analyseInfraCommand(
  name: string,
  args: readonly ShellWord[],
  words: readonly ShellWord[],
): DestructiveFinding[] {
  if (asksForHelp(name, args)) return [];
  const command = joinWords(words);
  switch (name) {
    case "terraform":
    case "tofu":
    case "terragrunt": {
      const subcommand = firstPositional(args, new Set());
      const rest = subcommand === undefined ? [] : args.slice(subcommand.index + 1).map((arg) => arg.text);
      const destroys =
        subcommand?.text === "destroy" ||
        (subcommand?.text === "apply" && (rest.includes("-destroy") || rest.includes("--destroy")));
      return destroys
        ? [
            {
              ruleId: "infra-terraform-destroy",
              command,
              path: undefined,
              detail: `${name} ${subcommand?.text ?? ""} destroys managed infrastructure`,
            },
          ]
        : [];
    }
    case "kubectl":
    case "oc": {
      const subcommand = firstPositional(args, KUBECTL_VALUE_FLAGS);
      if (subcommand?.text !== "delete" || hasDryRun(args)) return [];
      const resource = args.slice(subcommand.index + 1).find((arg) => !arg.text.startsWith("-"))?.text ?? "resources";
      return [{ ruleId: "infra-kubectl-delete", command, path: undefined, detail: `${name} delete ${resource}` }];
    }
    case "helm": {
      const subcommand = firstPositional(args, HELM_VALUE_FLAGS);
      if (
        subcommand === undefined ||
        !["uninstall", "delete", "del", "un"].includes(subcommand.text) ||
        hasDryRun(args)
      )
        return [];
      return [
        {
          ruleId: "infra-helm-uninstall",
          command,
          path: undefined,
          detail: `helm ${subcommand.text} removes a release`,
        },
      ];
    }
    default:
      return analyseCloudCommand(name, args, words);
  }
}
