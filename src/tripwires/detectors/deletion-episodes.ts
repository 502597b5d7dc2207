import type { DestructiveRuleId } from "../rules/rule-definition.ts";

/**
 * Grouping of observed deletions into episodes, so that one destructive act alerts once.
 *
 * `rm -rf .git` is one decision, but a sandbox that reports every removed file turns it into
 * hundreds of `file_delete` events, each a violation on its own. Alerting on each would bury the
 * one alert that matters. So a run remembers, per rule, the directories it has alerted on: a
 * `file_delete` under such a directory within `quietMs` (event time) of the episode's last event
 * is counted as grouped instead of alerting again; after a quiet gap the next one alerts anew.
 * Commands (exec, git, sql) always alert, because each is a separate decision of the agent, and
 * they open episodes too, so the deletions that follow a command are grouped with its alert.
 */
export interface DeletionEpisode {
  ruleId: DestructiveRuleId;
  /** The directory the episode covers: the .git directory, or the deleted path's directory. */
  root: string;
  lastEventTime: number;
}

/** Episodes held per run; the least recently active is forgotten first (a bound on memory). */
export const MAX_DELETION_EPISODES = 16;

/** The directory an alert on this deleted path covers. */
export function episodeRoot(path: string, deletedByCommand: boolean): string {
  const git = /^(.*?\/\.git)(\/|$)/.exec(path);
  if (git?.[1] !== undefined) return git[1];
  // A command deleted the path itself (often a directory: `rm -rf /etc`); an observed file_delete
  // is one file, whose directory is what is being emptied.
  if (deletedByCommand) return path;
  const slash = path.lastIndexOf("/");
  return slash <= 0 ? "/" : path.slice(0, slash);
}

const covers = (root: string, path: string): boolean =>
  path === root || path.startsWith(root === "/" ? "/" : `${root}/`);

/**
 * Records one observed deletion (a `file_delete` finding). Returns true when it belongs to an
 * open episode (grouped: no new alert), false when it must alert (and opens an episode).
 */
export function groupObservedDeletion(
  episodes: DeletionEpisode[],
  ruleId: DestructiveRuleId,
  path: string,
  eventTime: number,
  quietMs: number,
): boolean {
  if (quietMs > 0) {
    for (const episode of episodes) {
      if (
        episode.ruleId !== ruleId ||
        !covers(episode.root, path) ||
        Math.abs(eventTime - episode.lastEventTime) > quietMs
      )
        continue;
      episode.lastEventTime = Math.max(episode.lastEventTime, eventTime);
      return true;
    }
  }
  openEpisode(episodes, ruleId, episodeRoot(path, false), eventTime);
  return false;
}

/** An alerted command's deletion opens (or refreshes) the episode its aftermath is grouped into. */
export function openEpisode(
  episodes: DeletionEpisode[],
  ruleId: DestructiveRuleId,
  root: string,
  eventTime: number,
): void {
  const known = episodes.find((episode) => episode.ruleId === ruleId && episode.root === root);
  if (known !== undefined) {
    known.lastEventTime = Math.max(known.lastEventTime, eventTime);
    return;
  }
  episodes.push({ ruleId, root, lastEventTime: eventTime });
  if (episodes.length <= MAX_DELETION_EPISODES) return;
  let oldest = 0;
  for (let index = 1; index < episodes.length; index++)
    if ((episodes[index]?.lastEventTime ?? 0) < (episodes[oldest]?.lastEventTime ?? 0)) oldest = index;
  episodes.splice(oldest, 1);
}
