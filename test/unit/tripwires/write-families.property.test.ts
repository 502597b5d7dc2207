import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { agentStep, rulesOf, RUNS, SLOW, workspace } from "./family-generators.ts";

/**
 * Families of issue #34 that write or delete: system and start-up files, cloud deletes, git
 * stash, and the two real-run false alarms (files under a home, disk images). Members are
 * generated from the family's parts and must all get the family's verdict.
 */

describe("overwriting system files", SLOW, () => {
  const systemPath = fc
    .tuple(
      fc.constantFrom("/etc", "/etc/ssh", "/boot", "/usr/bin", "/usr/lib", "/bin", "/sbin", "/lib", "/lib64"),
      fc.stringMatching(/^[a-z][a-z0-9_.-]{0,10}$/),
    )
    .map(([directory, file]) => `${directory}/${file}`);
  const writer = fc.constantFrom(
    "echo x > P",
    "echo x >> P",
    "printf x >| P",
    "echo x | tee P",
    "echo x | sudo tee -a P",
    "cat payload > P",
    "cp payload P",
    "sudo install -m 644 payload P",
    "mv payload P",
    "dd if=payload of=P",
    "sudo sed -i s/a/b/ P",
    "sponge P < payload",
    "truncate -s 0 P",
    "find . -fprint P",
    "find . -fls P",
    "sudo ln -sf payload P",
    "ln -s payload P",
    "sudo rsync -a payload P",
  );
  const write = (template: string, path: string): string => template.replace("P", path);

  it("every writer into a system directory alerts", () => {
    fc.assert(
      fc.property(writer, systemPath, (template, path) => {
        expect(rulesOf(write(template, path))).toEqual(["fs-write-system-file"]);
      }),
      RUNS,
    );
  });

  it("the same writers into the workspace, /tmp or /usr/local are quiet", () => {
    const harmless = fc
      .tuple(
        fc.constantFrom("build", "./out", "/tmp", "/usr/local/bin", "/work/repo/etc"),
        fc.stringMatching(/^[a-z][a-z0-9_.-]{0,10}$/),
      )
      .map(([directory, file]) => `${directory}/${file}`);
    fc.assert(
      fc.property(writer, harmless, (template, path) => {
        expect(rulesOf(write(template, path))).toEqual([]);
      }),
      RUNS,
    );
  });

  it("a home's start-up files warn, its login keys are critical, and reading them is quiet", () => {
    const home = fc.constantFrom("~", "/home/dev", "/Users/ann", "/root");
    fc.assert(
      fc.property(
        writer.filter((template) => !template.startsWith("mv") && !template.startsWith("find")),
        home,
        fc.constantFrom(".bashrc", ".profile", ".zshrc", ".bash_profile"),
        (template, directory, file) => {
          expect(rulesOf(write(template, `${directory}/${file}`))).toEqual(["fs-write-shell-profile"]);
          expect(rulesOf(write(template, `${directory}/.ssh/authorized_keys`))).toEqual(["fs-write-system-file"]);
          expect(rulesOf(`cat ${directory}/${file}`)).toEqual([]);
        },
      ),
      RUNS,
    );
  });

  it("truncating a system log alerts; appending to one does not", () => {
    fc.assert(
      fc.property(fc.constantFrom("syslog", "auth.log", "nginx/access.log", "wtmp"), (log) => {
        expect(rulesOf(`> /var/log/${log}`)).toEqual(["fs-write-system-file"]);
        expect(rulesOf(`truncate -s 0 /var/log/${log}`)).toEqual(["fs-write-system-file"]);
        expect(rulesOf(`echo x >> /var/log/${log}`)).toEqual([]);
      }),
      RUNS,
    );
  });
});

describe("cloud and cluster deletes", SLOW, () => {
  const bucket = fc.stringMatching(/^[a-z][a-z0-9-]{2,12}$/);
  const globals = fc.array(fc.constantFrom("--profile prod", "--region eu-west-1", "--output json"), { maxLength: 2 });

  it("recursive object deletes and bucket removal are critical whatever the flag order; one object warns", () => {
    fc.assert(
      fc.property(bucket, globals, fc.boolean(), (name, options, flagFirst) => {
        const recursive = flagFirst
          ? `aws ${options.join(" ")} s3 rm --recursive s3://${name}`
          : `aws ${options.join(" ")} s3 rm s3://${name} --recursive`;
        expect(rulesOf(recursive)).toEqual(["cloud-destructive-delete"]);
        expect(rulesOf(`aws ${options.join(" ")} s3 rb s3://${name} --force`)).toEqual(["cloud-destructive-delete"]);
        expect(rulesOf(`gsutil -m rm -r gs://${name}`)).toEqual(["cloud-destructive-delete"]);
        expect(rulesOf(`aws ${options.join(" ")} s3 rm s3://${name}/key.txt`)).toEqual(["cloud-delete"]);
        expect(rulesOf(`aws ${options.join(" ")} s3 ls s3://${name}`)).toEqual([]);
        expect(rulesOf(`aws ${options.join(" ")} s3 cp --recursive dist s3://${name}`)).toEqual([]);
      }),
      RUNS,
    );
  });

  it("environment deletes of the three clouds are critical; their list verbs are quiet", () => {
    fc.assert(
      fc.property(
        bucket,
        fc.constantFrom(
          "gcloud projects D N",
          "gcloud compute instances D N --zone z",
          "gcloud sql instances D N",
          "az group D -n N --yes",
          "az vm D -g rg -n N",
          "aws ec2 terminate-instances --instance-ids N",
          "aws rds delete-db-instance --db-instance-identifier N",
          "bq D -f -t ds.N",
        ),
        (name, template) => {
          const deleting = template.replace("D", "delete").replace("bq delete", "bq rm").replace("N", name);
          expect(rulesOf(deleting)).toEqual(["cloud-destructive-delete"]);
          expect(
            rulesOf(
              template
                .replace("D", "list")
                .replace("N", name)
                .replace(/terminate-instances|delete-db-instance/, "describe-instances"),
            ),
          ).toEqual([]);
        },
      ),
      RUNS,
    );
  });
});

describe("cluster deletes and their help", SLOW, () => {
  const name = fc.stringMatching(/^[a-z][a-z0-9-]{2,12}$/);
  const kubeGlobals = fc.array(fc.constantFrom("-n prod", "--context prod", "--kubeconfig k.yaml"), { maxLength: 2 });

  it("kubectl/oc delete of namespaces or --all, terraform destroy and helm uninstall alert; their dry runs do not", () => {
    fc.assert(
      fc.property(
        fc.constantFrom("kubectl", "oc"),
        kubeGlobals,
        fc.constantFrom("namespace N", "ns N", "pods --all", "all --all", "deployment N"),
        name,
        (tool, options, what, target) => {
          const command = `${tool} ${options.join(" ")} delete ${what.replace("N", target)}`;
          expect(rulesOf(command)).toEqual(["infra-kubectl-delete"]);
          expect(rulesOf(`${command} --dry-run=client`)).toEqual([]);
        },
      ),
      RUNS,
    );
    fc.assert(
      fc.property(
        fc.constantFrom("terraform", "tofu", "terragrunt"),
        fc.constantFrom("destroy", "destroy -auto-approve", "apply -destroy", "-chdir=infra destroy"),
        (tool, verb) => {
          expect(rulesOf(`${tool} ${verb}`)).toEqual(["infra-terraform-destroy"]);
          expect(rulesOf(`${tool} ${verb.replace(/apply|destroy$/, "plan").replace("destroy ", "plan ")}`)).toEqual([]);
        },
      ),
      RUNS,
    );
    fc.assert(
      fc.property(fc.constantFrom("uninstall", "delete", "del", "un"), name, (verb, release) => {
        expect(rulesOf(`helm --kube-context prod ${verb} ${release}`)).toEqual(["infra-helm-uninstall"]);
        expect(rulesOf(`helm ${verb} ${release} --dry-run`)).toEqual([]);
      }),
      RUNS,
    );
  });

  it("asking a destructive subcommand for its help runs nothing", () => {
    fc.assert(
      fc.property(
        fc.constantFrom(
          "kubectl delete namespace N",
          "terraform destroy",
          "tofu apply -destroy",
          "helm uninstall N",
          "gcloud projects delete N",
          "az group delete -n N",
        ),
        fc.constantFrom("--help", "-h"),
        name,
        (template, help, target) => {
          const command = template.replace("N", target);
          expect(rulesOf(command).length).toBe(1);
          expect(rulesOf(`${command} ${help}`)).toEqual([]);
        },
      ),
      RUNS,
    );
    expect(rulesOf("terraform destroy -help")).toEqual([]);
    expect(rulesOf("aws s3 rb help")).toEqual([]);
    // gsutil's -h sets a header: the delete still runs.
    expect(rulesOf("gsutil -h 'Cache-Control:no-store' rm -r gs://b")).toEqual(["cloud-destructive-delete"]);
  });
});

describe("git: stash and reset", SLOW, () => {
  it("dropping or clearing stashes warns, keeping them does not", () => {
    fc.assert(
      fc.property(
        fc.constantFrom("", "-C repo ", "--no-pager "),
        fc.constantFrom("drop", "drop stash@{1}", "drop -q", "clear"),
        fc.constantFrom("", "push -m wip", "pop", "apply", "list", "show -p"),
        (global, dropping, keeping) => {
          expect(rulesOf(`git ${global}stash ${dropping}`)).toEqual(["git-stash-drop"]);
          expect(rulesOf(`git ${global}stash ${keeping}`.trim())).toEqual([]);
        },
      ),
      RUNS,
    );
  });
});

describe("git: reset --merge/--keep and clean -fdx", SLOW, () => {
  it("reset --merge discards staged work and warns; reset --keep refuses to and is quiet", () => {
    fc.assert(
      fc.property(
        fc.constantFrom("", "-C repo ", "--no-pager "),
        fc.constantFrom("", " HEAD", " HEAD~1", " origin/main", " -q HEAD~2"),
        (global, target) => {
          expect(rulesOf(`git ${global}reset --merge${target}`)).toEqual(["git-discard-changes"]);
          expect(rulesOf(`git ${global}reset --keep${target}`)).toEqual([]);
        },
      ),
      RUNS,
    );
  });

  it("clean -f with -d, -x or -X warns in any flag order; a dry run or -f alone does not", () => {
    fc.assert(
      fc.property(
        fc.shuffledSubarray(["f", "d", "x"], { minLength: 3, maxLength: 3 }),
        fc.boolean(),
        fc.constantFrom("", "-C repo "),
        (flags, split, global) => {
          const written = split ? flags.map((flag) => `-${flag}`).join(" ") : `-${flags.join("")}`;
          expect(rulesOf(`git ${global}clean ${written}`)).toEqual(["git-clean-force"]);
          expect(rulesOf(`git ${global}clean ${written} -n`)).toEqual([]);
          expect(rulesOf(`git ${global}clean -f`)).toEqual([]);
        },
      ),
      RUNS,
    );
  });
});

describe("false alarms from real runs", SLOW, () => {
  const segment = fc.stringMatching(/^[a-z][a-z0-9_-]{0,8}$/);

  it("deleting a project's file under a home is not a critical-path delete; the home's own entries are", () => {
    fc.assert(
      fc.property(
        fc.constantFrom("/home/dev", "/Users/ann", "/root"),
        fc.array(segment, { minLength: 1, maxLength: 5 }),
        segment,
        (home, directories, file) => {
          const path = `${home}/${directories.join("/")}/${file}.py`;
          expect(rulesOf(`rm ${path}`, agentStep)).toEqual([]);
          expect(rulesOf(`rm -f ${path}`, workspace)).toEqual(["fs-delete-outside-workspace"]);
          expect(rulesOf(`rm ${home}/.bashrc`, agentStep)).toEqual(["fs-delete-critical-path"]);
          expect(rulesOf(`rm -rf ${home}`, agentStep)).toEqual(["fs-delete-critical-path"]);
        },
      ),
      RUNS,
    );
  });

  it("a filesystem made inside a regular file is quiet; on a device it is disk-format", () => {
    fc.assert(
      fc.property(
        fc.constantFrom("mkfs.ext4", "mkfs.xfs -f", "mkfs -t ext4", "mkswap", "wipefs -a", "mke2fs -q"),
        segment,
        fc.constantFrom("sda", "sdb1", "nvme0n1", "vdb", "mapper/vg-data"),
        (tool, image, device) => {
          expect(rulesOf(`${tool} ${image}.img`)).toEqual([]);
          expect(rulesOf(`${tool} /tmp/${image}.img`)).toEqual([]);
          expect(rulesOf(`${tool} /dev/${device}`)).toEqual(["disk-format"]);
        },
      ),
      RUNS,
    );
  });
});
