"""asgi-idempotency-header in front of the payments handler, on Starlette and uvicorn.

The README's second setup (`Middleware(IdempotencyHeaderMiddleware, backend=...)`, with
Starlette in FastAPI's place as it allows), no other arguments, and the package's
`MemoryBackend()`: the README's own example backend is Redis, which this run has not.
"""

from idempotency_header_middleware import IdempotencyHeaderMiddleware
from idempotency_header_middleware.backends import MemoryBackend
from starlette.middleware import Middleware

from starlette_payments import serve

if __name__ == "__main__":
    serve(Middleware(IdempotencyHeaderMiddleware, backend=MemoryBackend()))
