// n8n-core's InstanceSettings writes a config file into the user folder: give each test run its own.
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
// One folder per jest worker process (reused by its test files), so runs do not pile up temp folders.
process.env.N8N_USER_FOLDER = path.join(os.tmpdir(), `invoice-service-n8n-${process.pid}`);
fs.mkdirSync(process.env.N8N_USER_FOLDER, { recursive: true });
process.env.N8N_ENCRYPTION_KEY = 'test-encryption-key';
process.env.N8N_ENFORCE_SETTINGS_FILE_PERMISSIONS = 'false';
// n8n-core's ErrorReporter logs every node error (with stack) through its Logger; keep test output readable.
// Set N8N_LOG_LEVEL=debug (or info) when running jest to see them.
process.env.N8N_LOG_LEVEL ??= 'silent';
