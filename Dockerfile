# syntax=docker/dockerfile:1

# The Baton worker image. Its entrypoint is the worker process; the same image runs the demo
# producer and the `baton` command line, web console included. All are configured by environment
# (docs/configuration.md: "Worker process environment"):
#
#   docker build -t baton-worker .
#   docker run -e BATON_TRANSPORT_URL=nats://… -e BATON_STORE_URL=redis://… \
#     -e BATON_WORKFLOWS=./apps/worker/dist/examples/orders.js baton-worker
#   docker run --entrypoint node -e BATON_TRANSPORT_URL=nats://… --no-healthcheck \
#     baton-worker apps/worker/dist/producer-main.js
#   docker run --entrypoint baton -p 8636:8636 -e BATON_TRANSPORT_URL=nats://… \
#     -e BATON_STORE_URL=redis://… -e BATON_CONSOLE_TOKEN=… --no-healthcheck \
#     baton-worker console --host 0.0.0.0
#
# Your own workflows: build an image FROM this one that copies your compiled module (and its
# dependencies) in, and point BATON_WORKFLOWS at it.

# Node 22 LTS: the project's floor (`engines` in package.json), and the Node CI runs the tests on
# when the machine's own is older (.ci/node.sh). `--build-arg NODE_VERSION=24` builds on a newer LTS.
ARG NODE_VERSION=22

# ---------------------------------------------------------------------------------------------
# build: the full toolchain (dev dependencies included) compiles the workspace packages the worker
# runs. The manifests are copied before the sources, so the `npm ci` layer is reused until a
# package.json or the lockfile changes. Only the workspaces on the worker's and the CLI's build
# paths are here: the worker app, the CLI, the console (whose front-end Vite builds here), the libs
# they depend on, and @baton/testing (a dev dependency, so it is on Nx's build path); npm ci accepts
# a lockfile that also lists workspaces left out (the demo, the checks).
# ---------------------------------------------------------------------------------------------
FROM node:${NODE_VERSION}-bookworm-slim AS build
WORKDIR /src
# Nx runs once and exits: no daemon, no cloud.
ENV NX_DAEMON=false \
    NX_NO_CLOUD=true
COPY package.json package-lock.json .npmrc ./
COPY libs/client/package.json libs/client/
COPY libs/core/package.json libs/core/
COPY libs/host/package.json libs/host/
COPY libs/redis-kit/package.json libs/redis-kit/
COPY libs/store-postgres/package.json libs/store-postgres/
COPY libs/store-redis/package.json libs/store-redis/
COPY libs/telemetry/package.json libs/telemetry/
COPY libs/testing/package.json libs/testing/
COPY libs/transport-kafka/package.json libs/transport-kafka/
COPY libs/transport-nats/package.json libs/transport-nats/
COPY libs/transport-redis/package.json libs/transport-redis/
COPY libs/worker/package.json libs/worker/
COPY apps/worker/package.json apps/worker/
COPY apps/cli/package.json apps/cli/
COPY libs/console/package.json libs/console/
RUN npm ci --no-audit --no-fund
COPY tsconfig.base.json nx.json ./
COPY libs/ libs/
COPY apps/worker/ apps/worker/
COPY apps/cli/ apps/cli/
COPY libs/console/ libs/console/
# The worker app's build target depends on every dependency's build (`dependsOn: ["^build"]` in
# nx.json), so this compiles each lib to <lib>/dist (tsc -p tsconfig.build.json, plus the SQL
# migrations and Lua scripts the stores load at run time), then apps/worker/dist. The CLI's build
# adds libs/console/dist (its server, and the front-end in dist/public) and apps/cli/dist.
RUN npx nx run-many -t build --projects=@baton/worker-app,@baton/cli --outputStyle=static

# ---------------------------------------------------------------------------------------------
# runtime: production dependencies and compiled JavaScript only; no compiler, no sources, no dev
# tools. Each workspace package the worker imports at run time is a package.json (for npm's
# workspace link and the package's `exports`: without the custom `@baton/source` condition Node
# resolves `default`, i.e. dist) plus its dist from the build stage.
# ---------------------------------------------------------------------------------------------
FROM node:${NODE_VERSION}-bookworm-slim AS runtime
# A larger young generation (32 MiB semi-spaces instead of 16): a busy worker makes many short-lived
# objects per durable step, and V8 then spends half as much time in garbage collection for ~20 MiB
# more memory (docs/performance.md). `npm run bench` starts its workers with the same NODE_OPTIONS.
ENV NODE_ENV=production \
    NODE_OPTIONS=--max-semi-space-size=32
WORKDIR /app
# A fixed non-root identity (uid/gid 10001), so volume permissions and Kubernetes runAsUser can rely on it.
RUN groupadd --gid 10001 baton \
 && useradd --uid 10001 --gid baton --home-dir /app --no-create-home --shell /usr/sbin/nologin baton
COPY package.json package-lock.json .npmrc ./
COPY libs/client/package.json libs/client/
COPY libs/core/package.json libs/core/
COPY libs/host/package.json libs/host/
COPY libs/redis-kit/package.json libs/redis-kit/
COPY libs/store-postgres/package.json libs/store-postgres/
COPY libs/store-redis/package.json libs/store-redis/
COPY libs/telemetry/package.json libs/telemetry/
COPY libs/transport-kafka/package.json libs/transport-kafka/
COPY libs/transport-nats/package.json libs/transport-nats/
COPY libs/transport-redis/package.json libs/transport-redis/
COPY libs/worker/package.json libs/worker/
COPY apps/worker/package.json apps/worker/
COPY apps/cli/package.json apps/cli/
COPY libs/console/package.json libs/console/
# Only what @baton/worker-app and @baton/cli (with @baton/console) need to run. No install scripts:
# nothing in this tree compiles native code, and an image build should not run third-party code it
# does not need. The front-end is built files (dist/public): Preact and Vite are not installed.
RUN npm ci --omit=dev --workspace @baton/worker-app --workspace @baton/cli --workspace @baton/console \
      --ignore-scripts --no-audit --no-fund \
 && npm cache clean --force
COPY --from=build /src/libs/client/dist libs/client/dist
COPY --from=build /src/libs/core/dist libs/core/dist
COPY --from=build /src/libs/host/dist libs/host/dist
COPY --from=build /src/libs/redis-kit/dist libs/redis-kit/dist
COPY --from=build /src/libs/store-postgres/dist libs/store-postgres/dist
COPY --from=build /src/libs/store-redis/dist libs/store-redis/dist
COPY --from=build /src/libs/telemetry/dist libs/telemetry/dist
COPY --from=build /src/libs/transport-kafka/dist libs/transport-kafka/dist
COPY --from=build /src/libs/transport-nats/dist libs/transport-nats/dist
COPY --from=build /src/libs/transport-redis/dist libs/transport-redis/dist
COPY --from=build /src/libs/worker/dist libs/worker/dist
COPY --from=build /src/apps/worker/dist apps/worker/dist
COPY --from=build /src/libs/console/dist libs/console/dist
COPY --from=build /src/apps/cli/dist apps/cli/dist
# `baton` on the PATH (the CLI's bin; its build makes main.js executable), e.g. a Kubernetes
# container's command ["baton", "console", "--host", "0.0.0.0"] (helm/baton-worker: console.enabled).
RUN ln -s /app/apps/cli/dist/main.js /usr/local/bin/baton

# Files stay owned by root: the process only reads them.
USER 10001:10001
# /healthz, /readyz and /metrics (BATON_HTTP_PORT, default 8080); 8636 is `baton console`.
EXPOSE 8080 8636
# Slim images have no curl or wget: node itself probes /healthz.
HEALTHCHECK --interval=10s --timeout=5s --start-period=30s --retries=3 \
  CMD ["node", "-e", "fetch('http://127.0.0.1:' + (process.env.BATON_HTTP_PORT || 8080) + '/healthz', { signal: AbortSignal.timeout(4000) }).then((r) => process.exit(r.ok ? 0 : 1), () => process.exit(1))"]
# SIGTERM makes the worker hand its runs to the others and exit 0 (the producer stops enqueuing).
STOPSIGNAL SIGTERM
ENTRYPOINT ["node", "apps/worker/dist/main.js"]
