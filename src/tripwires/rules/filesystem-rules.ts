import type { DestructiveRule } from "./rule-definition.ts";

/** Deleting, overwriting, formatting and opening up files, disks and system paths. (rule-definition.ts holds the ids; destructive-rules.ts the lookup.) */
export const FILESYSTEM_RULES: readonly DestructiveRule[] = [
  {
    id: "fs-delete-critical-path",
    version: 2,
    severity: "critical",
    description:
      "Recursive delete of `/`, a home directory or a system directory (/etc, /usr, ...), or of their " +
      "contents (`rm -rf *` there); any delete of a file in a system directory or of a home " +
      "directory's own key, login or config entry (~/.ssh, ~/.bashrc, ~/.config); also `find <such " +
      "root> -delete`. A project's files under a home directory are not critical.",
    alerting: [
      "rm -rf /",
      "rm -rf ~",
      "rm -rf $HOME",
      "sudo rm -rf /etc",
      "cd / && rm -rf *",
      "find / -name '*.log' -delete",
      "rm --recursive --force /",
      "bash -c 'rm -rf /'",
      "rm ~/.bashrc",
      "rm -rf /home/dev",
    ],
    benign: ["echo 'rm -rf /'", "rm -rf ./build", "ls /"],
  },
  {
    id: "fs-delete-workspace-root",
    version: 1,
    severity: "critical",
    description:
      "Recursive delete of the workspace root itself or all of its contents (`rm -rf *` / `rm -rf .` in the root, `find . -delete` with no filter).",
    alerting: ["rm -rf /work/repo", "rm -rf *", "rm -rf .", "find . -delete"],
    benign: ["rm -rf node_modules", "rm -rf dist", "find . -name '*.pyc' -delete", "rm -rf ./build/*"],
  },
  {
    id: "fs-delete-git-dir",
    version: 1,
    severity: "critical",
    description:
      "Recursive delete of a `.git` directory or a subtree of it (history loss); a single `*.lock` file is not.",
    alerting: ["rm -rf .git", "rm -rf .git/objects", "rm -r -f ./.git"],
    benign: ["rm -f .git/index.lock", "rm -rf .github/tmp", "rm .gitignore"],
  },
  {
    id: "fs-delete-outside-workspace",
    version: 1,
    severity: "critical",
    description:
      "Any `rm` (or `find -delete`) of a path outside the workspace that is not a scratch dir (/tmp, /var/tmp): the run has no business there.",
    alerting: ["rm -rf ../other-project", "rm ~/notes.txt", "rm -rf ~/projects"],
    benign: ["rm -rf /tmp/build-123", "rm -f /tmp/out.txt"],
  },
  {
    id: "fs-delete-dynamic-target",
    version: 1,
    severity: "warning",
    description:
      'Recursive delete whose target cannot be known statically (unset-variable risk: `rm -rf "$DIR/"` with DIR empty is `rm -rf /`), including `xargs rm -r` fed from an unknown source.',
    alerting: ['rm -rf "$DIR/"', "cat list.txt | xargs rm -rf"],
    benign: ["rm -rf node_modules/$pkg", "find . -name node_modules -type d | xargs rm -rf"],
  },
  {
    id: "fs-shred",
    version: 1,
    severity: "critical",
    description: "`shred` overwrites data beyond recovery, wherever it runs.",
    alerting: ["shred -u secrets.txt", "shred /dev/sda"],
    benign: ["echo shred"],
  },
  {
    id: "disk-format",
    version: 2,
    severity: "critical",
    description:
      "Creating a filesystem or wiping signatures on a device (`/dev/…`, or a target that cannot be " +
      "resolved): `mkfs`, `mkfs.*`, `mke2fs`, `mkswap`, `wipefs`. A filesystem made inside a regular " +
      "file (a disk image) erases only that file.",
    alerting: ["mkfs.ext4 /dev/sdb1", "sudo wipefs -a /dev/sda", 'mkfs.ext4 "$DEV"'],
    benign: ["man mkfs", "mkfs.ext4 disk.img", "mkswap /swapfile"],
  },
  {
    id: "disk-raw-write",
    version: 1,
    severity: "critical",
    description: "Writing to a block device: `dd of=/dev/<disk>` or a shell redirect into one.",
    alerting: ["dd if=/dev/zero of=/dev/sda bs=1M", "echo x > /dev/sda", "cat image.iso > /dev/nvme0n1"],
    benign: [
      "dd if=/dev/zero of=/dev/null count=1",
      "echo hi > /dev/null",
      "dd if=/dev/urandom of=./blob bs=1k count=1",
    ],
  },
  {
    id: "perm-recursive-system",
    version: 1,
    severity: "critical",
    description:
      "Recursive world-writable chmod (777, a+w, o+w, ...) or recursive chown of `/`, home or a system directory.",
    alerting: ["chmod -R 777 /", "sudo chmod -R a+rwx /etc", "chown -R nobody /usr"],
    benign: ["chmod -R 777 ./build", "chmod 644 README.md", "chmod -R 755 /work/repo/scripts"],
  },
  {
    id: "fs-write-system-file",
    version: 1,
    severity: "critical",
    description:
      "Writing into system files (/etc, /boot, /usr except /usr/local, /bin, /sbin, /lib*) by " +
      "redirect, tee, cp, mv, install, dd, sed -i, sponge, truncate or find -fprint/-fls; truncating a " +
      "system log (/var/log); writing any user's ~/.ssh/authorized_keys (grants login). The same paths " +
      "judge file_write events and agents' file-writing tools (Write, Edit, MultiEdit).",
    alerting: [
      "echo '127.0.0.1 x' > /etc/hosts",
      "echo key | sudo tee -a /root/.ssh/authorized_keys",
      "sudo cp evil /usr/bin/ls",
      "truncate -s 0 /var/log/auth.log",
      "find . -fprint /etc/cron.d/x",
    ],
    benign: ["cat /etc/hosts", "echo x >> /var/log/app.log", "sudo cp tool /usr/local/bin/", "tee build.log"],
  },
  {
    id: "fs-write-shell-profile",
    version: 1,
    severity: "warning",
    description:
      "Writing a home directory's shell start-up files (~/.bashrc, ~/.profile, ~/.bash_profile, " +
      "~/.zshrc, ...): code every later shell runs. Agents append PATH lines there legitimately, so a " +
      "warning.",
    alerting: ["echo 'export PATH=$PATH:/opt/x' >> ~/.bashrc", "cp dotfiles/profile ~/.profile"],
    benign: ["cat ~/.bashrc", "source ~/.bashrc", "grep PATH ~/.profile"],
  },
];
