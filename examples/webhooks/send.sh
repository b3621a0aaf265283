#!/bin/sh
# Sends one event to a Baton webhook, signed as Stripe signs (Stripe-Signature: t=<unix seconds>,
# v1=<hex HMAC-SHA256(secret, "<t>.<body>")>), with nothing but a shell, openssl and curl.
#   PAYMENTS_WEBHOOK_SECRET=… examples/webhooks/send.sh http://127.0.0.1:8787/v1/webhooks/payments '{"id":"evt_1",…}'
set -eu
url=${1:?usage: send.sh <webhook URL> <JSON event>}
body=${2:?usage: send.sh <webhook URL> <JSON event>}
secret=${PAYMENTS_WEBHOOK_SECRET:?set PAYMENTS_WEBHOOK_SECRET to the secret baton dev was started with}
t=$(date +%s)
sig=$(printf '%s.%s' "$t" "$body" | openssl dgst -sha256 -hmac "$secret" -r | cut -d' ' -f1)
curl -sS -w '\n' -X POST "$url" -H 'Content-Type: application/json' \
  -H "Stripe-Signature: t=$t,v1=$sig" --data-binary "$body"
