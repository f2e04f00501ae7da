// Where send_email puts its .eml files. A folder the sandbox made itself is removed on close; one the caller
// named is kept, and reset deletes only the files this sandbox wrote.
import { mkdirSync, mkdtempSync, rmSync, unlinkSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import * as os from 'node:os';
import * as path from 'node:path';

export class Outbox {
	readonly dir: string;
	private readonly ownsDir: boolean;
	private readonly written = new Set<string>();

	constructor(requestedDir: string | undefined) {
		if (requestedDir) {
			mkdirSync(requestedDir, { recursive: true });
			this.dir = path.resolve(requestedDir);
			this.ownsDir = false;
		} else {
			this.dir = mkdtempSync(path.join(os.tmpdir(), 'invoice-sandbox-outbox-'));
			this.ownsDir = true;
		}
	}

	async write(invoiceId: string, message: Uint8Array | string): Promise<void> {
		const file = path.join(this.dir, `${invoiceId}.eml`);
		await writeFile(file, message);
		this.written.add(file);
	}

	/** Deletes the files this sandbox wrote. */
	clear(): void {
		for (const file of this.written) {
			try {
				unlinkSync(file);
			} catch {
				// already gone
			}
		}
		this.written.clear();
	}

	/** On close: removes the folder if the sandbox made it. */
	dispose(): void {
		if (this.ownsDir) rmSync(this.dir, { recursive: true, force: true });
	}
}
