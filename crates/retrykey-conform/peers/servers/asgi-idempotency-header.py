"""asgi-idempotency-header in front of the payments handler, on Starlette and uvicorn.

The README's second setup (`Middleware(IdempotencyHeaderMiddleware, backend=...)`, with
Starlette in FastAPI's place as it allows), no other arguments, and the package's
`MemoryBackend()`: the README's own example backend is Redis, which this run has not.
"""

import asyncio

import uvicorn
from idempotency_header_middleware import IdempotencyHeaderMiddleware
from idempotency_header_middleware.backends import MemoryBackend
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
    middleware=[Middleware(IdempotencyHeaderMiddleware, backend=MemoryBackend())],
)

if __name__ == "__main__":
    uvicorn.run(app, host="127.0.0.1", port=port(), log_level="warning")
