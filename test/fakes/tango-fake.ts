import { randomBytes, randomUUID } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { tangoWebhookSignature } from '../../src/providers/tango/webhook.js';

/**
 * A fake of Tango's RaaS API v2 on loopback, shaped on Tango's published documentation (the pages
 * listed in docs/operating/payout-providers-tango.md), for the Tango adapter's tests:
 *
 * - Basic auth with a platform name and key: anything else is 401 in Tango's error shape
 *   (`{timestamp, requestId, path, httpCode, httpPhrase, errors: [{path, code, i18nKey, message}]}`).
 * - POST /orders: validates what Tango documents (account and customer, UTID in the catalog, amount
 *   within the item's min and max and in the item's currency's decimals, externalRefID of at most
 *   100 letters and digits, recipient email and first name when sendEmail); one order per
 *   externalRefID per account: a repeat answers 200 with the first order (even for another item),
 *   a new order 201; an amount above the account's `balance` 402 (Swagger: "Insufficient Funds").
 * - GET /orders/{referenceOrderID}, GET /orders?externalRefID=…, POST /orders/{id}/resends,
 *   GET /lineItems?referenceOrderID=…, POST /lineItems/{id}/cancel (202; only when `canCancel`, with
 *   a reasonCode, and otherReason when it is OTHER).
 * - Faults injected per operation: `hang` (never answers, nothing done), `hang-after-work` (does the
 *   work, then never answers: the order placed and its answer lost), `error-after-work` (does the work, then
 *   answers 500), `error-before-work` (503, nothing done), `refuse` (400 in Tango's shape, nothing
 *   done), `rate-limit` (429, nothing done).
 * - Webhooks: `webhook()` builds a signed delivery (or a forged one, or the very bytes of an earlier
 *   one for a replay) and `deliver()` POSTs it to a URL.
 *
 * What it cannot vouch for is listed on the operating page: the fake and the adapter share one
 * reading of the documentation, so where the documentation is silent (the HMAC encoding, the
 * line items list's shape, the RewardStatus payload) a test passing here proves nothing about Tango.
 */

export type TangoFakeOperation = 'order' | 'resend' | 'cancel' | 'lookup';
export type TangoFakeFault = 'hang' | 'hang-after-work' | 'error-after-work' | 'error-before-work' | 'refuse' | 'rate-limit';

export interface TangoCatalogItem {
  currencyCode: string;
  minValue: number;
  maxValue: number;
  rewardName: string;
  /** Choice Products (Reward Link and the like) are the only rewards Tango lets you cancel. */
  choiceProduct: boolean;
}

export interface TangoFakeLineItem {
  referenceLineItemID: string;
  status: 'COMPLETE' | 'PENDING' | 'FAILED' | 'CANCELLED';
  rewardStatus: string;
  emailStatus: string;
  canCancel: boolean;
  cancelReason?: { reasonCode: string; otherReason?: string };
}

export interface TangoFakeOrder {
  referenceOrderID: string;
  externalRefID: string;
  accountIdentifier: string;
  customerIdentifier: string;
  utid: string;
  amount: number;
  currencyCode: string;
  recipient: { email?: string; firstName?: string; lastName?: string };
  sendEmail: boolean;
  status: 'COMPLETE' | 'PENDING' | 'FAILED' | 'CANCELLED';
  createdAt: string;
  lineItems: TangoFakeLineItem[];
  resends: { id: number; email: string; createdAt: string }[];
}

export type TangoWebhookKind = 'redeemed' | 'partially-redeemed' | 'activated' | 'frozen' | 'cancelled' | 'async-order-failed' | 'async-order-successful' | 'item-availability';

export interface TangoWebhookDelivery {
  eventId: string;
  headers: Record<string, string>;
  rawBody: Buffer;
}

export interface TangoFakeRequest {
  method: string;
  path: string;
  status: number | 'hung';
}

/** The catalog every fake starts with: one item per currency the tests pay in (BHD is not in it). */
export function defaultTangoCatalog(): Map<string, TangoCatalogItem> {
  const item = (currencyCode: string, minValue: number, maxValue: number): TangoCatalogItem => ({
    currencyCode,
    minValue,
    maxValue,
    rewardName: `Reward Link ${currencyCode}`,
    choiceProduct: true,
  });
  return new Map([
    ['U000USD', item('USD', 0.01, 2000)],
    ['U000EUR', item('EUR', 0.01, 2000)],
    ['U000GBP', item('GBP', 0.01, 2000)],
    ['U000CAD', item('CAD', 0.01, 2000)],
    ['U000AUD', item('AUD', 0.01, 2000)],
    ['U000JPY', item('JPY', 1, 200000)],
    ['U000GIFTCARD', { currencyCode: 'USD', minValue: 5, maxValue: 500, rewardName: 'Some Brand gift card', choiceProduct: false }],
  ]);
}

const DECIMALS: Record<string, number> = { JPY: 0, BHD: 3, KWD: 3 };

export class TangoFake {
  readonly platformName = 'fake-platform';
  readonly platformKey = `key-${randomBytes(8).toString('hex')}`;
  readonly customerIdentifier = 'fake-customer';
  readonly accountIdentifier = 'fake-account';
  /** The HMAC key the workspace would give Tango as hmacSharedSecretKey (base64, as Tango requires). */
  readonly webhookSecret = randomBytes(32).toString('base64');
  readonly catalog = defaultTangoCatalog();
  /** The account's balance, in the currency of the orders (the fake converts nothing); an order above it is 402. */
  balance = Number.POSITIVE_INFINITY;
  /** Orders placed, by externalRefID: one per key, however often it is ordered (this fake has one account). */
  readonly orders = new Map<string, TangoFakeOrder>();
  /** Orders created per externalRefID, counted as each is created: 1 each while idempotency holds. */
  readonly createdPerExternalRefId = new Map<string, number>();
  /** Every request received, in order, with what it was answered. */
  readonly requests: TangoFakeRequest[] = [];
  /** Webhook deliveries built, by eventId (a replay sends the same bytes again). */
  readonly deliveries = new Map<string, TangoWebhookDelivery>();
  private readonly faults: Record<TangoFakeOperation, TangoFakeFault[]> = { order: [], resend: [], cancel: [], lookup: [] };
  private readonly held = new Set<http.ServerResponse>();
  private sequence = 0;
  private revision = 0;

  private constructor(private readonly server: http.Server) {}

  static async start(): Promise<TangoFake> {
    const server = http.createServer();
    const fake = new TangoFake(server);
    server.on('request', (request, response) => {
      fake.handle(request, response).catch((error: unknown) => {
        if (!response.headersSent) fake.answer(response, request, 500, fake.errorBody(request, 500, 'Internal Server Error', [{ message: String(error) }]));
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    return fake;
  }

  /** The base URL an adapter is given (…/raas/v2, as Tango's). */
  get url(): string {
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}/raas/v2`;
  }

  /** The credentials a workspace would store to pay through this fake. */
  credentials(extra: Record<string, string> = {}): Record<string, string> {
    return {
      platformName: this.platformName,
      platformKey: this.platformKey,
      customerIdentifier: this.customerIdentifier,
      accountIdentifier: this.accountIdentifier,
      utid: 'U000USD',
      utidEUR: 'U000EUR',
      utidGBP: 'U000GBP',
      utidCAD: 'U000CAD',
      utidAUD: 'U000AUD',
      utidJPY: 'U000JPY',
      webhookSecret: this.webhookSecret,
      ...extra,
    };
  }

  /** Makes the next `times` requests of `operation` (after any faults already queued) fail with `fault`. */
  injectFault(operation: TangoFakeOperation, fault: TangoFakeFault, times = 1): void {
    for (let count = 0; count < times; count++) this.faults[operation].push(fault);
  }

  /** Forgets the faults still queued. */
  clearFaults(): void {
    for (const operation of Object.keys(this.faults) as TangoFakeOperation[]) this.faults[operation] = [];
  }

  /** How many orders Tango placed (and charged), counted as they are created: one per externalRefID when idempotency holds. */
  get payments(): number {
    return this.sequence;
  }

  orderOf(externalRefID: string): TangoFakeOrder {
    const order = this.orders.get(externalRefID);
    if (!order) throw new Error(`The fake has no order ${externalRefID}`);
    return order;
  }

  /** Changes an order's (first) line item, as Tango would after a redemption, a bounce or five days. */
  setLineItem(externalRefID: string, patch: Partial<TangoFakeLineItem>): void {
    Object.assign(this.orderOf(externalRefID).lineItems[0]!, patch);
  }

  /**
   * A webhook delivery of `kind` about the order of `externalRefID`: signed with the webhook secret,
   * or with another key (`forge`), or the exact bytes of an earlier delivery (`replayOf`: its eventId).
   */
  webhook(kind: TangoWebhookKind, externalRefID: string, options: { forge?: boolean; replayOf?: string; occurredAt?: Date } = {}): TangoWebhookDelivery {
    if (options.replayOf) {
      const earlier = this.deliveries.get(options.replayOf);
      if (!earlier) throw new Error(`No delivery ${options.replayOf} to replay`);
      return { eventId: earlier.eventId, headers: { ...earlier.headers }, rawBody: Buffer.from(earlier.rawBody) };
    }
    const order = this.orders.get(externalRefID);
    const eventId = randomUUID();
    const occurredAt = (options.occurredAt ?? new Date()).toISOString();
    const base = { eventId, revision: ++this.revision, eventOccurredAt: occurredAt };
    let payload: Record<string, unknown>;
    if (kind === 'async-order-failed' || kind === 'async-order-successful') {
      payload = {
        ...base,
        category: 'ORDER',
        eventType: 'AsyncOrderStatus',
        eventData: {
          externalRefID,
          status: kind === 'async-order-failed' ? 'FAILED' : 'SUCCESSFUL',
          totalLineItems: 1,
          failedLineItems: kind === 'async-order-failed' ? 1 : 0,
          successfulLineItems: kind === 'async-order-failed' ? 0 : 1,
          referenceOrderId: order?.referenceOrderID ?? 'RA000000-0000-00',
          accountIdentifier: this.accountIdentifier,
          customerIdentifier: this.customerIdentifier,
        },
      };
    } else if (kind === 'item-availability') {
      payload = { ...base, category: 'ITEM', eventType: 'itemAvailability', eventData: { utid: 'U000USD', status: 'TEMPORARILY_UNAVAILABLE' } };
    } else {
      const status = { redeemed: 'FULL_REDEMPTION', 'partially-redeemed': 'PARTIAL_REDEMPTION', activated: 'ACTIVATED', frozen: 'FROZEN', cancelled: 'CANCELLED' }[kind];
      payload = {
        ...base,
        category: 'REWARD',
        eventType: 'RewardStatus',
        eventData: {
          referenceOrderID: order?.referenceOrderID ?? 'RA000000-0000-00',
          referenceLineItemID: order?.lineItems[0]?.referenceLineItemID ?? 'LI000000-0000-00',
          externalRefID,
          status,
        },
      };
    }
    const rawBody = Buffer.from(JSON.stringify(payload));
    const key = options.forge ? randomBytes(32).toString('base64') : this.webhookSecret;
    const delivery = { eventId, headers: { 'content-type': 'application/json', accept: 'application/json', 'x-signed-payload': tangoWebhookSignature(key, rawBody) }, rawBody };
    if (!options.forge) this.deliveries.set(eventId, delivery);
    return delivery;
  }

  /** POSTs a delivery to a URL, as Tango does; returns the status the receiver answered. */
  async deliver(url: string, delivery: TangoWebhookDelivery): Promise<number> {
    const response = await fetch(url, { method: 'POST', headers: delivery.headers, body: new Uint8Array(delivery.rawBody) });
    await response.arrayBuffer();
    return response.status;
  }

  async close(): Promise<void> {
    for (const response of this.held) response.destroy();
    this.held.clear();
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  private async handle(request: http.IncomingMessage, response: http.ServerResponse): Promise<void> {
    const chunks: Buffer[] = [];
    for await (const chunk of request) chunks.push(chunk as Buffer);
    const raw = Buffer.concat(chunks).toString('utf8');
    const url = new URL(request.url ?? '/', 'http://fake');
    const path = url.pathname.replace(/^\/raas\/v2/, '');

    if (request.headers.authorization !== `Basic ${Buffer.from(`${this.platformName}:${this.platformKey}`).toString('base64')}`) {
      return this.answer(response, request, 401, this.errorBody(request, 401, 'Unauthorized', [{ message: 'Full authentication is required to access this resource', i18nKey: '401.001' }]));
    }
    let body: Record<string, unknown> = {};
    if (raw) {
      try {
        body = JSON.parse(raw) as Record<string, unknown>;
      } catch {
        return this.answer(response, request, 400, this.errorBody(request, 400, 'Bad Request', [{ message: 'Malformed JSON request' }]));
      }
    }

    let operation: TangoFakeOperation;
    let work: () => { status: number; body: unknown };
    const resend = /^\/orders\/([^/]+)\/resends$/.exec(path);
    const cancel = /^\/lineItems\/([^/]+)\/cancel$/.exec(path);
    const orderById = /^\/orders\/([^/]+)$/.exec(path);
    if (request.method === 'POST' && path === '/orders') {
      operation = 'order';
      work = () => this.createOrder(request, body);
    } else if (request.method === 'POST' && resend) {
      operation = 'resend';
      work = () => this.resendOrder(request, decodeURIComponent(resend[1]!), body);
    } else if (request.method === 'POST' && cancel) {
      operation = 'cancel';
      work = () => this.cancelLineItem(request, decodeURIComponent(cancel[1]!), body);
    } else if (request.method === 'GET' && path === '/orders') {
      operation = 'lookup';
      work = () => this.listOrders(url.searchParams);
    } else if (request.method === 'GET' && orderById) {
      operation = 'lookup';
      work = () => this.getOrder(request, decodeURIComponent(orderById[1]!));
    } else if (request.method === 'GET' && path === '/lineItems') {
      operation = 'lookup';
      work = () => this.listLineItems(url.searchParams);
    } else {
      return this.answer(response, request, 404, this.errorBody(request, 404, 'Not Found', [{ message: `No ${request.method} ${path}` }]));
    }

    const fault = this.faults[operation].shift();
    if (fault === 'hang-after-work') work();
    if (fault === 'hang' || fault === 'hang-after-work') {
      this.held.add(response);
      this.requests.push({ method: request.method ?? '', path, status: 'hung' });
      response.on('close', () => this.held.delete(response));
      return;
    }
    if (fault === 'error-before-work') return this.answer(response, request, 503, this.errorBody(request, 503, 'Service Unavailable', [{ message: 'Service unavailable (injected)' }]));
    if (fault === 'rate-limit') return this.answer(response, request, 429, this.errorBody(request, 429, 'Too Many Requests', [{ message: 'Rate limit exceeded (injected)' }]));
    if (fault === 'refuse') {
      return this.answer(response, request, 400, this.errorBody(request, 400, 'Bad Request', [{ path: 'utid', code: 400500, i18nKey: '422.024', message: 'Refused (injected)' }]));
    }
    const result = work();
    if (fault === 'error-after-work') return this.answer(response, request, 500, this.errorBody(request, 500, 'Internal Server Error', [{ message: 'Internal error after the work (injected)' }]));
    this.answer(response, request, result.status, result.body);
  }

  private createOrder(request: http.IncomingMessage, body: Record<string, unknown>): { status: number; body: unknown } {
    const problems: { path: string; message: string; i18nKey?: string }[] = [];
    const { accountIdentifier, customerIdentifier, utid, amount, externalRefID, sendEmail } = body;
    const recipient = (body.recipient ?? {}) as TangoFakeOrder['recipient'];
    if (customerIdentifier !== this.customerIdentifier) problems.push({ path: 'customerIdentifier', message: 'customerIdentifier is unknown on this platform' });
    if (accountIdentifier !== this.accountIdentifier) problems.push({ path: 'accountIdentifier', message: 'accountIdentifier is unknown for this customer' });
    if (typeof sendEmail !== 'boolean') problems.push({ path: 'sendEmail', message: 'sendEmail is required' });
    if (externalRefID !== undefined && (typeof externalRefID !== 'string' || !/^[A-Za-z0-9]{1,100}$/.test(externalRefID))) {
      problems.push({ path: 'externalRefID', message: 'externalRefID must be at most 100 alphanumeric characters' });
    }
    if (problems.length === 0 && typeof externalRefID === 'string') {
      // Tango's idempotency: the first order for this externalRefID, whatever was asked this time.
      const existing = this.orders.get(externalRefID);
      if (existing) return { status: 200, body: this.orderView(existing) };
    }
    const item = typeof utid === 'string' ? this.catalog.get(utid) : undefined;
    if (!item) problems.push({ path: 'utid', message: `utid ${String(utid)} is not in the platform catalog`, i18nKey: '422.024' });
    if (typeof amount !== 'number' || !Number.isFinite(amount)) problems.push({ path: 'amount', message: 'amount is required' });
    else if (item) {
      const decimals = DECIMALS[item.currencyCode] ?? 2;
      if (Math.round(amount * 10 ** decimals) / 10 ** decimals !== amount) problems.push({ path: 'amount', message: `amount has more than ${decimals} decimals for ${item.currencyCode}` });
      if (amount < item.minValue || amount > item.maxValue) problems.push({ path: 'amount', message: `amount must be between ${item.minValue} and ${item.maxValue} ${item.currencyCode}` });
    }
    if (sendEmail === true && (!recipient.email || !/^[^@\s]+@[^@\s]+$/.test(recipient.email))) problems.push({ path: 'recipient.email', message: 'recipient email is required when sendEmail is true' });
    if (sendEmail === true && !recipient.firstName) problems.push({ path: 'recipient.firstName', message: 'recipient firstName is required when sendEmail is true' });
    if ((recipient.firstName?.length ?? 0) > 100 || (recipient.lastName?.length ?? 0) > 100) problems.push({ path: 'recipient', message: 'names are at most 100 characters' });
    if (problems.length > 0) return { status: 400, body: this.errorBody(request, 400, 'Bad Request', problems.map((problem) => ({ code: 400000, ...problem }))) };
    if ((amount as number) > this.balance) return { status: 402, body: this.errorBody(request, 402, 'Payment Required', [{ path: 'amount', message: 'Insufficient funds in the account' }]) };
    this.balance -= amount as number;

    const sequence = ++this.sequence;
    const order: TangoFakeOrder = {
      referenceOrderID: `RA${String(sequence).padStart(6, '0')}-${randomBytes(2).toString('hex')}-00`,
      externalRefID: typeof externalRefID === 'string' ? externalRefID : `req-${randomUUID()}`,
      accountIdentifier: this.accountIdentifier,
      customerIdentifier: this.customerIdentifier,
      utid: utid as string,
      amount: amount as number,
      currencyCode: item!.currencyCode,
      recipient,
      sendEmail: sendEmail as boolean,
      status: 'COMPLETE',
      createdAt: new Date().toISOString(),
      lineItems: [
        {
          referenceLineItemID: `LI${String(sequence).padStart(6, '0')}-${randomBytes(2).toString('hex')}-01`,
          status: 'COMPLETE',
          rewardStatus: 'ACTIVE',
          emailStatus: sendEmail ? 'SENT' : 'NOT_DELIVERED',
          canCancel: item!.choiceProduct,
        },
      ],
      resends: [],
    };
    this.orders.set(order.externalRefID, order);
    this.createdPerExternalRefId.set(order.externalRefID, (this.createdPerExternalRefId.get(order.externalRefID) ?? 0) + 1);
    return { status: 201, body: this.orderView(order) };
  }

  private findByReference(referenceOrderID: string): TangoFakeOrder | undefined {
    for (const order of this.orders.values()) if (order.referenceOrderID === referenceOrderID) return order;
    return undefined;
  }

  private getOrder(request: http.IncomingMessage, referenceOrderID: string): { status: number; body: unknown } {
    const order = this.findByReference(referenceOrderID);
    if (!order) return { status: 404, body: this.errorBody(request, 404, 'Not Found', [{ message: `Order ${referenceOrderID} not found` }]) };
    return { status: 200, body: this.orderView(order) };
  }

  private listOrders(query: URLSearchParams): { status: number; body: unknown } {
    const orders = [...this.orders.values()].filter(
      (order) =>
        (!query.get('externalRefID') || order.externalRefID === query.get('externalRefID')) &&
        (!query.get('accountIdentifier') || order.accountIdentifier === query.get('accountIdentifier')) &&
        (!query.get('customerIdentifier') || order.customerIdentifier === query.get('customerIdentifier')),
    );
    return { status: 200, body: { page: { number: 0, elementsPerBlock: 10, resultCount: Math.min(orders.length, 10), totalCount: orders.length }, orders: orders.slice(0, 10).map((order) => this.orderView(order)) } };
  }

  private listLineItems(query: URLSearchParams): { status: number; body: unknown } {
    const referenceOrderID = query.get('referenceOrderID');
    const orders = [...this.orders.values()].filter((order) => !referenceOrderID || order.referenceOrderID === referenceOrderID);
    const lineItems = orders.flatMap((order) =>
      order.lineItems.map((item) => ({
        referenceLineItemID: item.referenceLineItemID,
        referenceOrderID: order.referenceOrderID,
        externalRefID: order.externalRefID,
        status: item.status,
        orderStatus: order.status,
        emailStatus: item.emailStatus,
        rewardStatus: item.rewardStatus,
        canCancel: item.canCancel && item.status === 'COMPLETE' && item.rewardStatus !== 'FULL_REDEMPTION' && item.rewardStatus !== 'PARTIAL_REDEMPTION',
        amountIssued: { value: order.amount, currencyCode: order.currencyCode, exchangeRate: 1, fee: 0, total: order.amount },
        utid: order.utid,
      })),
    );
    return { status: 200, body: { page: { number: 0, elementsPerBlock: 50, resultCount: lineItems.length, totalCount: lineItems.length }, lineItems } };
  }

  private resendOrder(request: http.IncomingMessage, referenceOrderID: string, body: Record<string, unknown>): { status: number; body: unknown } {
    const order = this.findByReference(referenceOrderID);
    if (!order) return { status: 404, body: this.errorBody(request, 404, 'Not Found', [{ message: `Order ${referenceOrderID} not found` }]) };
    if (order.lineItems.every((item) => item.status === 'CANCELLED')) {
      return { status: 400, body: this.errorBody(request, 400, 'Bad Request', [{ message: 'A cancelled reward cannot be resent' }]) };
    }
    const email = typeof body.newEmail === 'string' ? body.newEmail : order.recipient.email;
    if (!email) return { status: 400, body: this.errorBody(request, 400, 'Bad Request', [{ path: 'newEmail', message: 'The order has no email to resend to' }]) };
    const resend = { id: order.resends.length + 1, email, createdAt: new Date().toISOString() };
    order.resends.push(resend);
    return { status: 201, body: resend };
  }

  private cancelLineItem(request: http.IncomingMessage, referenceLineItemID: string, body: Record<string, unknown>): { status: number; body: unknown } {
    const order = [...this.orders.values()].find((candidate) => candidate.lineItems.some((item) => item.referenceLineItemID === referenceLineItemID));
    const item = order?.lineItems.find((candidate) => candidate.referenceLineItemID === referenceLineItemID);
    if (!order || !item) return { status: 404, body: this.errorBody(request, 404, 'Not Found', [{ message: `Line item ${referenceLineItemID} not found` }]) };
    if (typeof body.reasonCode !== 'string') return { status: 400, body: this.errorBody(request, 400, 'Bad Request', [{ path: 'reasonCode', message: 'reasonCode is required' }]) };
    if (body.reasonCode === 'OTHER' && typeof body.otherReason !== 'string') {
      return { status: 400, body: this.errorBody(request, 400, 'Bad Request', [{ path: 'otherReason', message: 'otherReason is required when reasonCode is OTHER' }]) };
    }
    const redeemed = item.rewardStatus === 'FULL_REDEMPTION' || item.rewardStatus === 'PARTIAL_REDEMPTION';
    if (item.status === 'CANCELLED' || !item.canCancel || redeemed) {
      return { status: 400, body: this.errorBody(request, 400, 'Bad Request', [{ message: 'Only a fully unredeemed Choice Product within five days of issue can be cancelled' }]) };
    }
    item.status = 'CANCELLED';
    item.rewardStatus = 'CANCELLED';
    item.cancelReason = { reasonCode: body.reasonCode, ...(typeof body.otherReason === 'string' ? { otherReason: body.otherReason } : {}) };
    if (order.lineItems.every((candidate) => candidate.status === 'CANCELLED')) order.status = 'CANCELLED';
    return { status: 202, body: { referenceLineItemID, status: 'CANCELLED' } };
  }

  private orderView(order: TangoFakeOrder): Record<string, unknown> {
    const item = this.catalog.get(order.utid);
    const money = { value: order.amount, currencyCode: order.currencyCode, exchangeRate: 1, fee: 0, total: order.amount };
    return {
      referenceOrderID: order.referenceOrderID,
      externalRefID: order.externalRefID,
      customerIdentifier: order.customerIdentifier,
      accountIdentifier: order.accountIdentifier,
      accountNumber: 'A00000001',
      amountCharged: money,
      denomination: { value: order.amount, currencyCode: order.currencyCode },
      utid: order.utid,
      rewardName: item?.rewardName ?? order.utid,
      sender: {},
      recipient: order.recipient,
      sendEmail: order.sendEmail,
      status: order.status,
      campaign: '',
      emailSubject: '',
      message: '',
      etid: '',
      createdAt: order.createdAt,
      reward: { credentials: {}, credentialList: [], redemptionInstructions: '' },
    };
  }

  private errorBody(request: http.IncomingMessage, httpCode: number, httpPhrase: string, errors: { path?: string; code?: number; i18nKey?: string; message: string }[]): Record<string, unknown> {
    return { timestamp: new Date().toISOString(), requestId: randomUUID(), path: request.url ?? '', httpCode, httpPhrase, errors };
  }

  private answer(response: http.ServerResponse, request: http.IncomingMessage, status: number, body: unknown): void {
    this.requests.push({ method: request.method ?? '', path: (request.url ?? '').replace(/^\/raas\/v2/, ''), status });
    const text = JSON.stringify(body);
    response.writeHead(status, { 'content-type': 'application/json', 'x-request-id': randomUUID(), 'content-length': Buffer.byteLength(text) });
    response.end(text);
  }
}
