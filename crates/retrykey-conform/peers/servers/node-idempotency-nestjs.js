// @node-idempotency/nestjs in front of the payments handler, as its README sets it up:
// `NodeIdempotencyModule.forRootAsync({ storage: { adapter: "memory" } })` with no other
// options, and `@Idempotent()` on the controller. Plain JavaScript: each decorator of the
// README is applied by hand, as TypeScript would compile it.
'use strict';

require('reflect-metadata');
const { Module, Controller, Post, Get, Req, Res, HttpCode, HttpException } = require('@nestjs/common');
const { NestFactory } = require('@nestjs/core');
const { NodeIdempotencyModule, Idempotent } = require('@node-idempotency/nestjs');
const { Payments, port } = require('./payments');

const payments = new Payments();

class PaymentsController {
  // A Nest handler answers an error by throwing it; a success is the value it returns.
  async pay(req, res) {
    const answer = await payments.pay(req.headers, req.body);
    if (answer.status >= 400) {
      throw new HttpException(answer.body, answer.status);
    }
    res.set(answer.headers);
    return answer.body;
  }

  count() {
    return payments.count();
  }
}

function method(target, name, ...decorators) {
  const descriptor = Object.getOwnPropertyDescriptor(target.prototype, name);
  Reflect.decorate(decorators, target.prototype, name, descriptor);
}
// The handler sets its own headers (Location) on the response and returns the body, so
// that the interceptor sees the value (`@Res({ passthrough: true })`).
Req()(PaymentsController.prototype, 'pay', 0);
Res({ passthrough: true })(PaymentsController.prototype, 'pay', 1);
method(PaymentsController, 'pay', Post(), HttpCode(201));
method(PaymentsController, 'count', Get('count'));
Reflect.decorate([Controller('payments'), Idempotent()], PaymentsController);

class AppModule {}
Reflect.decorate(
  [
    Module({
      imports: [NodeIdempotencyModule.forRootAsync({ storage: { adapter: 'memory' } })],
      controllers: [PaymentsController],
    }),
  ],
  AppModule,
);

async function main() {
  const app = await NestFactory.create(AppModule, { logger: false });
  await app.listen(port(), '127.0.0.1');
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
