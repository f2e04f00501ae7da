import type { IDataObject, IExecuteFunctions } from 'n8n-workflow';
import { NodeOperationError } from 'n8n-workflow';

import { clip } from '../helpers/clip';
import { requireIdempotencyKey } from '../helpers/idempotencyKey';
import { KeyStore } from './keyStore';
import { newResendCode, resendWayForward } from './resendCodes';
import { storeItemError, type KeysPurpose } from './lockErrors';
import { RowLock, systemClock, type Clock } from './rowLock';
import type { ClaimAnswer, NodeRow, Outcome } from './rowOps';
import { KEYS_TIMING, type KeysTiming } from './timing';

/** The most characters of a key a message shows: the key is the user's data, of any size. */
const MAX_KEY_SHOWN = 200;

/**
 * Idempotency keys: an item whose key already created a record through this node is not sent again. The keys
 * live in n8n's processed-data store (the one Remove Duplicates uses: n8n's own database, shared by queue-mode
 * workers), scope "node", each in one of three states (in flight, created, outcome unknown; given back = absent),
 * changed only under a lock across n8n processes (keyStore.ts, rowLock.ts; docs/how-it-works.md, "Idempotency
 * Keys across processes"). A key is claimed just before its item is sent and settled with the item's outcome.
 */

/** A claimed key (in flight): settle it with the item's outcome. */
export interface Claim {
	/** The record exists: later deliveries go to Already Created. */
	created(): Promise<void>;
	/** The service may or may not hold the record: later deliveries fail until checked (this resend code). */
	unknown(code: string): Promise<void>;
	/** Nothing was created, for certain: the key is given back, and a re-delivery is sent. */
	giveBack(): Promise<void>;
}

/**
 * What a claim found: "new" holds the key for this item (`resent`: an unknown key taken over with this resend
 * code); the others mean "do not send" (`code`: the claim, or an earlier one of this run, found the key in flight
 * elsewhere past the wait and made it unknown, with this resend code).
 */
export type ClaimResult =
	| { state: 'new'; claim: Claim; resent?: string }
	| ({ state: 'created'; where: 'earlier execution' | 'this run' } & LeftInFlight)
	| ({ state: 'unknown'; code?: string } & LeftInFlight);

/**
 * `leftInFlight`: n8n's database took the claim's check but not the removal after it, so the key now looks in flight
 * (a later delivery waits for it, then fails as unknown); the answer stands.
 */
interface LeftInFlight {
	leftInFlight?: true;
}

/** A claim's answer once the key is not in flight elsewhere (or the wait is over). */
type FoundAnswer = Exclude<ClaimAnswer, 'flight' | { flight: string }>;

/**
 * The n8n process the keys live in: its clock and what its runs share. One for the process that loads this module;
 * the simulation (test/simulation/) makes one per simulated process, each with its own virtual clock.
 */
export interface KeysProcess {
	/** The waits for flights, the claims ahead and the marks' delay are read on it (the lock's: lockOf's). */
	readonly clock: Clock;
	/** The limits of its waits and holds (timing.ts; the lock's through lockOf). */
	readonly timing: KeysTiming;
	/** Each workflow's store in this process (by workflow id), while it has work: its nodes' changes go together. */
	stores: Map<string, KeyStore>;
	/** Keys whose item is in flight in this process: a second claim waits for the first item's outcome. */
	inFlight: Map<string, Promise<void>>;
	/** Code entries a removal could not take out, by node row (NodeRow.codesLeftIn). */
	codesLeftIn: Map<string, Set<string>>;
	/** The lock of a workflow's store (the simulation watches who holds it). */
	lockOf(workflowId: string, helpers: IExecuteFunctions['helpers']): RowLock;
}

/**
 * A process's keys, with their own stores, keys in flight, code entries left in and turns at each lock. The lock keeps
 * the system's clock: a test that moves the node's clock on means the node's, not the lock's.
 */
export function keysProcess({
	clock = systemClock,
	timing = KEYS_TIMING,
}: { clock?: Clock; timing?: KeysTiming } = {}): KeysProcess {
	const turns = new Map<string, Promise<void>>();
	return {
		clock,
		timing,
		stores: new Map(),
		inFlight: new Map(),
		codesLeftIn: new Map(),
		lockOf: (workflowId, helpers) =>
			new RowLock(workflowId, helpers, systemClock, turns, timing.lock),
	};
}

/**
 * This process: where the node's keys are wired to n8n's process. The tests that run the node in-process with other
 * timings give the router a keysProcess of their own.
 */
export const thisProcess: KeysProcess = keysProcess();

/** What the node's options say of its keys (read where the options are: actions/keys.descriptions.ts). */
export interface KeySettings {
	/** How many keys the node's row keeps. */
	historySize: number;
	/**
	 * How long another process's create of the same key may take: its retry budget and time-out. A claim follows
	 * a key in flight in another process this long and the flight margin (timing.ts) before it counts as unknown.
	 */
	createWaitMs: number;
	/** The key's field, as an item's error names it. */
	keyField: string;
	/**
	 * Whose keys these are: the user's Idempotency Keys, or the node's own for the items a retried execution sends
	 * (actions/itemStep.ts, "retry keys"): a store error names what could not be checked.
	 */
	purpose: KeysPurpose;
}

export class IdempotencyKeys {
	/** Keys this run created (for "earlier in this run"). */
	private readonly createdHere = new Set<string>();
	/** Keys this run gave up waiting for, with the resend code it gave them: a later item with one is told it too. */
	private readonly gaveUpHere = new Map<string, string>();
	/** The store this run last wrote through, and the hold of its lock that wrote it. */
	private lastWrite?: { store: KeyStore; hold: number };

	/** This node's row of the store. */
	private readonly row: NodeRow;
	/** How long a claim follows a key in flight in another process before it counts as unknown. */
	private readonly flightWaitMs: number;

	private constructor(
		private readonly context: IExecuteFunctions,
		scope: string,
		private readonly settings: KeySettings,
		private readonly process: KeysProcess,
	) {
		this.row = {
			scope,
			helpers: context.helpers,
			historySize: settings.historySize,
			codesLeftIn: process.codesLeftIn,
		};
		this.flightWaitMs = settings.createWaitMs + process.timing.flight.marginMs;
	}

	/**
	 * The keys of this run. Throws when a Remove Duplicates node in this workflow shares the workflow's row of the
	 * store.
	 */
	static of(
		context: IExecuteFunctions,
		settings: KeySettings,
		process: KeysProcess = thisProcess,
	): IdempotencyKeys {
		const conflict = removeDuplicatesSharingTheRow(context);
		if (conflict) {
			throw new NodeOperationError(
				context.getNode(),
				`The Remove Duplicates node "${conflict}" keeps its history for the whole workflow (Scope: Workflow), where this node keeps its Idempotency Keys`,
				{
					description:
						'Nothing was sent. Set that node\'s Scope to "Node" (Options → Scope), or remove this node\'s Idempotency Key, and run again.',
				},
			);
		}
		const scope = `${context.getWorkflow().id ?? ''} ${context.getNode().id}`;
		return new IdempotencyKeys(context, scope, settings, process);
	}

	/** The clock of the process the keys live in (RunClaims paces its claims ahead and marks on it). */
	get clock(): Clock {
		return this.process.clock;
	}

	/** The timings of the process the keys live in (RunClaims holds its claims ahead by them). */
	get timing(): KeysTiming {
		return this.process.timing;
	}

	/** How many keys the node's row keeps (keys in flight included). */
	get historySize(): number {
		return this.settings.historySize;
	}

	/**
	 * An item's key from its Idempotency Key value (`rawOf`: the parameter as written, for a message). Throws
	 * FieldError for a blank value (it would turn the check off) and for one that is not text or a number.
	 */
	readKey(value: unknown, rawOf: () => unknown): string {
		return requireIdempotencyKey(value, rawOf, this.settings.keyField);
	}

	/**
	 * Claims the key for this item. A key in flight in this process waits for that item's outcome; in flight in
	 * another process, for up to Max Retry Wait + Timeout + a margin, then it counts as unknown (with a resend code
	 * of its own). An unknown key whose resend code is among `resendCodes` is taken over as a new claim.
	 */
	async claim(
		key: string,
		itemIndex: number,
		{ resendCodes }: { resendCodes: string[] },
	): Promise<ClaimResult> {
		const done = await this.turnInProcess(key);
		let answer: FoundAnswer;
		let sentAt: number;
		let leftInFlight: boolean;
		// The resend code the key gets if this claim gives up waiting for another process's flight.
		const expiryCode = newResendCode();
		try {
			({ answer, sentAt, leftInFlight } = await this.waitOutFlight(key, resendCodes, expiryCode));
		} catch (error) {
			done();
			throw storeItemError(this.context, error, itemIndex, this.settings.purpose);
		}
		const left = leftInFlight ? ({ leftInFlight: true } as const) : {};
		if (answer === 'created') {
			done();
			return {
				state: 'created',
				where: this.createdHere.has(key) ? 'this run' : 'earlier execution',
				...left,
			};
		}
		if (answer === 'unknown') {
			done();
			return { state: 'unknown', code: this.gaveUpHere.get(key), ...left };
		}
		if (answer === 'expired') {
			done();
			this.gaveUpHere.set(key, expiryCode);
			return { state: 'unknown', code: expiryCode, ...left };
		}
		return {
			state: 'new',
			claim: this.held(key, sentAt, done),
			...(typeof answer === 'object' && 'taken' in answer ? { resent: answer.taken } : {}),
		};
	}

	/**
	 * Waits for the key's item in flight in this process, if any, and takes the key's turn here; `done` gives it back
	 * (the item's outcome is settled, or the claim found it need not be sent).
	 */
	private async turnInProcess(key: string): Promise<() => void> {
		const id = `${this.row.scope} ${key}`;
		const { inFlight } = this.process;
		for (let pending = inFlight.get(id); pending; pending = inFlight.get(id)) await pending;
		let settle!: () => void;
		inFlight.set(id, new Promise<void>((resolve) => (settle = resolve)));
		return () => {
			inFlight.delete(id);
			settle();
		};
	}

	/** The claim this item holds (its claim sent at `sentAt`): settled with the item's outcome. */
	private held(key: string, sentAt: number, done: () => void): Claim {
		// Another process gives up waiting for this key only the flight margin or more after it first saw this very
		// flight (flightWatch.ts), so after this claim was sent: a created mark before half that needs no second check
		// (keyStore.ts).
		const { marginMs, queryDelayMs } = this.process.timing.flight;
		const noExpiryBefore = sentAt + marginMs / 2;
		// Another process running this node gives up on this flight no sooner than its flight wait after this claim was
		// written: an outcome sent later than lateAfter might land after that, on a later flight of the key.
		const lateAfter = sentAt + this.flightWaitMs - queryDelayMs;
		const settleAs = async (outcome: Outcome, code?: string) => {
			try {
				const store = this.store();
				await store.settle(this.row, key, outcome, code, { noExpiryBefore, lateAfter });
				this.wroteIn(store);
				if (outcome === 'created') this.createdHere.add(key);
			} finally {
				done();
			}
		};
		return {
			created: async () => await settleAs('created'),
			unknown: async (code) => await settleAs('unknown', code),
			giveBack: async () => await settleAs('givenBack'),
		};
	}

	/**
	 * The key's answer once no other process has it in flight (or the wait is over: then it is unknown), when the
	 * claim that gave it was sent, and whether n8n's database left the key looking in flight after it. From its
	 * second look on, the claim watches the flight (flightWatch.ts): the wait counts from the first look that saw the
	 * flight it watches, and starts again whenever that flight has ended and another holds the key.
	 */
	private async waitOutFlight(
		key: string,
		codes: string[],
		expiryCode: string,
	): Promise<{ answer: FoundAnswer; sentAt: number; leftInFlight: boolean }> {
		let watch: { sign?: string; since?: number } | undefined;
		const { clock } = this.process;
		const { pollMinMs, pollMaxMs } = this.process.timing.flight;
		let delay = pollMinMs;
		for (;;) {
			const sentAt = clock.now();
			const expireFlight = watch?.since !== undefined && sentAt - watch.since >= this.flightWaitMs;
			const store = this.store();
			let leftInFlight = false;
			const answer = await store.check(this.row, key, {
				codes,
				...(watch ? { watch: { sign: watch.sign } } : {}),
				expireFlight,
				expiryCode,
				onLeftInFlight: () => (leftInFlight = true),
			});
			this.wroteIn(store);
			if (answer === 'flight') watch = {};
			else if (typeof answer === 'object' && 'flight' in answer) {
				if (!answer.same) watch = { sign: answer.flight, since: clock.now() };
			} else return { answer, sentAt, leftInFlight };
			await clock.sleep(delay + Math.floor(clock.random() * delay));
			delay = Math.min(delay * 2, pollMaxMs);
		}
	}

	/**
	 * Resolves once the lock that wrote this run's last change is given back (answers come before that): the
	 * node returns after it, so that no process ends with the lock still taken.
	 */
	async written(): Promise<void> {
		if (this.lastWrite) await this.lastWrite.store.unlocked(this.lastWrite.hold);
	}

	private wroteIn(store: KeyStore): void {
		this.lastWrite = { store, hold: store.currentHold };
	}

	/** This workflow's store in this process (a new one when the last has finished its work). */
	private store(): KeyStore {
		const workflowId = this.context.getWorkflow().id ?? '';
		const { stores, clock } = this.process;
		let store = stores.get(workflowId);
		if (!store) {
			const created: KeyStore = new KeyStore(
				this.process.lockOf(workflowId, this.context.helpers),
				() => {
					if (stores.get(workflowId) === created) stores.delete(workflowId);
				},
				clock,
			);
			store = created;
			stores.set(workflowId, store);
		}
		return store;
	}
}

/**
 * The item error of a key whose outcome is unknown: never Already Created, and the way to go on. `code`: this run
 * made it unknown (another process held it in flight past the wait), with this resend code; else an earlier
 * execution gave the code: the one that sent it without an answer, or one that gave up waiting for it.
 */
export function unknownKeyError(
	context: IExecuteFunctions,
	key: string,
	itemIndex: number,
	code?: string,
): NodeOperationError {
	const check =
		code === undefined
			? 'Check in the service whether the record exists: if it does, the event is done; if it does not, enter the key\'s resend code in Options → Resend Unknown Outcomes Of and retry this execution with the current workflow. The code is in an earlier execution of this event: the error of the one that sent it without an answer (the item\'s "outcome unknown" error), or of one that gave up waiting for it (or its warning, for an item it never reached).'
			: `Another execution was still sending with this key when the wait ended: if the record is in the service, the event is done. ${resendWayForward(code)}`;
	return new NodeOperationError(
		context.getNode(),
		`Item ${itemIndex}: the outcome of the create with Idempotency Key "${clip(key, MAX_KEY_SHOWN)}" is unknown: the service may or may not have the record`,
		{ itemIndex, description: `Not sent, so that it is not created twice. ${check}` },
	);
}

/** The name of a Remove Duplicates node connected to this one that keeps its history at workflow scope. */
function removeDuplicatesSharingTheRow(context: IExecuteFunctions): string | undefined {
	const name = context.getNode().name;
	const options = { includeNodeParameters: true };
	const around = [
		...context.getParentNodes(name, options),
		...context.getChildNodes(name, options),
	];
	const connected = [
		...around,
		...context
			.getParentNodes(name, options)
			.flatMap((parent) => context.getChildNodes(parent.name, options)),
	];
	const found = connected.find(
		({ type, parameters, disabled }) =>
			!disabled &&
			type === 'n8n-nodes-base.removeDuplicates' &&
			['removeItemsSeenInPreviousExecutions', 'clearDeduplicationHistory'].includes(
				String(parameters?.operation),
			) &&
			((parameters?.options as IDataObject | undefined)?.scope ?? parameters?.scope) === 'workflow',
	);
	return found?.name;
}
