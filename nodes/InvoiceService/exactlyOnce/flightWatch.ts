/**
 * Which flight of a key a waiting delivery watches. A key's flights are alike in the store (`claim:` and `open:`),
 * so a flight given back and another claimed between two looks of a waiter would look like one flight to it, and
 * it would give up on the new one far too early (issue 42). So a flight's end is written down for the waiters:
 * - a waiter, from its second look on, checks `watched:<key>` (adding it: the key is watched) and the key's end
 *   marks `end:<n> <key>` (n = 1..END_MARKS; its check adds those that are not there, and its removal takes them
 *   out again): which of them the row holds is the key's sign;
 * - a flight that ends other than created (given back, unknown) while the key is watched adds its lowest missing
 *   end mark (all there: they all go), in the same hold as its end: the sign changes with every such end (a give-up
 *   ends the flight too: below);
 * - a waiter gives up only on the flight with the sign it watched for the whole wait, with `watched:` there all
 *   along (a look that finds it missing starts the watch again: an end meanwhile may not have been marked).
 * - a waiter whose wait is over (its look finds the key created or unknown, gives up on it, or finds it free and
 *   claims it) takes out `watched:` and every end mark of the key: the flight it watched has ended, so another
 *   waiter's next look, missing `watched:`, starts its watch again, as that end would make it. Nothing of a key's
 *   watch stays in the row after its last waiter (rowBatch.ts has room for WATCHED_KEYS keys waited for at once
 *   beyond History Size).
 * A created key is not followed by a new flight (only History Size's eviction could do it). The sign repeats only
 * after END_MARKS + 1 ends between two looks of one waiter. `watched:` stays while a waiter waits, so that a later
 * end is marked while any waiter may still watch.
 */

export const END_MARKS = 16;

const WATCHED = 'watched:';
const END = 'end:';

export const watchedEntry = (key: string) => `${WATCHED}${key}`;

/** The key's end marks, lowest first. */
export const endEntries = (key: string) =>
	Array.from({ length: END_MARKS }, (_, index) => `${END}${index + 1} ${key}`);

/** The key's sign: which end marks the row held before the check. */
export function signOf(key: string, held: Set<string>): string {
	return endEntries(key)
		.map((entry, index) => (held.has(entry) ? index + 1 : 0))
		.filter(Boolean)
		.join(',');
}

/**
 * The end marks a check of all of them added that the row must not keep (`remove`): all those it added, unless a
 * flight ends (`ending`): then the lowest one added stays, the sign's change; when every mark was there already,
 * they all go (the sign changes to none).
 */
export function endMarksToRemove(key: string, held: Set<string>, ending: boolean): string[] {
	const entries = endEntries(key);
	const added = entries.filter((entry) => !held.has(entry));
	if (!ending) return added;
	return added.length === 0 ? entries : added.slice(1);
}

/** What a waiter sends with its look: the sign it watched so far (none at its first look that watches). */
export interface FlightWatch {
	sign?: string;
}
