"""fastapi-idempotency-key in front of the payments handler, on Starlette and uvicorn.

The README's "Global ASGI Middleware" setup: `IdempotencyMiddleware` with `MemoryBackend()`,
every other argument at its default (the README's example spells out two of them,
`header_name="Idempotency-Key"` and `default_ttl=86400`, which are the defaults).
"""

from fastapi_idempotency_key import IdempotencyMiddleware, MemoryBackend
from starlette.middleware import Middleware

from starlette_payments import serve

if __name__ == "__main__":
    serve(Middleware(IdempotencyMiddleware, backend=MemoryBackend()))
