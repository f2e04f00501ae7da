/**
 * Runs `worker(index)` for indexes 0..count-1 with at most `limit` running at once, taking indexes in order.
 * Stops handing out new indexes once `shouldStop()` is true; the ones already running finish.
 * `worker` is expected to handle its own errors.
 */
export async function forEachConcurrently(
	count: number,
	limit: number,
	worker: (index: number) => Promise<void>,
	shouldStop: () => boolean = () => false,
): Promise<void> {
	let next = 0;
	const lane = async () => {
		while (next < count && !shouldStop()) {
			const index = next++;
			await worker(index);
		}
	};
	await Promise.all(Array.from({ length: Math.max(1, Math.min(limit, count)) }, lane));
}
