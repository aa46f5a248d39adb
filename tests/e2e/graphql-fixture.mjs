#!/usr/bin/env node
// GraphQL upstream fixture for crankd's graphql plugin tests: a real GraphQL server on loopback,
// built with graphql-js (the reference implementation) on plain node:http.
//
//   node graphql-fixture.mjs PORT       (PORT 0 picks a free port)
//
// Listens on 127.0.0.1 only and prints exactly one line on stderr once it listens:
// "listening on http://127.0.0.1:PORT". Stops (exit 0) on SIGTERM/SIGINT, and when its parent
// process is gone. Request bodies over 1 MiB get 413.
//
// Endpoints:
//   POST /graphql          GraphQL over HTTP. Body: JSON {query, operationName?, variables?}, with
//   GET  /graphql?query=   Content-Type application/json (else 415). GET takes query, variables
//                          (JSON) and operationName from the query string, for queries only (a
//                          mutation over GET gets 405). The request is parsed, validated, then
//                          executed with graphql-js. Subscriptions are refused (no transport here).
//                          Response media type, chosen from Accept:
//                            application/graphql-response+json when Accept names it: 200 when
//                              execution happened (the result has "data", even null), 400 with
//                              {"errors":[...]} for syntax and validation errors, variable
//                              coercion errors and malformed requests;
//                            application/json otherwise (legacy): 200 for everything at the
//                              GraphQL level, 400 only for malformed requests (bad JSON, no query).
//   POST /secure/graphql   as /graphql, but only with "Authorization: Bearer fixture-token";
//                          otherwise 401 {"errors":[{"message":"unauthorized"}]}.
//   POST /slow/graphql?ms=N
//                          as /graphql after waiting N ms (0..30000). The wait is abandoned when
//                          the client disconnects (counted in /stats slow_aborted).
//   ANY  /status/NNN       answers status NNN (200..599) with the text body "fixture status NNN".
//   GET  /stats            {requests, last_headers, last_body, recent_bodies, schema_version, by_path,
//                          slow_aborted, graphql_version}:
//                          requests counts every request to the three GraphQL endpoints (rejected
//                          ones too); last_headers (lower-cased) and last_body (parsed JSON body, or
//                          the GET parameters) are those of the last such request; recent_bodies
//                          holds the last_body of each of the last 32 such requests, oldest first
//                          (null where there was none); by_path counts every request by path.
//   POST /admin/schema     {"version": 1|2} switches the live schema; answers {"version": N}.
//   POST /admin/reset      restores the seed data and schema version 1, and zeroes the counters.
//   GET  /schema.graphql   the live schema's SDL (printSchema).
//   GET  /introspection.json
//                          {"data":{"__schema":...}}: the live schema's introspection, from
//                          getIntrospectionQuery with every option on (descriptions,
//                          specifiedByURL, isRepeatable, schema description, deprecated input
//                          values, isOneOf).
//
// Schema version 1 (printSchema of it is at GET /schema.graphql):
//   scalar DateTime (ISO 8601 string; @specifiedBy), enum Color {RED GREEN BLUE PURPLE(deprecated)},
//   enum Order {ASC DESC}, input Range {min: Int, max: Int!},
//   input ItemFilter {color, tags (all of), price: Range, createdAfter, and: [ItemFilter!],
//                     nameContains: String = ""}  (recursive through `and`),
//   input NewItem {name!, color = RED, tags! = [], price, owner: OwnerRef!},
//   input OwnerRef @oneOf {id: ID, email: String},
//   interface Node {id}, type User, type Item, union SearchResult = Item | User,
//   type PageInfo {endCursor, hasNextPage}, type ItemConnection {nodes, pageInfo, totalCount},
//   Query {item, items, itemsPage, bigList, search, node, echo, partial, fail, whoami, now},
//   Mutation {createItem, deleteItem}, Subscription {ticks} (in the schema only).
// Schema version 2 differs only in: Query.item is renamed itemById, Color gains YELLOW,
// ItemFilter gains owner: ID, Query.echo gains extra: String.
//
// Query.echo returns JSON.stringify of its coerced arguments: absent arguments are left out,
// explicit nulls kept, input-field defaults filled in, ID as a string, enums by name, and DateTime
// normalized to UTC ("...T22:00:00.000Z"). Query.partial fails ids starting with "bad" at their
// list index; Query.fail throws (extensions.code FIXTURE_FAILURE), so data is null.
//
// Query.itemsPage(first: Int!, after: String, filter: ItemFilter): ItemConnection! pages Relay-style
// through the items that `items` would list (filtered the same way, ordered by id): nodes holds
// at most `first` (0..100) of them, those after the cursor `after` (from the start without it);
// pageInfo.endCursor is the cursor of the last node (null when there is none) and
// pageInfo.hasNextPage says whether more follow; totalCount counts all the matching items.
// Cursors are opaque: base64 of "offset:N", N the item's index in the matching list. An `after`
// that is not such a cursor, or whose N is not an index of that list, fails the field with
// 'invalid cursor "AFTER" for itemsPage' (itemsPage is non-null, so data is null).
//
// Data: 20 seed items (i1..i20) and 3 users (u1..u3), in memory; createItem adds items (at most
// 10000 in the store), deleteItem removes them. bigList items (b0..b99999) are synthetic and are
// also found by item/node. An item created with YELLOW under version 2 cannot be serialized under
// version 1 (a field error, as on any real server whose enum shrank).

import http from 'node:http';
import { setTimeout as sleep } from 'node:timers/promises';
import {
    GraphQLBoolean,
    GraphQLEnumType,
    GraphQLError,
    GraphQLFloat,
    GraphQLID,
    GraphQLInputObjectType,
    GraphQLInt,
    GraphQLInterfaceType,
    GraphQLList,
    GraphQLNonNull,
    GraphQLObjectType,
    GraphQLScalarType,
    GraphQLSchema,
    GraphQLString,
    GraphQLUnionType,
    Kind,
    assertValidSchema,
    execute,
    getIntrospectionQuery,
    getOperationAST,
    parse,
    printSchema,
    validate,
    version as graphqlVersion,
} from 'graphql';

const HOST = '127.0.0.1';
const MAX_BODY = 1024 * 1024; // 1 MiB
const MAX_DISCARD = 64 * 1024 * 1024; // an oversized body is drained up to this, then the socket is cut
const MAX_SLOW_MS = 30000;
const MAX_BIG_LIST = 100000;
const MAX_ITEMS = 10000;
const MAX_RECENT = 32; // /stats recent_bodies
const TOKEN = 'fixture-token';
const GRAPHQL_RESPONSE = 'application/graphql-response+json';

// --- data --------------------------------------------------------------------------------------
const USERS = [
    { id: 'u1', name: 'Ada Lovelace', email: 'ada@example.test' },
    { id: 'u2', name: 'Brian Kernighan', email: 'bwk@example.test' },
    { id: 'u3', name: 'Grace Hopper', email: null },
];

// [name, color, tags, price, createdAt, ownerId]
const SEED = [
    ['Red Apple', 'RED', ['fruit', 'fresh'], 1.25, '2024-01-05T08:00:00.000Z', 'u1'],
    ['Green Pear', 'GREEN', ['fruit', 'fresh', 'sale'], 0.99, '2024-01-20T09:30:00.000Z', 'u1'],
    ['Blue Mug', 'BLUE', ['kitchen', 'gift'], 7.5, '2024-02-02T10:00:00.000Z', 'u2'],
    ['Red Kettle', 'RED', ['kitchen', 'sale'], 24, '2024-02-14T11:15:00.000Z', 'u2'],
    ['Purple Scarf', 'PURPLE', ['clothing', 'gift'], 15, '2024-03-01T12:00:00.000Z', 'u3'],
    ['Green Tea', 'GREEN', ['food', 'eco'], 4.2, '2024-03-18T13:45:00.000Z', 'u1'],
    ['Blue Jeans', 'BLUE', ['clothing'], 49.9, '2024-04-04T14:00:00.000Z', 'u2'],
    ['Red Chair', 'RED', ['furniture', 'heavy'], 89, '2024-04-22T15:30:00.000Z', 'u3'],
    ['Green Lamp', 'GREEN', ['furniture', 'eco', 'sale'], 35.5, '2024-05-09T16:00:00.000Z', 'u1'],
    ['Blue Pen', 'BLUE', ['office', 'small'], null, '2024-05-30T17:20:00.000Z', 'u2'],
    ['Red Notebook', 'RED', ['office', 'small', 'gift'], 3.1, '2024-06-12T08:10:00.000Z', 'u3'],
    ['Green Bottle', 'GREEN', ['kitchen', 'eco'], 12, '2024-07-01T09:00:00.000Z', 'u1'],
    ['Blue Desk', 'BLUE', ['furniture', 'office', 'heavy'], 210, '2024-08-15T10:40:00.000Z', 'u2'],
    ['Red Socks', 'RED', ['clothing', 'small', 'sale'], 5, '2024-09-03T11:00:00.000Z', 'u3'],
    ['Green Plant', 'GREEN', ['eco', 'gift'], 18.75, '2024-10-10T12:30:00.000Z', 'u1'],
    ['Blue Rug', 'BLUE', ['furniture'], null, '2024-11-11T13:00:00.000Z', 'u2'],
    ['Red Hat', 'RED', ['clothing'], 22, '2025-01-02T14:20:00.000Z', 'u3'],
    ['Green Soap', 'GREEN', ['eco', 'small', 'fresh'], 2.5, '2025-02-14T15:00:00.000Z', 'u1'],
    ['Blue Umbrella', 'BLUE', ['gift', 'sale'], 14, '2025-03-21T16:45:00.000Z', 'u2'],
    ['Red Sofa', 'RED', ['furniture', 'heavy', 'sale'], 499.99, '2025-04-30T17:00:00.000Z', 'u3'],
];

const store = { items: [], nextId: 1 };

function resetData() {
    store.items = SEED.map(([name, color, tags, price, createdAt, ownerId], i) => ({
        id: `i${i + 1}`,
        name,
        color,
        tags: [...tags],
        price,
        createdAt: new Date(createdAt),
        ownerId,
    }));
    store.nextId = SEED.length + 1;
}

// Ids compare by prefix, then by number: i2 < i10.
function compareIds(a, b) {
    return a.localeCompare(b, 'en', { numeric: true });
}

const BIG_EPOCH = Date.parse('2023-01-01T00:00:00.000Z');
const BIG_COLORS = ['RED', 'GREEN', 'BLUE'];
function bigItem(n) {
    return {
        id: `b${n}`,
        name: `Big item ${n}`,
        color: BIG_COLORS[n % 3],
        tags: [],
        price: n / 100,
        createdAt: new Date(BIG_EPOCH + n * 1000),
        ownerId: 'u1',
        synthetic: true,
    };
}

function findItem(id) {
    const big = /^b(0|[1-9][0-9]*)$/.exec(id);
    if (big && Number(big[1]) < MAX_BIG_LIST) return bigItem(Number(big[1]));
    return store.items.find((item) => item.id === id) ?? null;
}
const findUser = (id) => USERS.find((user) => user.id === id) ?? null;

function matches(item, filter) {
    if (!filter) return true;
    if (filter.color != null && item.color !== filter.color) return false;
    if (filter.tags != null && !filter.tags.every((tag) => item.tags.includes(tag))) return false;
    if (filter.price != null) {
        const { min, max } = filter.price;
        if (item.price == null || item.price > max || (min != null && item.price < min)) return false;
    }
    if (filter.createdAfter != null && !(item.createdAt > filter.createdAfter)) return false;
    if (filter.owner != null && item.ownerId !== filter.owner) return false; // version 2 only
    if (filter.nameContains && !item.name.toLowerCase().includes(filter.nameContains.toLowerCase())) return false;
    if (filter.and != null && !filter.and.every((sub) => matches(item, sub))) return false;
    return true;
}

function nonNegative(name, value) {
    if (value < 0) throw new GraphQLError(`${name} must not be negative`);
    return value;
}

// itemsPage cursors: base64 of "offset:N". Returns N, or throws when `cursor` is not one of the
// cursors of a list of `count` items.
const MAX_PAGE = 100;
const pageCursor = (offset) => Buffer.from(`offset:${offset}`, 'utf8').toString('base64');
function cursorOffset(cursor, count) {
    const match = /^offset:(0|[1-9][0-9]{0,8})$/.exec(Buffer.from(cursor, 'base64').toString('utf8'));
    const offset = match ? Number(match[1]) : -1;
    if (offset < 0 || offset >= count || pageCursor(offset) !== cursor) {
        throw new GraphQLError(`invalid cursor ${JSON.stringify(cursor)} for itemsPage`);
    }
    return offset;
}

// --- schema ----------------------------------------------------------------------------------------
const ISO_DATE_TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$/;

function parseDateTime(value) {
    if (typeof value !== 'string' || !ISO_DATE_TIME.test(value) || Number.isNaN(Date.parse(value))) {
        throw new GraphQLError(`DateTime cannot represent ${JSON.stringify(value)}: an ISO 8601 date-time string is expected`);
    }
    return new Date(value);
}

// Builds one schema version. Everything but the version-2 differences is identical.
function makeSchema(version) {
    const v2 = version === 2;

    const DateTime = new GraphQLScalarType({
        name: 'DateTime',
        description: 'An instant, as an ISO 8601 date-time string in UTC, e.g. "2024-01-05T08:00:00.000Z".',
        specifiedByURL: 'https://scalars.graphql.org/andimarek/date-time',
        serialize(value) {
            const date = value instanceof Date ? value : parseDateTime(value);
            if (Number.isNaN(date.getTime())) throw new GraphQLError('DateTime cannot represent an invalid date');
            return date.toISOString();
        },
        parseValue: parseDateTime,
        parseLiteral(ast) {
            if (ast.kind !== Kind.STRING) throw new GraphQLError('DateTime must be a string literal', { nodes: ast });
            return parseDateTime(ast.value);
        },
    });

    const Color = new GraphQLEnumType({
        name: 'Color',
        description: 'The colour of an item.',
        values: {
            RED: { description: 'Red.' },
            GREEN: { description: 'Green.' },
            BLUE: { description: 'Blue.' },
            PURPLE: { description: 'Purple.', deprecationReason: 'gone' },
            ...(v2 ? { YELLOW: { description: 'Yellow (schema version 2).' } } : {}),
        },
    });

    const Order = new GraphQLEnumType({
        name: 'Order',
        description: 'Sort order by id.',
        values: { ASC: { description: 'Ascending ids.' }, DESC: { description: 'Descending ids.' } },
    });

    const Range = new GraphQLInputObjectType({
        name: 'Range',
        description: 'An inclusive numeric range; min is optional, max is required.',
        fields: {
            min: { type: GraphQLInt, description: 'Lower bound, inclusive.' },
            max: { type: new GraphQLNonNull(GraphQLInt), description: 'Upper bound, inclusive.' },
        },
    });

    const ItemFilter = new GraphQLInputObjectType({
        name: 'ItemFilter',
        description: 'Conditions an item must all meet. Null or absent fields impose nothing.',
        fields: () => ({
            color: { type: Color, description: 'Exactly this colour.' },
            tags: { type: new GraphQLList(new GraphQLNonNull(GraphQLString)), description: 'All of these tags.' },
            price: { type: Range, description: 'Price within this range (items without a price never match).' },
            createdAfter: { type: DateTime, description: 'Created strictly after this instant.' },
            and: { type: new GraphQLList(new GraphQLNonNull(ItemFilter)), description: 'Every one of these filters too.' },
            nameContains: { type: GraphQLString, defaultValue: '', description: 'Case-insensitive substring of the name.' },
            ...(v2 ? { owner: { type: GraphQLID, description: 'Owned by this user id (schema version 2).' } } : {}),
        }),
    });

    const OwnerRef = new GraphQLInputObjectType({
        name: 'OwnerRef',
        description: 'A user, by exactly one of id or email.',
        isOneOf: true,
        fields: {
            id: { type: GraphQLID, description: 'The user id.' },
            email: { type: GraphQLString, description: 'The user email.' },
        },
    });

    const NewItem = new GraphQLInputObjectType({
        name: 'NewItem',
        description: 'A new item.',
        fields: {
            name: { type: new GraphQLNonNull(GraphQLString), description: 'Its name.' },
            color: { type: Color, defaultValue: 'RED', description: 'Its colour.' },
            tags: {
                type: new GraphQLNonNull(new GraphQLList(new GraphQLNonNull(GraphQLString))),
                defaultValue: [],
                description: 'Its tags.',
            },
            price: { type: GraphQLFloat, description: 'Its price, if it has one.' },
            owner: { type: new GraphQLNonNull(OwnerRef), description: 'Who owns it.' },
        },
    });

    const Node = new GraphQLInterfaceType({
        name: 'Node',
        description: 'Anything with a global id.',
        fields: { id: { type: new GraphQLNonNull(GraphQLID), description: 'The global id.' } },
        resolveType: (value) => ('email' in value ? 'User' : 'Item'),
    });

    const User = new GraphQLObjectType({
        name: 'User',
        description: 'A person who owns items.',
        interfaces: [Node],
        fields: () => ({
            id: { type: new GraphQLNonNull(GraphQLID), description: 'The user id (u1, u2, ...).' },
            name: { type: new GraphQLNonNull(GraphQLString), description: 'Full name.' },
            email: { type: GraphQLString, description: 'Email address, when known.' },
            items: {
                type: new GraphQLNonNull(new GraphQLList(new GraphQLNonNull(Item))),
                description: "The user's items, by id.",
                args: { first: { type: GraphQLInt, defaultValue: 3, description: 'How many at most.' } },
                resolve: (user, { first }) =>
                    store.items
                        .filter((item) => item.ownerId === user.id)
                        .sort((a, b) => compareIds(a.id, b.id))
                        .slice(0, nonNegative('first', first ?? 3)),
            },
        }),
    });

    const Item = new GraphQLObjectType({
        name: 'Item',
        description: 'Something for sale.',
        interfaces: [Node],
        fields: () => ({
            id: { type: new GraphQLNonNull(GraphQLID), description: 'The item id (i1, i2, ..., or b0.. for bigList).' },
            name: { type: new GraphQLNonNull(GraphQLString), description: 'Its name.' },
            color: { type: new GraphQLNonNull(Color), description: 'Its colour.' },
            tags: { type: new GraphQLNonNull(new GraphQLList(new GraphQLNonNull(GraphQLString))), description: 'Its tags.' },
            price: { type: GraphQLFloat, description: 'Its price; null when it has none.' },
            createdAt: { type: new GraphQLNonNull(DateTime), description: 'When it was added.' },
            owner: {
                type: new GraphQLNonNull(User),
                description: 'Who owns it.',
                resolve: (item) => findUser(item.ownerId),
            },
            related: {
                type: new GraphQLNonNull(new GraphQLList(new GraphQLNonNull(Item))),
                description: 'Up to 3 other items sharing a tag with it, by id.',
                resolve: (item) =>
                    store.items
                        .filter((other) => other.id !== item.id && other.tags.some((tag) => item.tags.includes(tag)))
                        .sort((a, b) => compareIds(a.id, b.id))
                        .slice(0, 3),
            },
            secret: {
                type: GraphQLString,
                description: 'A field with a required argument: "secret of ID because REASON".',
                args: { reason: { type: new GraphQLNonNull(GraphQLString), description: 'Why you want it.' } },
                resolve: (item, { reason }) => `secret of ${item.id} because ${reason}`,
            },
        }),
    });

    const SearchResult = new GraphQLUnionType({
        name: 'SearchResult',
        description: 'An item or a user.',
        types: [Item, User],
        resolveType: (value) => ('email' in value ? 'User' : 'Item'),
    });

    const PageInfo = new GraphQLObjectType({
        name: 'PageInfo',
        description: 'Where a page of a connection ends, and whether another follows.',
        fields: {
            endCursor: { type: GraphQLString, description: 'The cursor of the last node of the page; null when the page is empty.' },
            hasNextPage: { type: new GraphQLNonNull(GraphQLBoolean), description: 'Whether more nodes follow this page.' },
        },
    });

    const ItemConnection = new GraphQLObjectType({
        name: 'ItemConnection',
        description: 'One page of items (Relay-style connection).',
        fields: {
            nodes: { type: new GraphQLNonNull(new GraphQLList(new GraphQLNonNull(Item))), description: 'The items of this page, by id.' },
            pageInfo: { type: new GraphQLNonNull(PageInfo), description: 'Where this page ends.' },
            totalCount: { type: new GraphQLNonNull(GraphQLInt), description: 'How many items match, over all pages.' },
        },
    });

    const echoArgs = {
        int: { type: GraphQLInt, description: 'An Int.' },
        float: { type: GraphQLFloat, description: 'A Float.' },
        string: { type: GraphQLString, description: 'A String.' },
        bool: { type: GraphQLBoolean, description: 'A Boolean.' },
        id: { type: GraphQLID, description: 'An ID.' },
        color: { type: Color, description: 'An enum.' },
        colors: { type: new GraphQLList(new GraphQLNonNull(Color)), description: 'A list of enums.' },
        matrix: { type: new GraphQLList(new GraphQLList(GraphQLInt)), description: 'A nested list.' },
        filter: { type: ItemFilter, description: 'A recursive input object.' },
        when: { type: DateTime, description: 'A custom scalar.' },
        ...(v2 ? { extra: { type: GraphQLString, description: 'An extra String (schema version 2).' } } : {}),
    };

    const itemField = {
        type: Item,
        description: 'Looks up one item by its id.',
        args: { id: { type: new GraphQLNonNull(GraphQLID), description: 'The item id.' } },
        resolve: (_, { id }) => findItem(id),
    };

    const Query = new GraphQLObjectType({
        name: 'Query',
        description: 'Read operations.',
        fields: {
            [v2 ? 'itemById' : 'item']: itemField,
            items: {
                type: new GraphQLNonNull(new GraphQLList(new GraphQLNonNull(Item))),
                description: 'The items that match the filter, ordered by id.',
                args: {
                    filter: { type: ItemFilter, description: 'Which items.' },
                    first: { type: GraphQLInt, defaultValue: 10, description: 'How many at most.' },
                    order: { type: Order, defaultValue: 'ASC', description: 'Sort order by id.' },
                },
                resolve: (_, { filter, first, order }) => {
                    const sorted = store.items.filter((item) => matches(item, filter)).sort((a, b) => compareIds(a.id, b.id));
                    if (order === 'DESC') sorted.reverse();
                    return sorted.slice(0, nonNegative('first', first ?? 10));
                },
            },
            itemsPage: {
                type: new GraphQLNonNull(ItemConnection),
                description: 'A page of the items that match the filter, ordered by id, after a cursor.',
                args: {
                    first: { type: new GraphQLNonNull(GraphQLInt), description: `How many at most (0..${MAX_PAGE}).` },
                    after: { type: GraphQLString, description: 'The endCursor of the previous page; from the start without it.' },
                    filter: { type: ItemFilter, description: 'Which items.' },
                },
                resolve: (_, { first, after, filter }) => {
                    if (nonNegative('first', first) > MAX_PAGE) throw new GraphQLError(`first must be at most ${MAX_PAGE}`);
                    const sorted = store.items.filter((item) => matches(item, filter)).sort((a, b) => compareIds(a.id, b.id));
                    const start = after == null ? 0 : cursorOffset(after, sorted.length) + 1;
                    const nodes = sorted.slice(start, start + first);
                    return {
                        nodes,
                        pageInfo: {
                            endCursor: nodes.length === 0 ? null : pageCursor(start + nodes.length - 1),
                            hasNextPage: start + nodes.length < sorted.length,
                        },
                        totalCount: sorted.length,
                    };
                },
            },
            bigList: {
                type: new GraphQLNonNull(new GraphQLList(new GraphQLNonNull(Item))),
                description: `count synthetic items b0..b(count-1); count is at most ${MAX_BIG_LIST}.`,
                args: { count: { type: new GraphQLNonNull(GraphQLInt), description: 'How many.' } },
                resolve: (_, { count }) => {
                    if (count > MAX_BIG_LIST) throw new GraphQLError(`count must be at most ${MAX_BIG_LIST}`);
                    return Array.from({ length: nonNegative('count', count) }, (_, n) => bigItem(n));
                },
            },
            search: {
                type: new GraphQLNonNull(new GraphQLList(new GraphQLNonNull(SearchResult))),
                description: 'Items (by name or tag) then users (by name or email) containing the text, case-insensitively.',
                args: { text: { type: new GraphQLNonNull(GraphQLString), description: 'What to look for.' } },
                resolve: (_, { text }) => {
                    const needle = text.toLowerCase();
                    const has = (s) => s != null && s.toLowerCase().includes(needle);
                    return [
                        ...store.items.filter((item) => has(item.name) || item.tags.some(has)).sort((a, b) => compareIds(a.id, b.id)),
                        ...USERS.filter((user) => has(user.name) || has(user.email)),
                    ];
                },
            },
            node: {
                type: Node,
                description: 'Looks up an item or a user by id; null when unknown.',
                args: { id: { type: new GraphQLNonNull(GraphQLID), description: 'The id.' } },
                resolve: (_, { id }) => findUser(id) ?? findItem(id),
            },
            echo: {
                type: new GraphQLNonNull(GraphQLString),
                description: 'JSON.stringify of the arguments as they arrived, after coercion (absent ones are left out).',
                args: echoArgs,
                resolve: (_, args) => JSON.stringify(args),
            },
            partial: {
                type: new GraphQLList(Item),
                description: 'One entry per id: ids starting with "bad" fail with an error at their path, unknown ids are null.',
                args: { ids: { type: new GraphQLNonNull(new GraphQLList(new GraphQLNonNull(GraphQLID))), description: 'The ids.' } },
                resolve: (_, { ids }) =>
                    ids.map((id) => (id.startsWith('bad') ? new GraphQLError(`cannot load item ${id}`) : findItem(id))),
            },
            fail: {
                type: new GraphQLNonNull(Item),
                description: 'Always fails with the given message; as the field is non-null, data is null.',
                args: { message: { type: new GraphQLNonNull(GraphQLString), description: 'The error message.' } },
                resolve: (_, { message }) => {
                    throw new GraphQLError(message, { extensions: { code: 'FIXTURE_FAILURE' } });
                },
            },
            whoami: {
                type: GraphQLString,
                description: 'The Authorization header this request carried, or null.',
                resolve: (_, __, context) => context.headers.authorization ?? null,
            },
            now: {
                type: new GraphQLNonNull(DateTime),
                description: 'The current time.',
                resolve: () => new Date(),
            },
        },
    });

    const Mutation = new GraphQLObjectType({
        name: 'Mutation',
        description: 'Write operations on the in-memory store.',
        fields: {
            createItem: {
                type: new GraphQLNonNull(Item),
                description: `Adds an item (the store holds at most ${MAX_ITEMS}) and returns it.`,
                args: { input: { type: new GraphQLNonNull(NewItem), description: 'The new item.' } },
                resolve: (_, { input }) => {
                    if (store.items.length >= MAX_ITEMS) throw new GraphQLError(`the store is full (${MAX_ITEMS} items)`);
                    const owner =
                        input.owner.id != null
                            ? findUser(input.owner.id)
                            : USERS.find((user) => user.email != null && user.email === input.owner.email);
                    if (!owner) throw new GraphQLError(`unknown owner ${JSON.stringify(input.owner)}`);
                    const item = {
                        id: `i${store.nextId++}`,
                        name: input.name,
                        color: input.color,
                        tags: [...input.tags],
                        price: input.price ?? null,
                        createdAt: new Date(),
                        ownerId: owner.id,
                    };
                    store.items.push(item);
                    return item;
                },
            },
            deleteItem: {
                type: new GraphQLNonNull(GraphQLBoolean),
                description: 'Removes an item; false when there was none with that id.',
                args: { id: { type: new GraphQLNonNull(GraphQLID), description: 'The item id.' } },
                resolve: (_, { id }) => {
                    const index = store.items.findIndex((item) => item.id === id);
                    if (index < 0) return false;
                    store.items.splice(index, 1);
                    return true;
                },
            },
        },
    });

    // Present for introspection only: this fixture serves no subscription transport.
    const Subscription = new GraphQLObjectType({
        name: 'Subscription',
        description: 'Not served: the graphql plugin must refuse subscriptions.',
        fields: { ticks: { type: GraphQLInt, description: 'A counter.' } },
    });

    const schema = new GraphQLSchema({
        description: `Crank GraphQL test fixture, schema version ${version}.`,
        query: Query,
        mutation: Mutation,
        subscription: Subscription,
        types: [User, Item],
    });
    assertValidSchema(schema);
    return schema;
}

const SCHEMAS = { 1: makeSchema(1), 2: makeSchema(2) };
const INTROSPECTION_QUERY = parse(
    getIntrospectionQuery({
        descriptions: true,
        specifiedByUrl: true,
        directiveIsRepeatable: true,
        schemaDescription: true,
        inputValueDeprecation: true,
        oneOf: true,
    }),
);

// --- state -------------------------------------------------------------------------------------
const state = {};
function resetState() {
    resetData();
    state.schemaVersion = 1;
    state.requests = 0;
    state.lastHeaders = null;
    state.lastBody = null;
    state.recent = []; // {body} of the last MAX_RECENT GraphQL requests
    state.byPath = {};
    state.slowAborted = 0;
}
resetState();

// --- HTTP helpers ------------------------------------------------------------------------------
class HttpError extends Error {
    constructor(status, message, headers = {}) {
        super(message);
        this.status = status;
        this.headers = headers;
    }
}

function send(res, status, body, contentType, headers = {}) {
    if (res.headersSent || res.destroyed) return;
    const noBody = status === 204 || status === 304;
    const payload = noBody ? '' : body;
    res.writeHead(status, {
        ...headers,
        ...(noBody ? {} : { 'content-type': contentType, 'content-length': Buffer.byteLength(payload) }),
    });
    res.end(payload);
}
const sendJson = (res, status, value, contentType = 'application/json', headers = {}) =>
    send(res, status, JSON.stringify(value), `${contentType}; charset=utf-8`, headers);
const errorsBody = (message) => ({ errors: [{ message }] });

// Reads the body, at most MAX_BODY bytes. Over that: 413, drains (bounded), then closes.
function readBody(req) {
    return new Promise((resolve, reject) => {
        const declared = Number(req.headers['content-length']);
        if (Number.isFinite(declared) && declared > MAX_BODY) {
            discard(req);
            reject(new HttpError(413, `request body over ${MAX_BODY} bytes`, { connection: 'close' }));
            return;
        }
        const chunks = [];
        let size = 0;
        const onData = (chunk) => {
            size += chunk.length;
            if (size > MAX_BODY) {
                req.off('data', onData);
                req.off('end', onEnd);
                discard(req, size);
                reject(new HttpError(413, `request body over ${MAX_BODY} bytes`, { connection: 'close' }));
                return;
            }
            chunks.push(chunk);
        };
        const onEnd = () => resolve(Buffer.concat(chunks).toString('utf8'));
        req.on('data', onData);
        req.on('end', onEnd);
        req.on('error', reject);
    });
}

function discard(req, already = 0) {
    let drained = already;
    req.on('data', (chunk) => {
        drained += chunk.length;
        if (drained > MAX_DISCARD) req.socket.destroy();
    });
    req.resume();
}

function wantsGraphQLResponse(req) {
    return (req.headers.accept ?? '').toLowerCase().includes(GRAPHQL_RESPONSE);
}

// --- GraphQL over HTTP -------------------------------------------------------------------------
// Records the body of the request that `entry` (of state.recent) stands for.
function recordBody(entry, body) {
    state.lastBody = body;
    entry.body = body;
}

// Returns the {query, operationName, variables} of a POST or GET request, or throws HttpError.
// The body goes to /stats through `entry`.
async function readGraphQLRequest(req, url, entry) {
    let params;
    if (req.method === 'GET') {
        params = {
            query: url.searchParams.get('query'),
            operationName: url.searchParams.get('operationName'),
            variables: url.searchParams.get('variables'),
        };
        recordBody(entry, Object.fromEntries(url.searchParams));
        if (params.variables != null && params.variables !== '') {
            try {
                params.variables = JSON.parse(params.variables);
            } catch {
                throw new HttpError(400, 'variables is not valid JSON');
            }
        } else {
            params.variables = null;
        }
    } else if (req.method === 'POST') {
        const mediaType = (req.headers['content-type'] ?? '').split(';')[0].trim().toLowerCase();
        if (mediaType !== 'application/json') {
            discard(req);
            throw new HttpError(415, 'Content-Type must be application/json');
        }
        const text = await readBody(req);
        try {
            params = JSON.parse(text);
        } catch {
            recordBody(entry, null);
            throw new HttpError(400, 'the body is not valid JSON');
        }
        recordBody(entry, params);
        if (params === null || typeof params !== 'object' || Array.isArray(params)) {
            throw new HttpError(400, 'the body must be a JSON object (batching is not supported)');
        }
    } else {
        discard(req);
        throw new HttpError(405, `method ${req.method} not allowed`, { allow: 'GET, POST' });
    }
    const { query, operationName = null, variables = null } = params;
    if (typeof query !== 'string' || query === '') throw new HttpError(400, 'query must be a non-empty string');
    if (operationName !== null && typeof operationName !== 'string') throw new HttpError(400, 'operationName must be a string');
    if (variables !== null && (typeof variables !== 'object' || Array.isArray(variables))) {
        throw new HttpError(400, 'variables must be an object');
    }
    return { query, operationName, variables };
}

// Runs one GraphQL request. Returns {status, body}; status follows the negotiated media type.
async function runGraphQL(req, { query, operationName, variables }, modern) {
    const schema = SCHEMAS[state.schemaVersion];
    // A GraphQL-level request error: 400 under application/graphql-response+json, 200 (legacy) otherwise.
    const requestError = (errors) => ({ status: modern ? 400 : 200, body: { errors } });

    let document;
    try {
        document = parse(query);
    } catch (err) {
        if (err instanceof GraphQLError) return requestError([err]);
        throw err;
    }
    const validationErrors = validate(schema, document);
    if (validationErrors.length > 0) return requestError(validationErrors);

    const operation = getOperationAST(document, operationName);
    if (!operation) {
        const message = operationName
            ? `Unknown operation named "${operationName}".`
            : 'Must provide operation name if query contains multiple operations.';
        return requestError([new GraphQLError(message)]);
    }
    if (operation.operation === 'subscription') {
        return requestError([new GraphQLError('Subscriptions are not supported by this fixture.')]);
    }
    if (operation.operation === 'mutation' && req.method === 'GET') {
        throw new HttpError(405, 'mutations are not allowed over GET', { allow: 'POST' });
    }

    const result = await execute({
        schema,
        document,
        operationName,
        variableValues: variables ?? undefined,
        contextValue: { headers: req.headers },
    });
    // No "data" means variable coercion failed: a request error too.
    if (!('data' in result)) return requestError(result.errors);
    return { status: 200, body: result };
}

async function handleGraphQL(req, res, url, { secure = false, slowMs = null } = {}) {
    state.requests++;
    state.lastHeaders = { ...req.headers };
    state.lastBody = null;
    const entry = { body: null };
    state.recent.push(entry);
    if (state.recent.length > MAX_RECENT) state.recent.shift();
    const modern = wantsGraphQLResponse(req);
    const mediaType = modern ? GRAPHQL_RESPONSE : 'application/json';
    try {
        if (secure) {
            const auth = req.headers.authorization ?? '';
            const match = /^bearer\s+(.+)$/i.exec(auth.trim());
            if (!match || match[1] !== TOKEN) {
                discard(req);
                sendJson(res, 401, errorsBody('unauthorized'), 'application/json', { 'www-authenticate': 'Bearer' });
                return;
            }
        }
        if (slowMs !== null && !(slowMs <= MAX_SLOW_MS)) {
            discard(req);
            throw new HttpError(400, `ms must be an integer from 0 to ${MAX_SLOW_MS}`);
        }
        const request = await readGraphQLRequest(req, url, entry);
        if (slowMs !== null) {
            const abort = new AbortController();
            const onClose = () => abort.abort();
            res.on('close', onClose);
            try {
                await sleep(slowMs, undefined, { signal: abort.signal });
            } catch {
                state.slowAborted++;
                console.error(`slow: client went away before ${slowMs} ms`);
                return;
            } finally {
                res.off('close', onClose);
            }
        }
        const { status, body } = await runGraphQL(req, request, modern);
        sendJson(res, status, body, mediaType);
    } catch (err) {
        if (!(err instanceof HttpError)) throw err;
        sendJson(res, err.status, errorsBody(err.message), mediaType, err.headers);
    }
}

async function readJsonObject(req) {
    const text = await readBody(req);
    try {
        const value = JSON.parse(text);
        if (value !== null && typeof value === 'object' && !Array.isArray(value)) return value;
    } catch {
        // fall through
    }
    throw new HttpError(400, 'the body must be a JSON object');
}

// --- routing -----------------------------------------------------------------------------------
async function route(req, res) {
    const url = new URL(req.url, `http://${HOST}`);
    const path = url.pathname;
    state.byPath[path] = (state.byPath[path] ?? 0) + 1;

    if (path === '/graphql') return handleGraphQL(req, res, url);
    if (path === '/secure/graphql') return handleGraphQL(req, res, url, { secure: true });
    if (path === '/slow/graphql') {
        const raw = url.searchParams.get('ms') ?? '0';
        return handleGraphQL(req, res, url, { slowMs: /^[0-9]+$/.test(raw) ? Number(raw) : NaN });
    }

    const status = /^\/status\/([0-9]{3})$/.exec(path);
    if (status) {
        const code = Number(status[1]);
        discard(req);
        if (code < 200 || code > 599) return send(res, 400, 'status must be 200..599\n', 'text/plain; charset=utf-8');
        return send(res, code, `fixture status ${code}`, 'text/plain; charset=utf-8');
    }

    const only = (method) => {
        if (req.method === method) return true;
        discard(req);
        sendJson(res, 405, errorsBody(`method ${req.method} not allowed`), 'application/json', { allow: method });
        return false;
    };
    switch (path) {
        case '/stats':
            if (!only('GET')) return;
            return sendJson(res, 200, {
                requests: state.requests,
                last_headers: state.lastHeaders,
                last_body: state.lastBody,
                recent_bodies: state.recent.map((entry) => entry.body),
                schema_version: state.schemaVersion,
                by_path: state.byPath,
                slow_aborted: state.slowAborted,
                graphql_version: graphqlVersion,
            });
        case '/admin/schema': {
            if (!only('POST')) return;
            const { version } = await readJsonObject(req);
            if (version !== 1 && version !== 2) throw new HttpError(400, 'version must be 1 or 2');
            state.schemaVersion = version;
            console.error(`schema version ${version}`);
            return sendJson(res, 200, { version });
        }
        case '/admin/reset':
            if (!only('POST')) return;
            discard(req);
            resetState();
            return sendJson(res, 200, { version: state.schemaVersion });
        case '/schema.graphql':
            if (!only('GET')) return;
            return send(res, 200, `${printSchema(SCHEMAS[state.schemaVersion])}\n`, 'text/plain; charset=utf-8');
        case '/introspection.json': {
            if (!only('GET')) return;
            const result = await execute({ schema: SCHEMAS[state.schemaVersion], document: INTROSPECTION_QUERY });
            return sendJson(res, result.errors ? 500 : 200, result);
        }
        default:
            discard(req);
            return sendJson(res, 404, errorsBody(`no route for ${path}`));
    }
}

// --- main --------------------------------------------------------------------------------------
function usage(message) {
    console.error(`graphql-fixture: ${message}\nusage: node graphql-fixture.mjs PORT   (0 = any free port)`);
    process.exit(2);
}

const args = process.argv.slice(2);
if (args.length > 1) usage(`unexpected arguments: ${args.slice(1).join(' ')}`);
const port = args.length === 0 ? 0 : Number(args[0]);
if (!/^[0-9]+$/.test(args[0] ?? '0') || port > 65535) usage(`bad port ${JSON.stringify(args[0])}`);

const server = http.createServer((req, res) => {
    route(req, res).catch((err) => {
        if (err instanceof HttpError) {
            sendJson(res, err.status, errorsBody(err.message), 'application/json', err.headers);
            return;
        }
        console.error('graphql-fixture: internal error:', err);
        sendJson(res, 500, errorsBody('internal fixture error'));
    });
});
server.on('clientError', (err, socket) => {
    if (socket.writable) socket.end('HTTP/1.1 400 Bad Request\r\nconnection: close\r\n\r\n');
    else socket.destroy();
});

function stop(signal) {
    console.error(`graphql-fixture: ${signal}, stopping`);
    server.close(() => process.exit(0));
    server.closeAllConnections();
    setTimeout(() => process.exit(0), 2000).unref();
}
process.on('SIGTERM', () => stop('SIGTERM'));
process.on('SIGINT', () => stop('SIGINT'));
// A test process that crashed cannot stop its fixture by pid: a fixture whose parent is gone (it
// was re-parented) stops itself.
const parentPid = process.ppid;
setInterval(() => {
    if (process.ppid !== parentPid) stop('parent gone');
}, 500).unref();

server.listen(port, HOST, () => {
    console.error(`listening on http://${HOST}:${server.address().port}`);
});
server.on('error', (err) => {
    console.error(`graphql-fixture: ${err.message}`);
    process.exit(1);
});
