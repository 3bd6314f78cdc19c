// The lab's payments handler, for the Node servers: the same answers as
// `crates/retrykey-http/src/payments.rs`, with no idempotency of its own.
//
// - POST /payments {"amount": N}: 201 {"payment": ID}, Location /payments/ID, JSON.
// - GET /payments/count: 200 {"charges": C}.
// - X-Delay-Ms: N sleeps N ms (at most 60 s) before anything else.
// - X-Flaky: V answers 500 to the first request with each distinct V, before charging.
// - X-Panic: V throws in the first request with each distinct V, before charging: what the
//   caller gets is the framework's.
// - X-Set-Cookie: any value makes the answer set a cookie (receipt=ID).
'use strict';

const PROBLEM = 'application/problem+json';

class Payments {
  constructor() {
    this.charges = 0;
    this.flakySeen = new Set();
  }

  // What a POST /payments gets: { status, headers, body } with body a JSON value.
  async pay(headers, body) {
    const delay = Math.min(Number.parseInt(headers['x-delay-ms'] ?? '0', 10) || 0, 60000);
    if (delay > 0) {
      await new Promise((resolve) => setTimeout(resolve, delay));
    }
    const panic = headers['x-panic'];
    if (panic !== undefined && !this.flakySeen.has(`panic ${panic}`)) {
      this.flakySeen.add(`panic ${panic}`);
      throw new Error('the request asked the payments handler to throw (X-Panic)');
    }
    const token = headers['x-flaky'];
    if (token !== undefined && !this.flakySeen.has(token)) {
      this.flakySeen.add(token);
      return problem(500, 'database-unavailable', 'Database unavailable');
    }
    const amount = body && typeof body === 'object' ? body.amount : undefined;
    if (!Number.isSafeInteger(amount) || amount <= 0) {
      return problem(400, 'invalid-payment', 'Expected a JSON body {"amount": N} with N a positive integer');
    }
    this.charges += 1;
    const id = this.charges;
    const answer = { 'Content-Type': 'application/json', Location: `/payments/${id}` };
    if (headers['x-set-cookie'] !== undefined) {
      answer['Set-Cookie'] = `receipt=${id}; Path=/; HttpOnly`;
    }
    return { status: 201, headers: answer, body: { payment: id } };
  }

  count() {
    return { charges: this.charges };
  }
}

function problem(status, slug, title) {
  return {
    status,
    headers: { 'Content-Type': PROBLEM },
    body: { type: `urn:retrykey:problem:${slug}`, title, status },
  };
}

// The port: the first argument, else $PORT.
function port() {
  const value = Number.parseInt(process.argv[2] ?? process.env.PORT ?? '', 10);
  if (!Number.isInteger(value) || value <= 0) {
    throw new Error('usage: node SERVER.js PORT (or PORT=... in the environment)');
  }
  return value;
}

module.exports = { Payments, port };
