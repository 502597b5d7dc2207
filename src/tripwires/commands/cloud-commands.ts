import type { DestructiveFinding } from "./command-analysis.ts";
import { joinWords } from "./command-words.ts";
import type { ShellWord } from "./parsed-shell.ts";

/**
 * Deletes through the cloud CLIs (aws, gcloud, gsutil, bq, az). The guard cannot tell a
 * production account from a sandbox, so what a delete destroys decides the severity: data and
 * whole environments (objects recursively, buckets, instances, databases, volumes, clusters,
 * stacks, projects, resource groups) are `cloud-destructive-delete`; any other delete verb (one
 * object, a firewall rule, a function) is `cloud-delete`.
 */

const AWS_GLOBAL_WITH_VALUE = new Set([
  "--region",
  "--profile",
  "--output",
  "--endpoint-url",
  "--query",
  "--color",
  "--ca-bundle",
  "--cli-read-timeout",
  "--cli-connect-timeout",
  "--cli-binary-format",
]);
/** aws operations that destroy data or a whole environment. */
const AWS_DESTRUCTIVE = new Set([
  "terminate-instances",
  "delete-bucket",
  "delete-db-instance",
  "delete-db-cluster",
  "delete-global-cluster",
  "delete-table",
  "delete-cluster",
  "delete-stack",
  "delete-file-system",
  "delete-volume",
  "delete-repository",
  "delete-backup-vault",
  "delete-db-snapshot",
  "delete-snapshot",
  "delete-replication-group",
  "delete-cache-cluster",
  "delete-domain",
  "delete-nodegroup",
  "delete-keyspace",
  "delete-organization",
  "close-account",
  "schedule-key-deletion",
]);
const DELETE_VERB = /^(delete|terminate|purge|destroy)(-|$)/;
/** gcloud/az command groups whose delete destroys data or an environment. */
const DESTRUCTIVE_GROUPS = words([
  "projects",
  "instances",
  "disks",
  "clusters",
  "buckets",
  "databases",
  "sql",
  "spanner",
  "bigtable",
  "firestore",
  "filestore",
  "redis",
  "group",
  "vm",
  "vmss",
  "aks",
  "storage account",
  "storage container",
  "storage share",
  "cosmosdb",
  "postgres",
  "mysql",
  "keyvault",
  "snapshots",
  "backups",
  "tables",
]);
/** Sub-resources of those groups whose delete removes a setting, not the data or environment. */
const SETTING_GROUPS = words(["rule", "rules", "policy", "binding", "member", "label", "tag", "tags", "key", "keys"]);
const NAMING_GROUPS = words(["secret", "alias", "role-assignment", "lock", "record", "record-set"]);

function words(list: readonly string[]): RegExp {
  return new RegExp(`\\b(${list.join("|")})\\b`);
}

const BQ_NOT_DATA = new Set([
  "-m",
  "--model",
  "--routine",
  "--connection",
  "--transfer_config",
  "--reservation",
  "--capacity_commitment",
  "--reservation_assignment",
]);

export function analyseCloudCommand(
  name: string,
  args: readonly ShellWord[],
  words: readonly ShellWord[],
): DestructiveFinding[] {
  const command = joinWords(words);
  const texts = args.map((arg) => arg.text);
  const flags = new Set(texts.filter((text) => text.startsWith("-")));
  const recursive =
    flags.has("-r") ||
    flags.has("-R") ||
    flags.has("--recursive") ||
    texts.some((text) => /^-[a-zA-Z]*[rR][a-zA-Z]*$/.test(text));
  const found = (destructive: boolean, detail: string): DestructiveFinding[] => [
    { ruleId: destructive ? "cloud-destructive-delete" : "cloud-delete", command, path: undefined, detail },
  ];
  switch (name) {
    case "aws": {
      const [service, operation] = leadingPositionals(texts, AWS_GLOBAL_WITH_VALUE);
      if (service === undefined || operation === undefined || flags.has("--dryrun") || flags.has("--dry-run"))
        return [];
      if (service === "s3" && operation === "rm")
        return found(recursive, `aws s3 rm${recursive ? " --recursive" : ""} deletes objects`);
      if (service === "s3" && operation === "rb") return found(true, "aws s3 rb removes a bucket");
      if (service === "s3" && operation === "sync" && flags.has("--delete"))
        return found(false, "aws s3 sync --delete deletes objects missing from the source");
      if (!DELETE_VERB.test(operation) && !AWS_DESTRUCTIVE.has(operation)) return [];
      return found(AWS_DESTRUCTIVE.has(operation), `aws ${service} ${operation}`);
    }
    case "gsutil": {
      const [verb] = leadingPositionals(texts, new Set(["-o", "-h", "-u"]));
      if (verb === "rb") return found(true, "gsutil rb removes a bucket");
      if (verb === "rm")
        return found(recursive || flags.has("-a"), `gsutil rm${recursive ? " -r" : ""} deletes objects`);
      return [];
    }
    case "bq": {
      const [verb] = leadingPositionals(texts, new Set(["--project_id", "--location"]));
      if (verb !== "rm") return [];
      // A table, view or dataset (the default resources) holds data; a model, routine or config does not.
      const other = texts.find((text) => BQ_NOT_DATA.has(text.split("=", 1)[0] ?? ""));
      return other === undefined
        ? found(true, "bq rm deletes a table or dataset")
        : found(false, `bq rm ${other} deletes a resource that holds no data`);
    }
    case "gcloud":
    case "az": {
      const path = leadingPositionals(
        texts,
        new Set(["--project", "--subscription", "--account", "--configuration", "--format"]),
      );
      const verbAt = path.findIndex((word) => DELETE_VERB.test(word) || word === "rm" || word === "delete-batch");
      if (verbAt === -1 || flags.has("--dry-run")) return [];
      const group = path.slice(0, verbAt).join(" ");
      const verb = path[verbAt] ?? "";
      const destructive =
        (group === "storage" && verb === "rm" && recursive) ||
        verb === "delete-batch" ||
        (DESTRUCTIVE_GROUPS.test(group) && !SETTING_GROUPS.test(group) && !NAMING_GROUPS.test(group));
      return found(destructive, `${name} ${group} ${verb}`);
    }
    default:
      return [];
  }
}

/** Positionals before the first option, skipping global options that take a value. */
function leadingPositionals(texts: readonly string[], optionsWithValue: ReadonlySet<string>): string[] {
  const positionals: string[] = [];
  for (let index = 0; index < texts.length; index++) {
    const text = texts[index] ?? "";
    if (optionsWithValue.has(text)) {
      index++;
      continue;
    }
    if (text.startsWith("-")) {
      if (positionals.length > 0) break;
      continue;
    }
    positionals.push(text);
  }
  return positionals;
}
