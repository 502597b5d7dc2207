/**
 * Files whose content is a credential. Matched on the resolved path's segments, wherever the home
 * directory is (`/root/.ssh/id_rsa`, `/home/u/.ssh/id_rsa`, `~/.ssh/id_rsa` all count).
 * Public keys and known_hosts are not secrets; `.env.example`-style templates are not either.
 */
const CREDENTIAL_PATTERNS: readonly RegExp[] = [
  /(^|\/)\.ssh\/?$/,
  /(^|\/)\.ssh\/(?!known_hosts|authorized_keys|[^/]*\.pub$)[^/]+$/,
  /(^|\/)\.env(\.(?!example$|sample$|template$|dist$)[^/]+)?$/,
  /(^|\/)\.aws\/credentials$/,
  /(^|\/)\.config\/gcloud(\/|$)/,
  /(^|\/)\.kube\/config$/,
  /(^|\/)\.netrc$/,
  /(^|\/)\.docker\/config\.json$/,
  /(^|\/)\.git-credentials$/,
  /(^|\/)\.pgpass$/,
];

export function isCredentialPath(resolvedPath: string): boolean {
  return CREDENTIAL_PATTERNS.some((pattern) => pattern.test(resolvedPath));
}
