import { jsonPathOf, primitiveAt } from '../../nodes/InvoiceService/helpers/jsonReference';

describe('jsonPathOf: a parameter that is one reference to a field of the item', () => {
	it.each([
		['={{ $json.email }}', ['email']],
		['={{$json.email}}', ['email']],
		['={{  $json.person.email  }}', ['person', 'email']],
		['={{ $json["first name"] }}', ['first name']],
		["={{ $json['first name'].value }}", ['first name', 'value']],
		['={{ $json[ "a.b" ] }}', ['a.b']],
		['={{ $json.$id_2 }}', ['$id_2']],
	])('%s → %j', (raw, path) => {
		expect(jsonPathOf(raw)).toEqual(path);
	});

	it.each([
		['a fixed value', 'ada@example.com'],
		['a fixed value that looks like one', '{{ $json.email }}'],
		['text around it', '=Dear {{ $json.name }}'],
		['two expressions', '={{ $json.first }} {{ $json.last }}'],
		['a function call', '={{ $json.email.toLowerCase() }}'],
		['an index', '={{ $json.items[0] }}'],
		['parentheses', '={{ ($json.email) }}'],
		['another node', '={{ $("Webhook").item.json.email }}'],
		['the whole item', '={{ $json }}'],
		['$fromAI', "={{ $fromAI('email') }}"],
		['an escaped quote', '={{ $json["a\\"b"] }}'],
		['constructor', '={{ $json.constructor }}'],
		['__proto__', '={{ $json.__proto__ }}'],
		['prototype', '={{ $json.a.prototype }}'],
		['a number', 42],
		['nothing', undefined],
	])('%s (%j): not recognised', (_name, raw) => {
		expect(jsonPathOf(raw)).toBeUndefined();
	});
});

describe("primitiveAt: the field's text, number or boolean", () => {
	const json = { a: { b: 'deep', n: 0, t: false, z: null, list: [1], o: {} }, s: '', 'x.y': 'dot' };

	it.each([
		[['a', 'b'], 'deep'],
		[['a', 'n'], 0],
		[['a', 't'], false],
		[['s'], ''],
		[['x.y'], 'dot'],
	])('%j → %j', (path, value) => {
		expect(primitiveAt(json, path)).toBe(value);
	});

	it.each([
		[['missing']],
		[['a', 'missing']],
		[['a', 'z']],
		[['a', 'list']],
		[['a', 'o']],
		[['a']],
		[['s', 'length']],
		[['a', 'list', '0']],
		[['toString']],
	])('%j → undefined (left to n8n)', (path) => {
		expect(primitiveAt(json, path)).toBeUndefined();
	});

	it('no item data → undefined', () => {
		expect(primitiveAt(undefined, ['a'])).toBeUndefined();
	});
});
