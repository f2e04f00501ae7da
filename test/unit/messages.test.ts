// What a builder reads (issue 52): every message the node can produce, listed with its length, so that a title over
// MAX_TITLE_CHARS or a word of the engine's (docs/how-it-works.md's words: in flight, claim, lock, hold, take over,
// give back, processed-data store) cannot creep in. Two nets: every string written in nodes/ and credentials/ is
// scanned for those words (a new message is caught wherever it is written), and each message factory is run with
// the longest inputs it takes (titles cut only by fitTitle, which every item error passes through: asNodeError).
import * as fs from 'fs';
import * as path from 'path';
import * as ts from 'typescript';
import { NodeOperationError, type IExecuteFunctions, type INode } from 'n8n-workflow';

import { asNodeError } from '../../nodes/InvoiceService/actions/itemErrors';
import { unknownKeyError } from '../../nodes/InvoiceService/exactlyOnce/idempotencyKeys';
import {
	asLockError,
	LockError,
	leftInFlightError,
	storeItemError,
	tooLateError,
} from '../../nodes/InvoiceService/exactlyOnce/lockErrors';
import { readResendCodes } from '../../nodes/InvoiceService/exactlyOnce/resendCodes';
import { RunRecord } from '../../nodes/InvoiceService/exactlyOnce/runRecord';
import {
	keyWarnings,
	noCounts,
	runHints,
	withStopReport,
} from '../../nodes/InvoiceService/exactlyOnce/runReport';
import { requireIdempotencyKey } from '../../nodes/InvoiceService/helpers/idempotencyKey';
import { fitTitle, MAX_TITLE_CHARS } from '../../nodes/InvoiceService/helpers/title';
import {
	parseLineItems,
	requireChoice,
	requireCurrency,
	requireCustomerId,
	requireEmail,
	requirePositiveAmountCents,
	requirePriceCents,
	requireText,
} from '../../nodes/InvoiceService/helpers/validate';
import {
	answerTooLarge,
	httpFailure,
	redirectFailure,
	unexpectedAnswer,
} from '../../nodes/InvoiceService/transport/answerFailures';
import { notAPdf, unusableUrl } from '../../nodes/InvoiceService/transport/download';
import {
	cancelledFailure,
	createdButNoPdf,
	deadlineFailure,
	downloadDeadlineFailure,
	fileTooLarge,
	heldPastRetryWait,
	keyRefusedEarlier,
	type Failure,
} from '../../nodes/InvoiceService/transport/errors';
import { networkFailure } from '../../nodes/InvoiceService/transport/networkFailures';
import { credentialProblem, nodeApiError } from '../../nodes/InvoiceService/transport/nodeError';

/** The engine's words: docs/how-it-works.md's alone (plain English "held back", "holds 5" are not these). */
const ENGINE_WORDS =
	/\bin flight\b|\bclaim(s|ed|ing)?\b|\block(s|ed|ing)?\b|\bhold(s|ing)?\b(?! back)|\bheld\b(?! back)|\b(take[sn]?|taking|took) over\b|\b(give[sn]?|giving|given|gave) back\b|processed-data/i;

/** A hint (no description to hold the rest) naming one item: the longest today is 382 characters. */
const MAX_HINT_CHARS = 400;

/** Strings of the node that are names, never shown: the store's entries of the lock and of claims. */
const INTERNAL_NAMES = new Set(['invoice-service idempotency lock', 'claim:', 'no lock']);

const node = { name: 'Invoice Service', type: 'n8n-nodes-invoice-service.invoiceService' } as INode;
const context = { getNode: () => node, getExecuteData: () => ({}) } as unknown as IExecuteFunctions;
const LONG = 'x'.repeat(2_000);
const LONG_URL = `https://${'sub.'.repeat(40)}example.com/api/1.1/wf/create-customer`;
const call = { endpoint: 'create-customer', url: LONG_URL };

/** Every string literal and template written in these folders, with where. */
function writtenStrings(...folders: string[]): Array<{ where: string; text: string }> {
	const files = folders.flatMap((folder) =>
		fs
			.readdirSync(folder, { recursive: true, encoding: 'utf8' })
			.filter((file) => file.endsWith('.ts'))
			.map((file) => path.join(folder, file)),
	);
	const found: Array<{ where: string; text: string }> = [];
	for (const file of files) {
		const source = ts.createSourceFile(
			file,
			fs.readFileSync(file, 'utf8'),
			ts.ScriptTarget.Latest,
			true,
		);
		const visit = (written: ts.Node): void => {
			// A template's written text: its parts around the expressions (`${}` in their place).
			const text =
				ts.isStringLiteral(written) || ts.isNoSubstitutionTemplateLiteral(written)
					? written.text
					: ts.isTemplateExpression(written)
						? [written.head.text, ...written.templateSpans.map((span) => span.literal.text)].join(
								'${}',
							)
						: undefined;
			if (text !== undefined && !ts.isImportDeclaration(written.parent)) {
				const line = source.getLineAndCharacterOfPosition(written.getStart()).line + 1;
				found.push({ where: `${file}:${line}`, text });
				if (ts.isStringLiteral(written) || ts.isNoSubstitutionTemplateLiteral(written)) return;
			}
			ts.forEachChild(written, visit);
		};
		visit(source);
	}
	return found;
}

/** What an error a builder sees says: its title and description, after asNodeError (every item error's way). */
function shown(error: unknown, itemIndex = 99_999): { title: string; description: string } {
	const nodeError = asNodeError(context, error, itemIndex);
	return { title: nodeError.message, description: String(nodeError.description ?? '') };
}

const fieldError = (check: () => unknown) => {
	try {
		check();
	} catch (error) {
		return shown(error);
	}
	throw new Error('no error');
};

const failures: Array<[string, Failure]> = [
	...[400, 401, 403, 404, 409, 418, 429, 500, 502, 503].map(
		(httpCode) =>
			[
				`HTTP ${httpCode}`,
				httpFailure({ httpCode, serviceMessage: LONG, bodyKind: 'json' }, call),
			] as [string, Failure],
	),
	['HTTP 200, HTML', httpFailure({ httpCode: 200, bodyKind: 'html' }, call)],
	['HTTP 200, not JSON', httpFailure({ httpCode: 200, bodyKind: 'text' } as never, call)],
	['answer without a field', unexpectedAnswer({ [LONG]: 1 }, 'id', call)],
	[
		'answer too large',
		answerTooLarge(call, { statusCode: 200, contentType: LONG, maxBytes: 1e6, announced: 6e7 }),
	],
	['redirect, nowhere', redirectFailure(302, undefined, call)],
	['redirect, somewhere', redirectFailure(302, LONG_URL, call)],
	...['ENOTFOUND', 'EAI_AGAIN', 'ECONNREFUSED', 'EPROTO', 'ETIMEDOUT', 'ECONNRESET', undefined].map(
		(code) => [`network ${code ?? 'error'}`, networkFailure(code, LONG, call)] as [string, Failure],
	),
	['deadline', deadlineFailure(call, 30_000)],
	['stopped', cancelledFailure(call)],
	['waited past Max Retry Wait', heldPastRetryWait(60_000)],
	['key refused earlier', keyRefusedEarlier()],
	...[
		downloadDeadlineFailure(30_000),
		fileTooLarge(50 * 1024 * 1024, 64 * 1024 * 1024),
		unusableUrl(LONG),
		unusableUrl(`https://user:secret@${'sub.'.repeat(40)}example.com/x.pdf`),
		notAPdf({ data: Buffer.from(LONG), contentType: LONG } as never, LONG_URL)!,
	].map((failure, n) => [`PDF ${n}`, createdButNoPdf(failure, `inv_${LONG}`)] as [string, Failure]),
];

/** Every message factory's words for the longest inputs: titles and descriptions. */
function catalogue(): Array<{ what: string; title: string; description: string }> {
	const list: Array<{ what: string; title: string; description: string }> = [];
	const add = (what: string, words: { title: string; description: string }) =>
		list.push({ what, ...words });
	for (const [what, failure] of failures)
		add(
			what,
			shown(
				nodeApiError(node, failure, {
					itemIndex: 99_999,
					gaveUp: { waitedMs: 9e5, maxRetryWaitMs: 9e5 },
				}),
			),
		);
	add(
		'credential',
		shown(credentialProblem(node, `The Base URL ${LONG_URL} is not valid`, 'Fix it')),
	);
	add(
		'text',
		fieldError(() => requireText(undefined, LONG)),
	);
	add(
		'choice',
		fieldError(() => requireChoice(LONG, 'Resource', ['customer', 'invoice'])),
	);
	add(
		'e-mail',
		fieldError(() => requireEmail(LONG, 'Email')),
	);
	add(
		'customer id',
		fieldError(() => requireCustomerId(LONG, 'Customer ID')),
	);
	add(
		'currency',
		fieldError(() => requireCurrency(LONG, 'Currency')),
	);
	add(
		'price',
		fieldError(() => requirePriceCents(LONG, 'Items[999].price')),
	);
	add(
		'amount',
		fieldError(() => requirePositiveAmountCents(-1, 'Amount')),
	);
	add(
		'lines',
		fieldError(() => parseLineItems(`[${LONG}`, 'Items')),
	);
	add(
		'lines, empty',
		fieldError(() => parseLineItems('[]', 'Items')),
	);
	add(
		'key, blank',
		fieldError(() => requireIdempotencyKey('', () => `={{ ${LONG} }}`, 'Idempotency Key')),
	);
	add(
		'key, object',
		fieldError(() => requireIdempotencyKey({}, () => `={{ ${LONG} }}`, 'Idempotency Key')),
	);
	add(
		'resend codes',
		fieldError(() => readResendCodes(`${LONG}, ${LONG}`, 'Resend Unknown Outcomes Of')),
	);
	for (const purpose of ['idempotency', 'retries'] as const)
		for (const [what, error] of [
			['too late', tooLateError()],
			['left', leftInFlightError()],
			[
				'busy',
				new LockError(
					'busy',
					"the Idempotency Keys of this workflow stayed busy in n8n's database for 95 s",
				),
			],
			['database', asLockError(new Error(LONG))],
			['conflict', asLockError(new Error('incompatible setting'))],
		] as const)
			add(`store ${what} (${purpose})`, shown(storeItemError(context, error, 99_999, purpose)));
	add('unknown key', shown(unknownKeyError(context, LONG, 99_999)));
	add('unknown key, code', shown(unknownKeyError(context, LONG, 99_999, 'K7QM2XR9')));
	add('an unknown error', shown(new Error(LONG)));
	// A stopped run's report, with every part it can have.
	const counts = {
		...noCounts(['K7QM2XR9', 'ABCDEFGH']),
		alreadyCreated: 3,
		createdByAnotherRetry: [4],
		resent: [{ itemIndex: 5, code: 'K7QM2XR9' }],
		keysNotWritten: {
			notMarked: [1],
			notGivenBack: [2],
			leftInFlight: [3],
			expiredUnsent: [{ itemIndex: 6, code: 'ZZZZZZZZ' }],
		},
	};
	const record = RunRecord.of(context, { toolCall: false });
	record.unknown(7, { message: 'no answer' }, 'QQQQQQQQ');
	const stopped = withStopReport({
		failures: [
			{ error: new NodeOperationError(node, 'Item 0: refused', { itemIndex: 0 }), itemIndex: 0 },
		],
		notResent: [],
		record,
		handled: new Set([0, 7]),
		count: 10,
		counts,
	});
	add('stop report', { title: stopped.message, description: String(stopped.description) });
	for (const [n, hint] of [
		...runHints({ ...counts, changed: [8], returned: 1, rebuilt: 1, notResent: 1 }),
		...keyWarnings(counts),
	].entries())
		add(`hint ${n}`, { title: hint, description: '' });
	return list;
}

describe('what a builder reads', () => {
	const messages = catalogue();

	it.each(messages.map((message) => [message.what, message.title.length, message] as const))(
		'%s: title %i characters',
		(what, length, { title, description }) => {
			// A hint has no description: it may say more, within MAX_HINT_CHARS for one item named.
			expect(length).toBeLessThanOrEqual(
				what.startsWith('hint') ? MAX_HINT_CHARS : MAX_TITLE_CHARS,
			);
			expect(`${title}\n${description}`).not.toMatch(ENGINE_WORDS);
			for (const name of INTERNAL_NAMES) expect(`${title} ${description}`).not.toContain(name);
		},
	);

	it('the catalogue reaches every kind of message (factories added later join it)', () => {
		expect(messages.length).toBeGreaterThan(60);
		// A title cut by fitTitle keeps the whole message in the description.
		const cut = messages.filter(({ title }) => title.endsWith('…'));
		expect(cut.length).toBeGreaterThan(0);
		for (const { title, description } of cut) expect(description).toContain(title.slice(0, -1));
	});

	it("no string written in nodes/ or credentials/ uses the engine's words, names aside", () => {
		const found = writtenStrings('nodes', 'credentials').filter(
			({ text }) => ENGINE_WORDS.test(text) && !INTERNAL_NAMES.has(text),
		);
		expect(found).toEqual([]);
		// The scan sees what it should: the internal names are there.
		const names = writtenStrings('nodes').filter(({ text }) => INTERNAL_NAMES.has(text));
		expect(names.length).toBeGreaterThanOrEqual(INTERNAL_NAMES.size);
	});
});

describe('fitTitle', () => {
	it('keeps a title that fits, and cuts a longer one at a clause, keeping it whole in the description', () => {
		expect(fitTitle('Short', 'more')).toEqual({ message: 'Short', description: 'more' });
		const long = `The service had an error (HTTP 500): ${'word '.repeat(60)}`;
		const { message, description } = fitTitle(long, 'Then what to do.');
		// The clause ends too early to be the title alone (under 60 characters): cut at a word.
		expect(message).toMatch(/^The service had an error \(HTTP 500\): (word )+word…$/);
		expect(message.length).toBeLessThanOrEqual(MAX_TITLE_CHARS);
		const clause = `Invoice inv_1 was created, but its PDF could not be downloaded: ${'word '.repeat(60)}`;
		expect(fitTitle(clause).message).toBe(
			'Invoice inv_1 was created, but its PDF could not be downloaded…',
		);
		expect(description).toBe(`${long}\n\nThen what to do.`);
		const words = fitTitle(`Item 3: ${'abc '.repeat(80)}`);
		expect(words.message.length).toBeLessThanOrEqual(MAX_TITLE_CHARS);
		expect(words.message).toMatch(/abc…$/);
		const noSpace = fitTitle('y'.repeat(400));
		expect(noSpace.message).toHaveLength(MAX_TITLE_CHARS);
	});
});
