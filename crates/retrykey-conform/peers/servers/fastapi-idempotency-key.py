"""fastapi-idempotency-key in front of the payments handler, on Starlette and uvicorn.

The README's "Global ASGI Middleware" setup: `IdempotencyMiddleware` with `MemoryBackend()`,
every other argument at its default (the README's example spells out two of them,
`header_name="Idempotency-Key"` and `default_ttl=86400`, which are the defaults).
"""

import asyncio

import uvicorn
from fastapi_idempotency_key import IdempotencyMiddleware, MemoryBackend
from starlette.applications import Starlette
from starlette.middleware import Middleware
from starlette.responses import Response
from starlette.routing import Route

from payments import Payments, port

payments = Payments()


def respond(status, headers, body):
    response = Response(body, status_code=status)
    for name, value in headers:
        response.headers[name] = value
    return response


async def pay(request):
    await asyncio.sleep(Payments.delay_seconds(request.headers))
    body = await request.body()
    return respond(*payments.pay(request.headers, body))


async def count(request):
    return respond(*payments.count())


app = Starlette(
    routes=[
        Route("/payments", pay, methods=["POST"]),
        Route("/payments/count", count, methods=["GET"]),
    ],
    middleware=[Middleware(IdempotencyMiddleware, backend=MemoryBackend())],
)

if __name__ == "__main__":
    uvicorn.run(app, host="127.0.0.1", port=port(), log_level="warning")
