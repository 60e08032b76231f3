# syntax=docker/dockerfile:1
# openapi-supergraph: one image for every service of the layer (gateway, subgraphs, emulator).
# The command chooses the service (see compose.yaml):
#   node dist/services/gateway.js              the gateway (PORT, SUBGRAPH_<NAME>_URL, REDIS_URL …)
#   node dist/services/subgraph.js <name>…     subgraph servers (SUBGRAPH_PORT, LAYER_SECRET, PUBLIC_URL …)
#   node dist/services/emulator.js             the emulator of the REST suite (EMULATOR_PORT)
#   node dist/main.js                          everything in one process (the default)
# Build: docker build -t openapi-supergraph .

# Node 24 LTS, the reference the tests run on; the floor is 22.15 (what the dependencies declare).
ARG NODE_VERSION=24

# ---- build: dependencies with dev tools, generated types, type-check, JavaScript in dist/ ----
FROM node:${NODE_VERSION}-bookworm-slim AS build
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --no-audit --no-fund
COPY . .
RUN npm run codegen && npm run typecheck && npm run build

# ---- runtime: production dependencies and dist/ only, as an unprivileged user ----
FROM node:${NODE_VERSION}-bookworm-slim AS runtime
ENV NODE_ENV=production \
    # Heap cap: keep it under the container's memory limit (about 75 % of it), so that Node
    # collects before the kernel kills. Override per service (compose.yaml) or at run time.
    NODE_OPTIONS=--max-old-space-size=384 \
    HOST=0.0.0.0 \
    SUBGRAPH_HOST=0.0.0.0 \
    EMULATOR_HOST=0.0.0.0 \
    PORT=4000 \
    # Above the layer's longest wait in a request (downloads 60 s); give the orchestrator's stop
    # grace period more (compose.yaml: 90 s).
    SHUTDOWN_TIMEOUT_MS=75000 \
    HEALTHCHECK_URL=http://127.0.0.1:4000/healthz \
    # The embedded store (no REDIS_URL): its database and the self-made secret (0600) live here.
    DATA_DIR=/data
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --omit=dev --no-audit --no-fund && npm cache clean --force
COPY --from=build /app/dist ./dist
# The image's node user (uid 1000) owns nothing it could rewrite: code and dependencies stay root's;
# it owns only the data directory, a volume, so the embedded store outlives the container.
RUN mkdir -p /data && chown node:node /data && chmod 700 /data
VOLUME /data
USER node
EXPOSE 4000 4001 4010
# Liveness at HEALTHCHECK_URL (the gateway's /healthz; a subgraph server's is on SUBGRAPH_PORT, the
# emulator's on EMULATOR_PORT); compose.yaml gives each service its own check on /readyz.
HEALTHCHECK --interval=15s --timeout=3s --start-period=20s --retries=3 \
  CMD ["node", "-e", "fetch(process.env.HEALTHCHECK_URL).then(r=>process.exit(r.ok?0:1),()=>process.exit(1))"]
# SIGTERM reaches node directly (exec form, PID 1): the service drains within SHUTDOWN_TIMEOUT_MS.
STOPSIGNAL SIGTERM
CMD ["node", "dist/main.js"]
