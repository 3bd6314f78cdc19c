"""The payments handler served by Starlette and uvicorn, behind one ASGI middleware: the glue
the Starlette-based servers share, so that each of them names only its library and its setup.
"""

import asyncio

import uvicorn
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


def serve(middleware: Middleware):
    """Serves POST /payments and GET /payments/count behind `middleware` on 127.0.0.1."""
    app = Starlette(
        routes=[
            Route("/payments", pay, methods=["POST"]),
            Route("/payments/count", count, methods=["GET"]),
        ],
        middleware=[middleware],
    )
    uvicorn.run(app, host="127.0.0.1", port=port(), log_level="warning")
