"""django-idempotency-key in front of the payments handler, served by waitress.

The README's first setup: `idempotency_key.middleware.IdempotencyKeyMiddleware` in
MIDDLEWARE, no IDEMPOTENCY_KEY settings (so every default: MemoryKeyStorage, ThreadLock,
409 on a key seen before, BasicKeyEncoder).
"""

import time

import django
from django.conf import settings
from django.http import HttpResponse
from django.urls import path

from payments import Payments, port

settings.configure(
    DEBUG=False,
    ALLOWED_HOSTS=["127.0.0.1", "localhost"],
    ROOT_URLCONF=__name__,
    SECRET_KEY="retrykey-conform-peers",
    MIDDLEWARE=["idempotency_key.middleware.IdempotencyKeyMiddleware"],
    INSTALLED_APPS=[],
    DATABASES={},
)
django.setup()

payments = Payments()


def respond(status, headers, body):
    response = HttpResponse(body, status=status)
    for name, value in headers:
        response[name] = value
    return response


def pay(request):
    if request.method != "POST":
        return HttpResponse(status=405)
    time.sleep(Payments.delay_seconds(request.headers))
    return respond(*payments.pay(request.headers, request.body))


def count(request):
    return respond(*payments.count())


urlpatterns = [path("payments", pay), path("payments/count", count)]

if __name__ == "__main__":
    from django.core.wsgi import get_wsgi_application
    from waitress import serve

    serve(get_wsgi_application(), host="127.0.0.1", port=port(), threads=16, _quiet=True)
