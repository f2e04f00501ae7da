import type { INodeProperties } from 'n8n-workflow';

import { resourceDescription } from '../common.descriptions';
import type { Operation } from '../operation';
import * as create from './create.operation';

/** What the router runs, by the operation's `value` in the Operation selector (built from this table). */
export const operations: Record<string, Operation> = { create };

export const description: INodeProperties[] = resourceDescription('invoice', operations);
