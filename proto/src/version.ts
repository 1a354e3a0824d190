/** Versions of the Cmd service this build speaks, oldest first. */
export const CMD_VERSIONS: readonly number[] = [1];

/**
 * The highest version both sides speak, or undefined when they share none. The handler calls
 * Info first and refuses a launcher it cannot talk to instead of guessing.
 */
export function highestCommonVersion(ours: readonly number[], theirs: readonly number[]): number | undefined {
  const shared = ours.filter((v) => theirs.includes(v));
  return shared.length === 0 ? undefined : Math.max(...shared);
}
