import { existsSync } from "node:fs";

/**
 * The system's Chromium (Debian package `chromium`, which .ci/run installs when it is missing), or
 * CHROMIUM_PATH. Undefined when there is none: browser tests then skip and say why, except under CI,
 * where a missing browser is a failure of the set-up, not a reason to skip.
 */
export function chromiumPath(): string | undefined {
  const candidates = [
    process.env["CHROMIUM_PATH"],
    "/usr/bin/chromium",
    "/usr/bin/chromium-browser",
    "/usr/bin/google-chrome",
  ];
  return candidates.find((path): path is string => path !== undefined && path !== "" && existsSync(path));
}

export const NO_BROWSER_REASON =
  "no Chromium found (set CHROMIUM_PATH, or `apt-get install -y chromium`; .ci/run installs it)";

/** Where browser tests keep their screenshots: git-ignored, kept after the run for a look. */
export const ARTIFACT_DIR = new URL("../../test-artifacts/", import.meta.url).pathname;
