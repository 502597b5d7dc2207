/**
 * A progress line on a terminal (stderr), redrawn at most ten times a second; silent when stderr
 * is not a terminal, so logs and CI output stay clean.
 */
export function progressReporter(label: string, totalBytes: number): { update(bytesRead: number): void; done(): void } {
  const enabled = process.stderr.isTTY === true;
  const started = performance.now();
  let lastDraw = 0;
  return {
    update(bytesRead: number): void {
      if (!enabled) return;
      const now = performance.now();
      if (now - lastDraw < 100) return;
      lastDraw = now;
      const share = totalBytes > 0 ? Math.min(1, bytesRead / totalBytes) : 0;
      const width = 30;
      const filled = Math.round(share * width);
      const rate = bytesRead / 1_048_576 / Math.max(0.001, (now - started) / 1000);
      process.stderr.write(
        `\r${label} [${"#".repeat(filled)}${".".repeat(width - filled)}] ${(share * 100).toFixed(0).padStart(3)}%  ${rate.toFixed(1)} MiB/s`,
      );
    },
    done(): void {
      if (enabled) process.stderr.write("\r\u001b[K");
    },
  };
}
