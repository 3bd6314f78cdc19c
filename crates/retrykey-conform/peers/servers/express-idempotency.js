// express-idempotency in front of the payments handler, with the README's setup:
// `app.post('*', idempotency.idempotency())` and no options (in-memory adapter,
// default response and intent validators). The handler asks `isHit(req)` first, as
// the README's "Determine a idempotency hit in route handler" section tells it to.
'use strict';

const express = require('express');
const idempotency = require('express-idempotency');
const { Payments, port } = require('./payments');

const payments = new Payments();
const app = express();
app.use(express.json());
app.post('*', idempotency.idempotency());

// Express 4 hands a thrown error to its error handler only through `next`; before that, the
// README's "Report error in processing request" section has the handler tell the middleware
// (`reportError`), so that it forgets the key.
app.post('/payments', async (req, res, next) => {
  const service = idempotency.getSharedIdempotencyService();
  if (service.isHit(req)) {
    return;
  }
  try {
    const answer = await payments.pay(req.headers, req.body);
    res.status(answer.status).set(answer.headers).send(`${JSON.stringify(answer.body)}\n`);
  } catch (error) {
    await service.reportError(req);
    next(error);
  }
});

app.get('/payments/count', (req, res) => {
  res.status(200).type('application/json').send(`${JSON.stringify(payments.count())}\n`);
});

app.listen(port(), '127.0.0.1');
