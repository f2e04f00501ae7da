// The rate-limit pace is process-wide on purpose (transport/pace.ts), and every test of a file runs the node in
// the same process: each test starts from a fresh pace, as a new n8n process would, so that a pause or a pace
// learned by one test never slows the next, and each test passes alone or in any order.
import { servicePace } from '../../nodes/InvoiceService/transport/pace';

beforeEach(() => servicePace.forgetAll());
